/** Gemini stream parser: truncation, errors, blocked prompts, thoughts and streamed argument shapes. */
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../src/llm/adapter.js";
import {
  applyPartialArg,
  geminiAdapter,
  parseGenerateContentResponse,
  parseJsonPath,
} from "../../src/llm/gemini/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { sseEventsFor, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "gemini",
  id: "gemini-2.5-flash",
  protocol: "gemini",
  baseUrl: "https://generativelanguage.googleapis.com",
  apiKey: "k",
  contextWindow: 1048576,
};

function run(events: SseEvent[]): ModelEvent[] {
  const parser = geminiAdapter.createParser(model);
  const out: ModelEvent[] = [];
  for (const e of events) out.push(...parser.push(e));
  out.push(...parser.finish());
  return out;
}

const chunks = (...payloads: unknown[]): SseEvent[] => payloads.map((p) => ({ data: JSON.stringify(p) }));
const candidate = (parts: unknown[], finishReason?: string) => ({
  candidates: [{ content: { role: "model", parts }, ...(finishReason ? { finishReason } : {}) }],
});

describe("truncated streams", () => {
  it("reports provider_unavailable when no finishReason arrived", () => {
    const r = summarise(run(sseEventsFor("google--google-text.chunks.txt").slice(0, -1)));
    expect(r.done).toBeUndefined();
    expect(r.error?.error.code).toBe("provider_unavailable");
    expect(r.error?.error.message).toContain("ended early");
    expect(r.error?.error.retryable).toBe(true);
    // What did arrive is still reported, usage included.
    expect(r.text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    expect(r.usage?.outputTokens).toBe(23);
  });

  it("does not emit a streamed call that never closed", () => {
    const r = summarise(
      run(sseEventsFor("google--google-stream-tool-call-arguments.chunks.txt").slice(0, 3)),
    );
    expect(r.toolCalls).toEqual([]);
    expect(r.error?.error.code).toBe("provider_unavailable");
  });
});

describe("errors and blocked prompts", () => {
  it("turns an error payload into the final error event", () => {
    const out = run(
      chunks(candidate([{ text: "par" }]), {
        error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" },
      }),
    );
    const last = out.at(-1);
    expect(last?.type).toBe("error");
    if (last?.type !== "error") return;
    expect(last.error.code).toBe("provider_unavailable");
    expect(last.error.message).toContain("The model is overloaded.");
    expect(out.filter((e) => e.type === "error" || e.type === "done")).toHaveLength(1);
  });

  it("maps error statuses to codes", () => {
    const code = (error: unknown) => summarise(run(chunks({ error }))).error?.error.code;
    expect(code({ code: 429, message: "quota", status: "RESOURCE_EXHAUSTED" })).toBe("rate_limit");
    expect(code({ code: 403, message: "denied", status: "PERMISSION_DENIED" })).toBe("auth");
    expect(code({ code: 400, message: "bad", status: "INVALID_ARGUMENT" })).toBe("bad_request");
    expect(code({ code: 500, message: "oops" })).toBe("provider_unavailable");
  });

  it("ends with content_filter when the prompt is blocked", () => {
    const r = summarise(
      run(
        chunks({
          promptFeedback: { blockReason: "PROHIBITED_CONTENT" },
          usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
        }),
      ),
    );
    expect(r.done?.finishReason).toBe("content_filter");
    expect(r.done?.rawFinishReason).toBe("PROHIBITED_CONTENT");
    expect(r.usage).toEqual({ inputTokens: 12, outputTokens: 0, totalTokens: 12 });
  });

  it("maps finish reasons", () => {
    const finish = (reason: string) =>
      summarise(run(chunks(candidate([{ text: "x" }], reason)))).done?.finishReason;
    expect(finish("STOP")).toBe("stop");
    expect(finish("MAX_TOKENS")).toBe("length");
    for (const reason of ["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"]) {
      expect(finish(reason)).toBe("content_filter");
    }
    expect(finish("MALFORMED_FUNCTION_CALL")).toBe("other");
  });

  it("extracts messages from error bodies, also array-wrapped ones", () => {
    const body = '{"error":{"code":400,"message":"API key not valid.","status":"INVALID_ARGUMENT"}}';
    expect(geminiAdapter.errorMessage(400, body)).toBe("API key not valid. (INVALID_ARGUMENT)");
    expect(geminiAdapter.errorMessage(429, `[${body}]`)).toBe("API key not valid. (INVALID_ARGUMENT)");
    expect(geminiAdapter.errorMessage(502, "")).toContain("HTTP 502");
    expect(geminiAdapter.errorMessage(502, "upstream connect error")).toBe("upstream connect error");
  });
});

describe("parts", () => {
  it("reports thought parts as reasoning and keeps their signature on a text part", () => {
    const out = run(
      chunks(
        candidate([{ text: "Let me think.", thought: true }]),
        candidate([{ text: "", thought: true, thoughtSignature: "g-sig" }]),
        candidate([{ text: "Answer." }], "STOP"),
      ),
    );
    const r = summarise(out);
    expect(r.reasoning).toBe("Let me think.");
    expect(r.text).toBe("Answer.");
    expect(r.done?.message.content).toEqual([
      { type: "reasoning", text: "Let me think." },
      { type: "text", text: "", signature: "g-sig" },
      { type: "text", text: "Answer." },
    ]);
  });

  it("assembles streamed arguments of several types and nested paths", () => {
    const r = summarise(
      run(
        chunks(
          candidate([{ functionCall: { name: "plan", willContinue: true } }]),
          candidate([
            {
              functionCall: {
                partialArgs: [
                  { jsonPath: "$.title", stringValue: "Trip ", willContinue: true },
                  { jsonPath: "$.title", stringValue: "to Rome" },
                  { jsonPath: "$.days", numberValue: 3 },
                  { jsonPath: "$.flags.urgent", boolValue: true },
                  { jsonPath: "$.stops[1]", stringValue: "Florence" },
                  { jsonPath: "$['note text']", nullValue: null },
                ],
                willContinue: true,
              },
            },
          ]),
          candidate([{ functionCall: {} }], "STOP"),
        ),
      ),
    );
    expect(r.toolCalls).toHaveLength(1);
    expect(JSON.parse(r.toolCalls[0]?.arguments ?? "")).toEqual({
      title: "Trip to Rome",
      days: 3,
      flags: { urgent: true },
      stops: [null, "Florence"],
      "note text": null,
    });
    expect(r.done?.finishReason).toBe("tool_calls");
  });

  it("gives a call without args empty arguments and uses cached-token counts", () => {
    const r = summarise(
      run(
        chunks({
          ...candidate([{ functionCall: { name: "now" } }], "STOP"),
          usageMetadata: {
            promptTokenCount: 100,
            candidatesTokenCount: 4,
            totalTokenCount: 104,
            cachedContentTokenCount: 64,
          },
        }),
      ),
    );
    expect(r.toolCalls[0]).toMatchObject({ name: "now", arguments: "{}" });
    expect(r.usage).toEqual({ inputTokens: 100, outputTokens: 4, totalTokens: 104, cachedInputTokens: 64 });
  });

  it("ignores empty events", () => {
    const r = summarise(run([{ data: "" }, ...chunks(candidate([{ text: "hi" }], "STOP"))]));
    expect(r.text).toBe("hi");
  });
});

describe("parseJsonPath", () => {
  it("reads dotted, indexed and quoted keys", () => {
    expect(parseJsonPath("$.a.b[2]['c d'][\"e\"]")).toEqual(["a", "b", 2, "c d", "e"]);
    expect(parseJsonPath("a.b")).toBeUndefined();
    expect(parseJsonPath("$.a[")).toBeUndefined();
  });

  it("ignores pieces with unreadable paths", () => {
    const args: Record<string, unknown> = {};
    applyPartialArg(args, { jsonPath: "nope", stringValue: "x" });
    expect(args).toEqual({});
  });
});

describe("parseGenerateContentResponse", () => {
  it("reads a complete non-streaming response", () => {
    const r = summarise(
      parseGenerateContentResponse({
        candidates: [{ content: { role: "model", parts: [{ text: "Hello!" }] }, finishReason: "STOP" }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 },
        responseId: "resp-1",
      }),
    );
    expect(r.text).toBe("Hello!");
    expect(r.done?.responseId).toBe("resp-1");
    expect(r.usage).toEqual({ inputTokens: 3, outputTokens: 2, totalTokens: 5 });
  });
});
