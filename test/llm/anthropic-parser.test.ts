/** Anthropic stream parser: truncated streams, error events and the less common block shapes. */
import { describe, expect, it } from "vitest";
import type { SseEvent } from "../../src/llm/adapter.js";
import { anthropicAdapter } from "../../src/llm/anthropic/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { sseEventsFor, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "anthropic",
  id: "claude-sonnet-4-5",
  protocol: "anthropic",
  baseUrl: "https://api.anthropic.com",
  apiKey: "k",
  contextWindow: 200000,
};

function run(events: SseEvent[]): ModelEvent[] {
  const parser = anthropicAdapter.createParser(model);
  const out: ModelEvent[] = [];
  for (const e of events) out.push(...parser.push(e));
  out.push(...parser.finish());
  return out;
}

/** SSE events from payload objects, with the `event:` name taken from `type` as the API sends it. */
function sse(...payloads: Array<Record<string, unknown>>): SseEvent[] {
  return payloads.map((p) => ({ event: String(p.type), data: JSON.stringify(p) }));
}

const start = {
  type: "message_start",
  message: { id: "msg_1", model: "m", usage: { input_tokens: 7, output_tokens: 1 } },
};
const stop = { type: "message_stop" };

describe("truncated streams", () => {
  it("reports provider_unavailable when message_stop never arrives", () => {
    const events = sseEventsFor("anthropic--anthropic-text.chunks.txt").slice(0, -1);
    const out = run(events);
    const last = out.at(-1);
    expect(last?.type).toBe("error");
    if (last?.type !== "error") return;
    expect(last.error.code).toBe("provider_unavailable");
    expect(last.error.message).toContain("ended early");
    expect(last.error.retryable).toBe(true);
    expect(out.some((e) => e.type === "done")).toBe(false);
  });

  it("does not emit a tool call whose block never closed", () => {
    const events = sseEventsFor("anthropic--anthropic-issue-11719-quoted-tool-input.chunks.txt").slice(0, 8);
    const r = summarise(run(events));
    expect(r.toolCalls).toEqual([]);
    expect(r.error?.error.code).toBe("provider_unavailable");
  });

  it("reports an empty stream as an error", () => {
    const r = summarise(run([]));
    expect(r.error?.error.message).toContain("before message_start");
  });
});

describe("error events", () => {
  const cases = [
    ["overloaded_error", "provider_unavailable"],
    ["api_error", "provider_unavailable"],
    ["rate_limit_error", "rate_limit"],
    ["authentication_error", "auth"],
    ["invalid_request_error", "bad_request"],
  ] as const;
  for (const [type, code] of cases) {
    it(`maps ${type} to ${code}`, () => {
      const out = run(sse(start, { type: "error", error: { type, message: "Something broke" } }));
      expect(out.filter((e) => e.type === "error" || e.type === "done")).toHaveLength(1);
      const last = out.at(-1);
      expect(last?.type).toBe("error");
      if (last?.type !== "error") return;
      expect(last.error.code).toBe(code);
      expect(last.error.message).toContain("Something broke");
      expect(last.error.message).toContain(type);
    });
  }

  it("ignores events after an error and still ends with that error", () => {
    const out = run(
      sse(
        start,
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "late" } },
        stop,
      ),
    );
    expect(out.some((e) => e.type === "text_delta")).toBe(false);
    expect(out.at(-1)?.type).toBe("error");
  });

  it("reports a payload that is not JSON", () => {
    const r = summarise(run([{ event: "message_start", data: "{not json" }]));
    expect(r.error?.error.message).toContain("not JSON");
  });
});

describe("block shapes", () => {
  it("keeps each thinking block's own signature, even for a block without text", () => {
    const out = run(
      sse(
        start,
        {
          type: "content_block_start",
          index: 0,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
        { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "first" } },
        { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: "sig-A" } },
        { type: "content_block_stop", index: 0 },
        {
          type: "content_block_start",
          index: 1,
          content_block: { type: "thinking", thinking: "", signature: "" },
        },
        { type: "content_block_delta", index: 1, delta: { type: "signature_delta", signature: "sig-B" } },
        { type: "content_block_stop", index: 1 },
        {
          type: "content_block_start",
          index: 2,
          content_block: { type: "redacted_thinking", data: "opaque" },
        },
        { type: "content_block_stop", index: 2 },
        { type: "content_block_start", index: 3, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "done" } },
        { type: "content_block_stop", index: 3 },
        { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 9 } },
        stop,
      ),
    );
    const r = summarise(out);
    expect(r.reasoning).toBe("first");
    expect(r.done?.message.content).toEqual([
      { type: "reasoning", text: "first", signature: "sig-A" },
      { type: "reasoning", text: "", signature: "sig-B" },
      { type: "reasoning", text: "", redactedData: "opaque" },
      { type: "text", text: "done" },
    ]);
  });

  it("does not hand server-side tool blocks to the tool loop", () => {
    const r = summarise(
      run(
        sse(
          start,
          {
            type: "content_block_start",
            index: 0,
            content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
          },
          {
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: '{"query":"x"}' },
          },
          { type: "content_block_stop", index: 0 },
          { type: "message_delta", delta: { stop_reason: "pause_turn" }, usage: { output_tokens: 3 } },
          stop,
        ),
      ),
    );
    expect(r.toolCalls).toEqual([]);
    expect(r.done?.finishReason).toBe("other");
    expect(r.done?.rawFinishReason).toBe("pause_turn");
  });

  it("uses the start block's input when no JSON deltas arrive", () => {
    const r = summarise(
      run(
        sse(
          start,
          {
            type: "content_block_start",
            index: 0,
            content_block: { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.txt" } },
          },
          { type: "content_block_stop", index: 0 },
          { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } },
          stop,
        ),
      ),
    );
    expect(r.toolCalls).toEqual([{ id: "toolu_1", name: "read", arguments: '{"path":"a.txt"}' }]);
  });

  it("maps the remaining stop reasons", () => {
    const finish = (stopReason: string) =>
      summarise(
        run(sse(start, { type: "message_delta", delta: { stop_reason: stopReason }, usage: {} }, stop)),
      ).done?.finishReason;
    expect(finish("stop_sequence")).toBe("stop");
    expect(finish("max_tokens")).toBe("length");
    expect(finish("something_new")).toBe("other");
  });
});

describe("usage", () => {
  it("adds cache reads and writes to the input and reports the reads as cached", () => {
    const r = summarise(
      run(
        sse(
          {
            type: "message_start",
            message: {
              id: "msg_c",
              usage: {
                input_tokens: 5,
                cache_read_input_tokens: 100,
                cache_creation_input_tokens: 20,
                output_tokens: 1,
              },
            },
          },
          { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 8 } },
          stop,
        ),
      ),
    );
    expect(r.usage).toEqual({
      inputTokens: 125,
      outputTokens: 8,
      totalTokens: 133,
      cachedInputTokens: 100,
      cacheWriteTokens: 20,
    });
  });

  it("takes input tokens from message_delta when message_start had none", () => {
    const r = summarise(
      run(
        sse(
          { type: "message_start", message: { id: "msg_p", usage: { input_tokens: 0, output_tokens: 0 } } },
          {
            type: "message_delta",
            delta: { stop_reason: "end_turn" },
            usage: { input_tokens: 40, output_tokens: 6 },
          },
          stop,
        ),
      ),
    );
    expect(r.usage).toEqual({ inputTokens: 40, outputTokens: 6, totalTokens: 46 });
  });
});
