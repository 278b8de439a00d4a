/** Gemini request building: URL, headers and the exact body for a multi-turn tool conversation. */
import { describe, expect, it } from "vitest";
import { geminiAdapter, SKIP_SIGNATURE, streamUrl } from "../../src/llm/gemini/index.js";
import type { Context, ModelSpec } from "../../src/llm/types.js";
import { replayThroughParser, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "gemini",
  id: "gemini-2.5-flash",
  protocol: "gemini",
  baseUrl: "https://generativelanguage.googleapis.com",
  apiKey: "k",
  contextWindow: 1048576,
};

const tools = [
  {
    name: "describe",
    description: "Describe an image",
    parameters: {
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "object",
      properties: { detail: { type: "string" } },
      required: ["detail"],
      additionalProperties: false,
    },
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
        { type: "reasoning", text: "I need both tools.", signature: "anthropic-sig" },
        { type: "text", text: "Checking.", signature: "g-text-sig" },
        {
          type: "tool_call",
          id: "call_0_ab",
          name: "describe",
          arguments: '{"detail":"high"}',
          signature: "g-call-sig",
        },
        { type: "tool_call", id: "call_1_ab", name: "weather", arguments: '{"city":"Paris"}' },
      ],
    },
    { role: "tool", toolCallId: "call_0_ab", toolName: "describe", content: "A cat on a sofa." },
    {
      role: "tool",
      toolCallId: "call_1_ab",
      toolName: "weather",
      content: "Weather service down",
      isError: true,
    },
    { role: "user", content: "Thanks, summarise." },
  ],
};

describe("buildRequest", () => {
  it("builds the exact body for a multi-turn tool conversation", () => {
    const request = geminiAdapter.buildRequest(model, context, { temperature: 0.2, maxTokens: 2048 });
    expect(request.url).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(request.headers).toEqual({ "content-type": "application/json", "x-goog-api-key": "k" });
    expect(request.body).toEqual({
      systemInstruction: { parts: [{ text: "You are terse." }] },
      contents: [
        {
          role: "user",
          parts: [
            { text: "What is in this picture, and the weather in Paris?" },
            { inlineData: { mimeType: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        {
          role: "model",
          parts: [
            { text: "Checking.", thoughtSignature: "g-text-sig" },
            { functionCall: { name: "describe", args: { detail: "high" } }, thoughtSignature: "g-call-sig" },
            { functionCall: { name: "weather", args: { city: "Paris" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "describe", response: { result: "A cat on a sofa." } } },
            { functionResponse: { name: "weather", response: { error: "Weather service down" } } },
            { text: "Thanks, summarise." },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: "describe",
              description: "Describe an image",
              parameters: {
                type: "object",
                properties: { detail: { type: "string" } },
                required: ["detail"],
              },
            },
            {
              name: "weather",
              description: "Current weather",
              parameters: { type: "object", properties: { city: { type: "string" } } },
            },
          ],
        },
      ],
      generationConfig: { maxOutputTokens: 2048, temperature: 0.2 },
    });
  });

  it("asks for thoughts with a budget, and forbids tools with mode NONE", () => {
    const body = geminiAdapter.buildRequest(model, context, {
      reasoning: { budgetTokens: 4096 },
      toolChoice: "none",
    }).body as Record<string, unknown>;
    expect(body.generationConfig).toEqual({
      thinkingConfig: { includeThoughts: true, thinkingBudget: 4096 },
    });
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: "NONE" } });
    expect(body.tools).toBeDefined();
  });

  it("uses the model's maxOutputTokens and omits empty sections", () => {
    const body = geminiAdapter.buildRequest(
      { ...model, maxOutputTokens: 1000 },
      { messages: [{ role: "user", content: "hi" }] },
      { reasoning: { effort: "high" } },
    ).body;
    expect(body).toEqual({
      contents: [{ role: "user", parts: [{ text: "hi" }] }],
      generationConfig: {
        maxOutputTokens: 1000,
        thinkingConfig: { includeThoughts: true, thinkingBudget: 24576 },
      },
    });
  });

  it("puts the documented stand-in signature on the first call of an unsigned turn", () => {
    const body = geminiAdapter.buildRequest(
      model,
      {
        messages: [
          { role: "system", content: "Be kind." },
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: [
              { type: "tool_call", id: "toolu_1", name: "a", arguments: "{oops" },
              { type: "tool_call", id: "toolu_2", name: "b", arguments: "[1]" },
            ],
          },
          {
            role: "tool",
            toolCallId: "toolu_1",
            toolName: "a",
            content: [
              { type: "text", text: "line 1" },
              { type: "image", mimeType: "image/png", data: "AAA=" },
              { type: "text", text: "line 2" },
            ],
          },
          { role: "tool", toolCallId: "toolu_2", toolName: "b", content: "ok" },
        ],
      },
      {},
    ).body as Record<string, unknown>;
    expect(body.systemInstruction).toEqual({ parts: [{ text: "Be kind." }] });
    expect(body.contents).toEqual([
      { role: "user", parts: [{ text: "go" }] },
      {
        role: "model",
        parts: [
          { functionCall: { name: "a", args: {} }, thoughtSignature: SKIP_SIGNATURE },
          { functionCall: { name: "b", args: {} } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { name: "a", response: { result: "line 1\nline 2" } } },
          { functionResponse: { name: "b", response: { result: "ok" } } },
          { inlineData: { mimeType: "image/png", data: "AAA=" } },
        ],
      },
    ]);
  });

  it("echoes streamed signatures back where Gemini put them", () => {
    const textDone = summarise(
      replayThroughParser(geminiAdapter, model, "google--google-text.chunks.txt"),
    ).done;
    const callDone = summarise(
      replayThroughParser(geminiAdapter, model, "google--google-tool-call.chunks.txt"),
    ).done;
    expect(textDone && callDone).toBeTruthy();
    if (!textDone || !callDone) return;
    const callId = callDone.message.content[0]?.type === "tool_call" ? callDone.message.content[0].id : "";
    const body = geminiAdapter.buildRequest(
      model,
      {
        messages: [
          { role: "user", content: "count r" },
          textDone.message,
          { role: "user", content: "weather?" },
          callDone.message,
          { role: "tool", toolCallId: callId, toolName: "weather", content: "sunny" },
        ],
      },
      {},
    ).body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> };
    const [textPart] = body.contents[1]?.parts ?? [];
    expect(textPart?.text).toBe('There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y');
    expect(String(textPart?.thoughtSignature).startsWith("EqsFCqgFAb4+9vvt")).toBe(true);
    const [callPart] = body.contents[3]?.parts ?? [];
    expect(callPart?.functionCall).toEqual({ name: "weather", args: { location: "San Francisco" } });
    expect(String(callPart?.thoughtSignature).startsWith("EqUCCqICAb4+9vsh")).toBe(true);
  });

  it("sends full JSON Schema as parametersJsonSchema when the quirk is on", () => {
    const body = geminiAdapter.buildRequest({ ...model, quirks: { jsonSchemaParameters: true } }, context, {})
      .body as { tools: Array<{ functionDeclarations: Array<Record<string, unknown>> }> };
    expect(body.tools[0]?.functionDeclarations[0]).toEqual({
      name: "describe",
      description: "Describe an image",
      parametersJsonSchema: {
        type: "object",
        properties: { detail: { type: "string" } },
        required: ["detail"],
        additionalProperties: false,
      },
    });
  });

  it("adds model headers and leaves the key out when there is none", () => {
    const request = geminiAdapter.buildRequest(
      { ...model, apiKey: undefined, headers: { "x-goog-user-project": "p1" } },
      { messages: [{ role: "user", content: "hi" }] },
      {},
    );
    expect(request.headers).toEqual({ "content-type": "application/json", "x-goog-user-project": "p1" });
  });
});

describe("streamUrl", () => {
  it("adds /v1beta once and keeps a version the base URL already has", () => {
    const tail = "models/gemini-2.5-flash:streamGenerateContent?alt=sse";
    expect(streamUrl("https://generativelanguage.googleapis.com/", "gemini-2.5-flash")).toBe(
      `https://generativelanguage.googleapis.com/v1beta/${tail}`,
    );
    expect(streamUrl("https://proxy.example/gemini/v1beta", "gemini-2.5-flash")).toBe(
      `https://proxy.example/gemini/v1beta/${tail}`,
    );
    expect(streamUrl("https://proxy.example/v1/", "gemini-2.5-flash")).toBe(
      `https://proxy.example/v1/${tail}`,
    );
    expect(streamUrl("", "models/gemini-2.5-flash")).toBe(
      `https://generativelanguage.googleapis.com/v1beta/${tail}`,
    );
  });
});
