/** Anthropic request building: URL, headers and the exact body for a multi-turn tool conversation. */
import { describe, expect, it } from "vitest";
import { anthropicAdapter, messagesUrl } from "../../src/llm/anthropic/index.js";
import type { Context, ModelSpec } from "../../src/llm/types.js";
import { replayThroughParser, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "anthropic",
  id: "claude-sonnet-4-5",
  protocol: "anthropic",
  baseUrl: "https://api.anthropic.com",
  apiKey: "k",
  contextWindow: 200000,
  // The exact bodies below are without cache breakpoints; the last test covers those.
  quirks: { promptCache: false },
};

const tools = [
  {
    name: "describe",
    description: "Describe an image",
    parameters: { type: "object", properties: { detail: { type: "string" } }, required: ["detail"] },
  },
  {
    name: "weather",
    description: "Current weather",
    parameters: { type: "object", properties: { city: { type: "string" } } },
  },
];

const context: Context = {
  system: "You are terse.",
  tools,
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture, and the weather in Paris?" },
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "I need both tools.", signature: "sig-abc" },
        { type: "text", text: "Checking." },
        { type: "tool_call", id: "toolu_1", name: "describe", arguments: '{"detail":"high"}' },
        { type: "tool_call", id: "toolu_2", name: "weather", arguments: '{"city":"Paris"}' },
      ],
    },
    { role: "tool", toolCallId: "toolu_1", toolName: "describe", content: "A cat on a sofa." },
    {
      role: "tool",
      toolCallId: "toolu_2",
      toolName: "weather",
      content: "Weather service down",
      isError: true,
    },
    { role: "user", content: "Thanks, summarise." },
  ],
};

describe("buildRequest", () => {
  it("builds the exact body for a multi-turn tool conversation", () => {
    const request = anthropicAdapter.buildRequest(model, context, { temperature: 0.2 });
    expect(request.url).toBe("https://api.anthropic.com/v1/messages");
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "x-api-key": "k",
    });
    expect(request.body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 8192,
      stream: true,
      system: "You are terse.",
      temperature: 0.2,
      tools: [
        {
          name: "describe",
          description: "Describe an image",
          input_schema: { type: "object", properties: { detail: { type: "string" } }, required: ["detail"] },
        },
        {
          name: "weather",
          description: "Current weather",
          input_schema: { type: "object", properties: { city: { type: "string" } } },
        },
      ],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is in this picture, and the weather in Paris?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I need both tools.", signature: "sig-abc" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "describe", input: { detail: "high" } },
            { type: "tool_use", id: "toolu_2", name: "weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "A cat on a sofa." },
            { type: "tool_result", tool_use_id: "toolu_2", content: "Weather service down", is_error: true },
            { type: "text", text: "Thanks, summarise." },
          ],
        },
      ],
    });
  });

  it("switches on thinking, drops temperature and keeps max_tokens above the budget", () => {
    const request = anthropicAdapter.buildRequest(
      { ...model, maxOutputTokens: 4000 },
      { messages: [{ role: "user", content: "hi" }] },
      { temperature: 0.5, reasoning: { budgetTokens: 6000 } },
    );
    expect(request.body).toEqual({
      model: "claude-sonnet-4-5",
      max_tokens: 7024,
      stream: true,
      thinking: { type: "enabled", budget_tokens: 6000 },
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
    });
  });

  it("prefers options.maxTokens over the model's maxOutputTokens and maps effort to a budget", () => {
    const body = anthropicAdapter.buildRequest(
      { ...model, maxOutputTokens: 4000 },
      { messages: [{ role: "user", content: "hi" }] },
      { maxTokens: 30000, reasoning: { effort: "low" } },
    ).body as Record<string, unknown>;
    expect(body.max_tokens).toBe(30000);
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
  });

  it("keeps tools but forbids them with tool_choice none", () => {
    const body = anthropicAdapter.buildRequest(model, context, { toolChoice: "none" }).body as Record<
      string,
      unknown
    >;
    expect(body.tool_choice).toEqual({ type: "none" });
    expect(body.tools).toHaveLength(2);
  });

  it("omits tools and tool_choice when there are no tools", () => {
    const body = anthropicAdapter.buildRequest(
      model,
      { messages: [{ role: "user", content: "hi" }] },
      { toolChoice: "none" },
    ).body as Record<string, unknown>;
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("tool_choice");
  });

  it("drops unsigned reasoning, Gemini signatures and broken arguments; sends image tool results as blocks", () => {
    const body = anthropicAdapter.buildRequest(
      model,
      {
        messages: [
          { role: "system", content: "Be kind." },
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "thoughts from another provider" },
              { type: "text", text: "ok", signature: "gemini-sig" },
              {
                type: "tool_call",
                id: "call.1:x",
                name: "shot",
                arguments: "{broken",
                signature: "gemini-call-sig",
              },
            ],
          },
          {
            role: "tool",
            toolCallId: "call.1:x",
            toolName: "shot",
            content: [
              { type: "text", text: "screenshot:" },
              { type: "image", mimeType: "image/jpeg", data: "/9j/" },
            ],
          },
          { role: "assistant", content: [{ type: "reasoning", text: "unsigned only" }] },
          { role: "user", content: "" },
        ],
      },
      {},
    ).body as Record<string, unknown>;
    expect(body.system).toBe("Be kind.");
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "ok" },
          { type: "tool_use", id: "call_1_x", name: "shot", input: {} },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "call_1_x",
            content: [
              { type: "text", text: "screenshot:" },
              { type: "image", source: { type: "base64", media_type: "image/jpeg", data: "/9j/" } },
            ],
          },
        ],
      },
    ]);
  });

  it("round-trips a streamed thinking signature into the next request", () => {
    const done = summarise(
      replayThroughParser(
        anthropicAdapter,
        model,
        "anthropic--anthropic-claude-sonnet-5-reasoning-summarized.chunks.txt",
      ),
    ).done;
    expect(done).toBeDefined();
    if (!done) return;
    const body = anthropicAdapter.buildRequest(
      model,
      { messages: [{ role: "user", content: "gcd?" }, done.message, { role: "user", content: "thanks" }] },
      {},
    ).body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    const thinking = body.messages[1]?.content[0];
    expect(thinking?.type).toBe("thinking");
    expect(thinking?.signature).toHaveLength(436);
    expect(String(thinking?.signature).startsWith("EsECCokBCBAY")).toBe(true);
    expect(thinking?.thinking).toMatch(/^I'm working through the Euclidean algorithm/);
    expect(body.messages[1]?.content[1]?.type).toBe("text");
  });

  it("adds model headers and can leave out the key", () => {
    const request = anthropicAdapter.buildRequest(
      { ...model, apiKey: undefined, headers: { "anthropic-beta": "interleaved-thinking-2025-05-14" } },
      { messages: [{ role: "user", content: "hi" }] },
      {},
    );
    expect(request.headers).toEqual({
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "interleaved-thinking-2025-05-14",
    });
  });
});

describe("messagesUrl", () => {
  it("appends /v1/messages, without doubling /v1 or a trailing slash", () => {
    expect(messagesUrl("https://api.anthropic.com")).toBe("https://api.anthropic.com/v1/messages");
    expect(messagesUrl("https://api.anthropic.com/")).toBe("https://api.anthropic.com/v1/messages");
    expect(messagesUrl("https://proxy.example/anthropic/v1/")).toBe(
      "https://proxy.example/anthropic/v1/messages",
    );
    expect(messagesUrl("")).toBe("https://api.anthropic.com/v1/messages");
  });
});

describe("errorMessage", () => {
  it("extracts the API's message from an error body", () => {
    const body =
      '{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}';
    expect(anthropicAdapter.errorMessage(400, body)).toBe(
      "max_tokens: must be positive (invalid_request_error)",
    );
  });

  it("falls back to the text, or to the status for an empty body", () => {
    expect(anthropicAdapter.errorMessage(502, "Bad Gateway")).toBe("Bad Gateway");
    expect(anthropicAdapter.errorMessage(503, "")).toContain("HTTP 503");
  });

  it("marks cache breakpoints on the last tool, the system prompt, the previous call's end and the last message", () => {
    const { body } = anthropicAdapter.buildRequest(
      { ...model, quirks: {}, cacheTtl: "1h" },
      {
        system: "sys",
        tools: [
          { name: "a", description: "A", parameters: { type: "object" } },
          { name: "b", description: "B", parameters: { type: "object" } },
        ],
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_call", id: "c1", name: "a", arguments: "{}" }] },
          { role: "tool", toolCallId: "c1", toolName: "a", content: "done" },
        ],
      },
      {},
    );
    const b = body as {
      tools: Array<{ cache_control?: unknown }>;
      system: Array<{ text: string; cache_control?: unknown }>;
      messages: Array<{ content: Array<{ cache_control?: unknown }> }>;
    };
    const mark = { type: "ephemeral", ttl: "1h" };
    expect(b.tools.map((t) => t.cache_control)).toEqual([undefined, mark]);
    expect(b.system).toEqual([{ type: "text", text: "sys", cache_control: mark }]);
    expect(b.messages[0]?.content.at(-1)?.cache_control).toEqual(mark);
    expect(b.messages[2]?.content.at(-1)?.cache_control).toEqual(mark);
    expect(JSON.stringify(body).split("cache_control").length - 1).toBe(4);
  });
});
