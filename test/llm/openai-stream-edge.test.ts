/** Stream cases the recorded fixtures do not cover: parallel calls, errors, endings, vendor field variants. */
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../src/llm/adapter.js";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "openai",
  id: "gpt-4o",
  protocol: "openai",
  baseUrl: "https://api.openai.com/v1",
  apiKey: "sk-test",
  contextWindow: 128000,
};

/** Feeds chunk objects (or raw data strings) through a fresh parser, then `[DONE]` unless told not to. */
function run(chunks: Array<object | string | SseEvent>, opts: { done?: boolean } = {}): ModelEvent[] {
  const parser = openaiAdapter.createParser(model);
  const events: ModelEvent[] = [];
  const all = opts.done === false ? chunks : [...chunks, "[DONE]"];
  for (const c of all) {
    const event: SseEvent =
      typeof c === "string" ? { data: c } : "data" in c ? (c as SseEvent) : { data: JSON.stringify(c) };
    events.push(...parser.push(event));
  }
  events.push(...parser.finish());
  return events;
}

const delta = (d: object, finish: string | null = null) => ({
  id: "r1",
  model: "m1",
  choices: [{ index: 0, delta: d, finish_reason: finish }],
});
const call = (index: number, fields: object) => ({ index, ...fields });

describe("OpenAI stream parser edge cases", () => {
  it("assembles interleaved parallel tool calls in index order", () => {
    const s = summarise(
      run([
        delta({
          tool_calls: [call(0, { id: "c0", type: "function", function: { name: "a", arguments: "" } })],
        }),
        delta({
          tool_calls: [call(1, { id: "c1", type: "function", function: { name: "b", arguments: '{"y"' } })],
        }),
        delta({ tool_calls: [call(0, { function: { arguments: '{"x":1}' } })] }),
        delta({ tool_calls: [call(1, { function: { arguments: ":2}" } })] }),
        delta({}, "tool_calls"),
      ]),
    );
    expect(s.toolCalls).toEqual([
      { id: "c0", name: "a", arguments: '{"x":1}' },
      { id: "c1", name: "b", arguments: '{"y":2}' },
    ]);
    expect(s.done?.finishReason).toBe("tool_calls");
  });

  it("reports tool_calls when a server finishes with stop after emitting calls", () => {
    const s = summarise(
      run([
        delta({ tool_calls: [call(0, { id: "c0", function: { name: "a", arguments: "{}" } })] }),
        delta({}, "stop"),
      ]),
    );
    expect(s.done?.finishReason).toBe("tool_calls");
    expect(s.done?.rawFinishReason).toBe("stop");
  });

  it("mints an id for a call that arrives without one", () => {
    const s = summarise(
      run([delta({ tool_calls: [call(0, { function: { name: "a", arguments: "{}" } })] }, "tool_calls")]),
    );
    expect(s.toolCalls[0]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(s.done?.message.content).toEqual([{ type: "tool_call", ...s.toolCalls[0] }]);
  });

  it("ends with done when [DONE] arrives without a finish reason", () => {
    const text = summarise(run([delta({ content: "hi" })]));
    expect(text.done?.finishReason).toBe("stop");
    expect(text.done?.rawFinishReason).toBeUndefined();
    const calls = summarise(run([delta({ tool_calls: [call(0, { id: "c", function: { name: "a" } })] })]));
    expect(calls.done?.finishReason).toBe("tool_calls");
    expect(calls.toolCalls).toEqual([{ id: "c", name: "a", arguments: "{}" }]);
  });

  it("reports an early end as provider_unavailable when neither finish reason nor [DONE] came", () => {
    const events = run([delta({ content: "partial" })], { done: false });
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    const s = summarise(events);
    expect(s.error?.error.code).toBe("provider_unavailable");
    expect(s.error?.error.message).toContain("ended early");
  });

  it("accepts a finish reason without [DONE]", () => {
    const s = summarise(run([delta({ content: "ok" }, "stop")], { done: false }));
    expect(s.done?.finishReason).toBe("stop");
    expect(s.text).toBe("ok");
  });

  it("turns an in-stream error payload into one final error event", () => {
    const parser = openaiAdapter.createParser(model);
    const first = parser.push({ data: JSON.stringify(delta({ content: "Hel" })) });
    const err = parser.push({
      data: JSON.stringify({
        error: { message: "Upstream overloaded", code: 502, metadata: { raw: "busy" } },
      }),
    });
    const after = parser.push({ data: JSON.stringify(delta({ content: "lo" }, "stop")) });
    const end = parser.finish();
    expect(first).toEqual([{ type: "text_delta", text: "Hel" }]);
    expect(err).toHaveLength(1);
    const e = summarise(err).error?.error;
    expect(e?.code).toBe("provider_unavailable");
    expect(e?.status).toBe(502);
    expect(e?.retryable).toBe(true);
    expect(e?.message).toBe("openai reported an error during the response: Upstream overloaded: busy");
    expect(after).toEqual([]);
    expect(end).toEqual([]);
  });

  it("classifies in-stream errors by status and type", () => {
    const code = (error: object) => summarise(run([{ error }])).error?.error.code;
    expect(code({ message: "x", code: 429 })).toBe("rate_limit");
    expect(code({ message: "x", type: "invalid_request_error", code: "context_length_exceeded" })).toBe(
      "bad_request",
    );
    expect(code({ message: "x", type: "authentication_error" })).toBe("auth");
    expect(code({ message: "x", type: "server_error" })).toBe("provider_unavailable");
    const sseError = summarise(run([{ event: "error", data: '{"message":"boom","code":500}' }]));
    expect(sseError.error?.error.message).toContain("boom");
  });

  it("fails on a chunk that is not JSON", () => {
    const s = summarise(run(["<html>502</html>"]));
    expect(s.error?.error.code).toBe("provider_unavailable");
    expect(s.error?.error.message).toContain("<html>502</html>");
  });

  it("reads the `reasoning` field and does not double text sent in both reasoning fields", () => {
    const s = summarise(
      run([
        delta({ reasoning: "Think" }),
        delta({ reasoning: " hard", reasoning_content: " hard" }),
        delta({ content: "Done" }, "stop"),
      ]),
    );
    expect(s.reasoning).toBe("Think hard");
    expect(s.done?.message.content).toEqual([
      { type: "reasoning", text: "Think hard" },
      { type: "text", text: "Done" },
    ]);
  });

  it("streams a refusal as text and reports finish reason refusal", () => {
    const s = summarise(
      run([delta({ content: null, refusal: "I can't help with that." }), delta({}, "stop")]),
    );
    expect(s.text).toBe("I can't help with that.");
    expect(s.done?.finishReason).toBe("refusal");
  });

  it("maps vendor finish reasons", () => {
    const reason = (raw: string) => summarise(run([delta({ content: "x" }, raw)])).done?.finishReason;
    expect(reason("length")).toBe("length");
    expect(reason("model_length")).toBe("length");
    expect(reason("content_filter")).toBe("content_filter");
    expect(reason("sensitive")).toBe("content_filter");
    expect(reason("insufficient_system_resource")).toBe("error");
    expect(reason("constructor")).toBe("other");
    const fn = summarise(
      run([delta({ tool_calls: [call(0, { id: "c", function: { name: "a" } })] }, "function_call")]),
    );
    expect(fn.done?.finishReason).toBe("tool_calls");
  });

  it("prefers top-level usage and falls back to choice or x_groq usage", () => {
    const usage = (prompt: number) => ({
      prompt_tokens: prompt,
      completion_tokens: 2,
      total_tokens: prompt + 2,
    });
    const kimi = summarise(
      run([
        { id: "k", choices: [{ index: 0, delta: { content: "x" }, finish_reason: "stop", usage: usage(7) }] },
      ]),
    );
    expect(kimi.usage).toEqual({ inputTokens: 7, outputTokens: 2, totalTokens: 9 });
    const groqOnly = summarise(run([{ ...delta({}, "stop"), x_groq: { usage: usage(5) } }]));
    expect(groqOnly.usage).toEqual({ inputTokens: 5, outputTokens: 2, totalTokens: 7 });
    const both = run([
      { ...delta({ content: "x" }), usage: usage(1) },
      { ...delta({}, "stop"), x_groq: { usage: usage(99) }, usage: usage(3) },
      { choices: [], usage: null },
    ]);
    expect(both.filter((e) => e.type === "usage")).toEqual([
      { type: "usage", usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } },
    ]);
  });

  it("uses DeepSeek's prompt_cache_hit_tokens when cached_tokens is absent", () => {
    const s = summarise(
      run([
        {
          ...delta({}, "stop"),
          usage: { prompt_tokens: 10, completion_tokens: 1, prompt_cache_hit_tokens: 8 },
        },
      ]),
    );
    expect(s.usage).toEqual({ inputTokens: 10, outputTokens: 1, totalTokens: 11, cachedInputTokens: 8 });
  });

  it("ignores choices other than the first", () => {
    const s = summarise(
      run([
        {
          choices: [
            { index: 1, delta: { content: "other" }, finish_reason: null },
            { index: 0, delta: { content: "mine" }, finish_reason: "stop" },
          ],
        },
      ]),
    );
    expect(s.text).toBe("mine");
  });
});

describe("openaiAdapter.errorMessage", () => {
  it("extracts the message from the shapes vendors send", () => {
    const msg = openaiAdapter.errorMessage;
    expect(
      msg(401, '{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}'),
    ).toBe("Incorrect API key provided");
    expect(msg(400, '{"message":"model not found"}')).toBe("model not found");
    expect(msg(404, '{"error":"model \\"x\\" not found, try pulling it first"}')).toBe(
      'model "x" not found, try pulling it first',
    );
    expect(msg(400, '[{"error":{"code":400,"message":"API key not valid"}}]')).toBe("API key not valid");
    expect(msg(422, '{"detail":"Field required"}')).toBe("Field required");
    expect(msg(502, "  Bad Gateway \n")).toBe("Bad Gateway");
    expect(msg(500, "")).toBe("HTTP 500 with an empty body");
    const long = msg(500, "x".repeat(1000));
    expect(long).toBe(`${"x".repeat(300)}…`);
  });
});
