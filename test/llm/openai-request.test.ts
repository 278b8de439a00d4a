/** The Chat Completions request body for a multi-turn context, and the quirks that change it. */
import { describe, expect, it } from "vitest";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import type { Context, ModelSpec } from "../../src/llm/types.js";

const openai: ModelSpec = {
  provider: "openai",
  id: "gpt-4o",
  protocol: "openai",
  baseUrl: "https://api.openai.com/v1",
  apiKey: "sk-test",
  contextWindow: 128000,
};
const deepseek: ModelSpec = {
  ...openai,
  provider: "deepseek",
  id: "deepseek-chat",
  baseUrl: "https://api.deepseek.com/",
};

const weatherTool = {
  name: "weather",
  description: "Weather for a city",
  parameters: { type: "object", properties: { location: { type: "string" } }, required: ["location"] },
};

const context: Context = {
  system: "You are terse.",
  tools: [weatherTool],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Look at the image." },
        { type: "text", text: "Let me check." },
        { type: "tool_call", id: "call_1", name: "describe", arguments: '{"detail":"high"}' },
        { type: "tool_call", id: "call_2", name: "screenshot", arguments: "" },
      ],
    },
    { role: "tool", toolCallId: "call_1", toolName: "describe", content: "A cat" },
    {
      role: "tool",
      toolCallId: "call_2",
      toolName: "screenshot",
      content: [
        { type: "text", text: "captured" },
        { type: "image", mimeType: "image/jpeg", data: "/9j/4AAQ" },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "It is a cat." },
        { type: "tool_call", id: "call_3", name: "weather", arguments: '{"location":"Paris"}' },
      ],
    },
    { role: "tool", toolCallId: "call_3", toolName: "weather", content: "sunny", isError: false },
    { role: "assistant", content: [{ type: "text", text: "A cat, in sunny Paris." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "Thanks." },
        { type: "text", text: "Bye." },
      ],
    },
  ],
};

const assistantToolCalls = [
  { id: "call_1", type: "function", function: { name: "describe", arguments: '{"detail":"high"}' } },
  // An empty argument string goes back as `{}`: servers reject "" as invalid JSON.
  { id: "call_2", type: "function", function: { name: "screenshot", arguments: "{}" } },
];

function expectedMessages(withReasoning: boolean) {
  const reasoning = (text: string) => (withReasoning ? { reasoning_content: text } : {});
  return [
    { role: "system", content: "You are terse." },
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
    {
      role: "assistant",
      content: "Let me check.",
      tool_calls: assistantToolCalls,
      ...reasoning("Look at the image."),
    },
    { role: "tool", tool_call_id: "call_1", content: "A cat" },
    { role: "tool", tool_call_id: "call_2", content: "captured\n[image: image/jpeg, 6 bytes]" },
    // The image follows the whole run of tool results, never between an assistant's calls and their results.
    {
      role: "user",
      content: [
        { type: "text", text: "Image from tool screenshot (call call_2):" },
        { type: "image_url", image_url: { url: "data:image/jpeg;base64,/9j/4AAQ" } },
      ],
    },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_3", type: "function", function: { name: "weather", arguments: '{"location":"Paris"}' } },
      ],
      ...reasoning("It is a cat."),
    },
    { role: "tool", tool_call_id: "call_3", content: "sunny" },
    { role: "assistant", content: "A cat, in sunny Paris." },
    { role: "user", content: "Thanks.\nBye." },
  ];
}

describe("openaiAdapter.buildRequest", () => {
  it("builds the exact DeepSeek body, sending reasoning back as reasoning_content", () => {
    const req = openaiAdapter.buildRequest(deepseek, context, {
      maxTokens: 1000,
      temperature: 0.2,
      reasoning: { effort: "high" },
    });
    expect(req.url).toBe("https://api.deepseek.com/chat/completions");
    expect(req.headers).toStrictEqual({
      "content-type": "application/json",
      accept: "text/event-stream",
      authorization: "Bearer sk-test",
    });
    expect(req.body).toStrictEqual({
      model: "deepseek-chat",
      messages: expectedMessages(true),
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: weatherTool }],
      max_tokens: 1000,
      temperature: 0.2,
      // DeepSeek's own switch comes with the effort (see src/llm/reasoning.ts).
      thinking: { type: "enabled" },
      reasoning_effort: "high",
    });
    // The body goes over the wire as JSON: nothing may be lost or changed by serialising it.
    expect(JSON.parse(JSON.stringify(req.body))).toStrictEqual(req.body);
  });

  it("leaves reasoning out for other providers unless the sendReasoning quirk asks for it", () => {
    const plain = openaiAdapter.buildRequest(openai, context, {});
    expect(plain.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(plain.body).toStrictEqual({
      model: "gpt-4o",
      messages: expectedMessages(false),
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: weatherTool }],
    });
    const withQuirk = openaiAdapter.buildRequest({ ...openai, quirks: { sendReasoning: true } }, context, {});
    expect((withQuirk.body as { messages: unknown }).messages).toStrictEqual(expectedMessages(true));
    const deepseekOff = openaiAdapter.buildRequest(
      { ...deepseek, quirks: { sendReasoning: false } },
      context,
      {},
    );
    expect((deepseekOff.body as { messages: unknown }).messages).toStrictEqual(expectedMessages(false));
  });

  it("applies the includeUsage and maxCompletionTokens quirks", () => {
    const model = { ...openai, quirks: { includeUsage: false, maxCompletionTokens: true } };
    const body = openaiAdapter.buildRequest(
      model,
      { messages: [{ role: "user", content: "hi" }] },
      { maxTokens: 50 },
    ).body as Record<string, unknown>;
    expect(body).toStrictEqual({
      model: "gpt-4o",
      messages: [{ role: "user", content: "hi" }],
      stream: true,
      max_completion_tokens: 50,
    });
  });

  it("omits tools entirely when toolChoice is none", () => {
    const body = openaiAdapter.buildRequest(openai, context, { toolChoice: "none" }).body as Record<
      string,
      unknown
    >;
    expect(body).not.toHaveProperty("tools");
    expect(body).not.toHaveProperty("tool_choice");
    const auto = openaiAdapter.buildRequest(openai, context, { toolChoice: "auto" }).body as Record<
      string,
      unknown
    >;
    expect(auto.tools).toHaveLength(1);
  });

  it("sends no authorization without a key, and lets model headers override defaults", () => {
    const local: ModelSpec = {
      ...openai,
      provider: "ollama",
      id: "qwen3",
      baseUrl: "http://127.0.0.1:11434/v1//",
      headers: { "x-title": "dimsum", accept: "*/*" },
    };
    delete local.apiKey;
    const req = openaiAdapter.buildRequest(local, { messages: [] }, {});
    expect(req.url).toBe("http://127.0.0.1:11434/v1/chat/completions");
    expect(req.headers).toStrictEqual({
      "content-type": "application/json",
      accept: "*/*",
      "x-title": "dimsum",
    });
  });

  it("keeps a system message that appears inside the conversation", () => {
    const body = openaiAdapter.buildRequest(
      openai,
      {
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hi" },
        ],
      },
      {},
    ).body as { messages: unknown };
    expect(body.messages).toStrictEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "hi" },
    ]);
  });
});
