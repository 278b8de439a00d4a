import http, { type IncomingHttpHeaders } from "node:http";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** False when the connection was cut before the body ended. */
  complete: boolean;
}

/** A plain node:http POST that keeps whatever arrived, even when the server cuts the connection. */
function post(
  url: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
    });
    req.on("error", reject);
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      const done = () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, complete: res.complete });
      res.on("end", done);
      res.on("error", done);
    });
    req.end(JSON.stringify(body));
  });
}

interface Frame {
  event?: string;
  data: string;
}

/** Splits an SSE body into frames; `separator` checks which blank-line style the server used. */
function frames(text: string, separator = "\n\n"): Frame[] {
  return text
    .split(separator)
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const frame: Frame = { data: "" };
      for (const line of block.split(separator === "\n\n" ? "\n" : "\r\n")) {
        if (line.startsWith("event: ")) frame.event = line.slice(7);
        else if (line.startsWith("data: ")) frame.data = line.slice(6);
        else throw new Error(`unexpected SSE line: ${JSON.stringify(line)}`);
      }
      return frame;
    });
}

/** The fields these tests read, per protocol; the fake server is checked against them. */
interface OpenAIToolDelta {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments: string };
}
interface OpenAIChunk {
  id: string;
  object: string;
  model: string;
  choices: {
    delta: {
      role?: string;
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: OpenAIToolDelta[];
    };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}
interface AnthropicEvent {
  type: string;
  index?: number;
  message?: Record<string, unknown>;
  content_block?: { type: string; [field: string]: unknown };
  delta?: { type?: string; text?: string; thinking?: string; partial_json?: string; stop_reason?: string };
  usage?: { output_tokens: number };
}
interface GeminiPart {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args: unknown };
  thoughtSignature?: string;
}
interface GeminiChunk {
  candidates: { content: { parts: GeminiPart[]; role: string }; finishReason?: string }[];
  usageMetadata: { promptTokenCount: number; candidatesTokenCount: number; totalTokenCount: number };
  modelVersion: string;
}

interface OpenAICompletion {
  object: string;
  choices: { message: Record<string, unknown>; finish_reason: string }[];
  usage: unknown;
}

const payloads = <T>(list: Frame[]): T[] => list.map((f) => JSON.parse(f.data) as T);
const parse = <T>(text: string): T => JSON.parse(text) as T;

const TEXT = "Hello from the fake server — ünïcödé 🥟 included.";
const REASONING = "Let me think about the weather first.";
const ARGS = { city: "Paris", units: "metric" };

let server: FakeLlmServer;
beforeEach(async () => {
  server = await startFakeLlmServer();
});
afterEach(async () => {
  await server.close();
});

describe("OpenAI chat completions", () => {
  it("streams reasoning, text and a tool call as chunk.delta pieces, then usage and [DONE]", async () => {
    server.enqueue({ reasoning: REASONING, text: TEXT, toolCalls: [{ name: "weather", args: ARGS }] });
    const res = await post(server.url, "/v1/chat/completions", {
      model: "gpt-test",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "weather?" }],
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toContain("text/event-stream");
    const list = frames(res.text);
    expect(list.at(-1)?.data).toBe("[DONE]");
    const chunks = payloads<OpenAIChunk>(list.slice(0, -1));
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: "chat.completion.chunk", model: "gpt-test", id: chunks[0]!.id });
    }
    const deltas = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0]!.delta);
    expect(deltas[0]).toMatchObject({ role: "assistant" });
    const reasoningPieces = deltas.flatMap((d) => (d.reasoning_content ? [d.reasoning_content] : []));
    const textPieces = deltas.flatMap((d) => (d.content ? [d.content] : []));
    expect(reasoningPieces.join("")).toBe(REASONING);
    expect(textPieces.join("")).toBe(TEXT);
    expect(textPieces.length).toBeGreaterThan(3);
    for (const piece of textPieces) expect(piece.length).toBeLessThanOrEqual(9);

    const toolDeltas = deltas.flatMap((d) => d.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "weather", arguments: "" },
    });
    expect(toolDeltas[0]!.id).toMatch(/^call_/);
    expect(toolDeltas.length).toBeGreaterThan(2);
    expect(toolDeltas.map((t) => t.function.arguments).join("")).toBe(JSON.stringify(ARGS));

    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0]!.choices[0]!.finish_reason).toBe("tool_calls");
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    const totals = usage.usage!;
    expect(totals).toMatchObject({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
    });
    expect(totals.total_tokens).toBe(totals.prompt_tokens + totals.completion_tokens);
  });

  it("sends no usage chunk unless stream_options.include_usage asks for it", async () => {
    server.enqueue({ text: "hi", usage: { input: 7, output: 2 } });
    const res = await post(server.url, "/v1/chat/completions", { model: "m", stream: true, messages: [] });
    const chunks = payloads<OpenAIChunk>(frames(res.text).slice(0, -1));
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
    expect(chunks.at(-1)!.choices[0]).toMatchObject({ delta: {}, finish_reason: "stop" });
  });

  it("answers stream: false with a chat.completion JSON body", async () => {
    server.enqueue({
      text: "plain",
      toolCalls: [{ id: "call_x", name: "f", args: "{bad json" }],
      usage: { input: 3, output: 4 },
    });
    const res = await post(server.url, "/v1/chat/completions", { model: "m", messages: [] });
    const body = parse<OpenAICompletion>(res.text);
    expect(body.object).toBe("chat.completion");
    expect(body.choices[0]!.message).toMatchObject({
      role: "assistant",
      content: "plain",
      tool_calls: [{ id: "call_x", type: "function", function: { name: "f", arguments: "{bad json" } }],
    });
    expect(body.choices[0]!.finish_reason).toBe("tool_calls");
    expect(body.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  });

  it("passes malformed argument strings through unchanged", async () => {
    server.enqueue({ toolCalls: [{ name: "f", args: '{"a": 1,' }] });
    const res = await post(server.url, "/v1/chat/completions", { model: "m", stream: true, messages: [] });
    const deltas = payloads<OpenAIChunk>(frames(res.text).slice(0, -1)).flatMap(
      (c) => c.choices[0]?.delta.tool_calls ?? [],
    );
    expect(deltas.map((t) => t.function.arguments).join("")).toBe('{"a": 1,');
  });
});

describe("Anthropic messages", () => {
  it("streams named events from message_start to message_stop with a signed thinking block", async () => {
    server.enqueue({
      reasoning: REASONING,
      text: TEXT,
      toolCalls: [{ name: "weather", args: ARGS, id: "toolu_given" }],
      usage: { input: 20, output: 9 },
    });
    const res = await post(server.url, "/v1/messages", { model: "claude-test", stream: true, messages: [] });
    const list = frames(res.text);
    const events = payloads<AnthropicEvent>(list);
    list.forEach((frame, i) => {
      expect(frame.event).toBe(events[i]!.type);
    });
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("message_start");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(types).toContain("ping");
    expect(events[0]!.message).toMatchObject({
      model: "claude-test",
      role: "assistant",
      usage: { input_tokens: 20 },
    });

    const starts = events.filter((e) => e.type === "content_block_start");
    expect(starts.map((s) => s.content_block?.type)).toEqual(["thinking", "text", "tool_use"]);
    expect(starts[2]!.content_block).toMatchObject({ id: "toolu_given", name: "weather", input: {} });
    const deltasOf = (index: number) =>
      events.filter((e) => e.type === "content_block_delta" && e.index === index).map((e) => e.delta!);
    const thinking = deltasOf(0);
    expect(
      thinking
        .filter((d) => d.type === "thinking_delta")
        .map((d) => d.thinking)
        .join(""),
    ).toBe(REASONING);
    expect(thinking.at(-1)).toMatchObject({
      type: "signature_delta",
      signature: expect.stringMatching(/.{8,}/),
    });
    expect(
      deltasOf(1)
        .map((d) => d.text)
        .join(""),
    ).toBe(TEXT);
    const input = deltasOf(2);
    expect(input[0]).toEqual({ type: "input_json_delta", partial_json: "" });
    expect(input.map((d) => d.partial_json).join("")).toBe(JSON.stringify(ARGS));
    expect(events.filter((e) => e.type === "content_block_stop").map((e) => e.index)).toEqual([0, 1, 2]);
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } });
  });

  it("maps finish reasons to Anthropic stop reasons", async () => {
    server.enqueue({ text: "cut", finishReason: "length" });
    const res = await post(server.url, "/v1/messages", { model: "c", stream: true, messages: [] });
    expect(payloads<AnthropicEvent>(frames(res.text)).at(-2)!.delta!.stop_reason).toBe("max_tokens");
  });

  it("answers an error turn with Anthropic's error shape and the given headers", async () => {
    server.enqueue({ error: { status: 429, headers: { "retry-after": "3" } } });
    const res = await post(server.url, "/v1/messages", { model: "c", stream: true, messages: [] });
    expect(res.status).toBe(429);
    expect(res.headers["retry-after"]).toBe("3");
    expect(JSON.parse(res.text)).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });
});

describe("Gemini streamGenerateContent", () => {
  const path = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";

  it("streams CRLF-separated chunks with thought parts, function calls and cumulative usage", async () => {
    server.enqueue({
      reasoning: REASONING,
      text: TEXT,
      toolCalls: [
        { name: "weather", args: ARGS },
        { name: "time", args: {} },
      ],
      usage: { input: 11, output: 30 },
    });
    const res = await post(server.url, path, { contents: [] });
    expect(res.text).toContain("\r\n\r\n");
    const chunks = payloads<GeminiChunk>(frames(res.text, "\r\n\r\n"));
    const parts = chunks.flatMap((c) => c.candidates[0]!.content.parts);
    const thoughts = parts.filter((p) => p.thought === true).map((p) => p.text);
    const texts = parts.filter((p) => p.text !== undefined && !p.thought).map((p) => p.text);
    expect(thoughts.join("")).toBe(REASONING);
    expect(texts.join("")).toBe(TEXT);
    const calls = parts.filter((p) => p.functionCall);
    expect(calls.map((p) => p.functionCall)).toEqual([
      { name: "weather", args: ARGS },
      { name: "time", args: {} },
    ]);
    expect(calls[0]!.thoughtSignature).toEqual(expect.any(String));
    expect(chunks.every((c) => c.modelVersion === "gemini-test")).toBe(true);
    const finishes = chunks.map((c) => c.candidates[0]!.finishReason).filter(Boolean);
    expect(finishes).toEqual(["STOP"]);
    expect(chunks.at(-1)!.candidates[0]!.finishReason).toBe("STOP");
    const counts = chunks.map((c) => c.usageMetadata.candidatesTokenCount);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(chunks.at(-1)!.usageMetadata).toEqual({
      promptTokenCount: 11,
      candidatesTokenCount: 30,
      totalTokenCount: 41,
    });
  });

  it("records the model from the path and answers generateContent with JSON", async () => {
    server.enqueue({ text: "whole" });
    const res = await post(server.url, "/v1beta/models/gemini-2:generateContent", { contents: [] });
    expect(JSON.parse(res.text).candidates[0]).toMatchObject({
      content: { parts: [{ text: "whole" }], role: "model" },
      finishReason: "STOP",
    });
    expect(server.requests[0]).toMatchObject({ protocol: "gemini", model: "gemini-2", stream: false });
  });
});

describe("queue, log and special turns", () => {
  it("replays queued turns in order and records every request", async () => {
    server.enqueue({ text: "first" }, { text: "second" });
    const textOf = (res: RawResponse) =>
      payloads<OpenAIChunk>(frames(res.text).slice(0, -1))
        .map((c) => c.choices[0]?.delta.content ?? "")
        .join("");
    const one = await post(server.url, "/v1/chat/completions", { model: "m", stream: true, messages: ["a"] });
    const two = await post(
      server.url,
      "/v1/chat/completions",
      { model: "m", stream: true, messages: ["a", "b"] },
      {
        authorization: "Bearer k",
      },
    );
    expect([textOf(one), textOf(two)]).toEqual(["first", "second"]);
    expect(server.pending).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      protocol: "openai",
      model: "m",
      stream: true,
      body: { messages: ["a", "b"] },
      headers: { authorization: "Bearer k" },
    });
  });

  it("computes a turn from the request it answers", async () => {
    server.enqueue((request) => {
      const body = request.body as { messages: { content: string }[] };
      return { text: `echo: ${body.messages.at(-1)?.content}` };
    });
    const res = await post(server.url, "/v1/messages", {
      model: "c",
      messages: [{ role: "user", content: "tool said 42" }],
    });
    expect(JSON.parse(res.text).content).toEqual([{ type: "text", text: "echo: tool said 42" }]);
  });

  it("answers with the default turn when the queue is empty", async () => {
    const res = await post(server.url, "/v1/messages", { model: "c", messages: [] });
    expect(JSON.parse(res.text).content).toEqual([{ type: "text", text: "ok" }]);
  });

  it("answers 500 on an empty queue in strict mode", async () => {
    const strict = await startFakeLlmServer({ strict: true });
    try {
      const res = await post(strict.url, "/v1/chat/completions", { model: "m", messages: [] });
      expect(res.status).toBe(500);
      expect(JSON.parse(res.text).error.message).toContain("no turn queued");
    } finally {
      await strict.close();
    }
  });

  it("sends an error turn's own body verbatim", async () => {
    server.enqueue({ error: { status: 401, body: { error: { message: "bad key" } } } });
    const res = await post(server.url, "/v1/chat/completions", { model: "m", messages: [] });
    expect(res.status).toBe(401);
    expect(JSON.parse(res.text)).toEqual({ error: { message: "bad key" } });
  });

  it("cuts the connection after dropAfterChunks events", async () => {
    server.enqueue({ text: "a long answer that will never finish", dropAfterChunks: 2 }, { text: "next" });
    const res = await post(server.url, "/v1/chat/completions", { model: "m", stream: true, messages: [] });
    expect(res.status).toBe(200);
    expect(res.complete).toBe(false);
    expect(frames(res.text)).toHaveLength(2);
    expect(res.text).not.toContain("[DONE]");
    const next = await post(server.url, "/v1/chat/completions", { model: "m", stream: true, messages: [] });
    expect(next.complete).toBe(true);
  });

  it("writes the same frames when pacing events with chunkDelayMs", async () => {
    const paced = await startFakeLlmServer({ chunkDelayMs: 2, chunkSize: 4 });
    try {
      paced.enqueue({ text: "paced text", usage: { input: 1, output: 1 } });
      const res = await post(paced.url, "/v1/messages", { model: "c", stream: true, messages: [] });
      const texts = payloads<AnthropicEvent>(frames(res.text))
        .filter((e) => e.delta?.type === "text_delta")
        .map((e) => e.delta?.text);
      expect(texts).toEqual(["pace", "d te", "xt"]);
    } finally {
      await paced.close();
    }
  });

  it("still answers after delayMs, and 404s unknown routes", async () => {
    server.enqueue({ text: "late", delayMs: 20 });
    const late = await post(server.url, "/v1/messages", { model: "c", messages: [] });
    expect(JSON.parse(late.text).content[0].text).toBe("late");
    const missing = await post(server.url, "/v2/nothing", {});
    expect(missing.status).toBe(404);
    expect(server.requests.at(-1)?.protocol).toBe("unknown");
  });

  it("reset empties the queue and the log", async () => {
    server.enqueue({ text: "never used" });
    await post(server.url, "/v2/nothing", {});
    const log = server.requests;
    server.reset();
    expect(server.pending).toBe(0);
    expect(log).toHaveLength(0);
  });
});
