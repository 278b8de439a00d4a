/** Replays every recorded OpenAI-format stream and checks the outcome stated in the fixtures README. */
import { describe, expect, it } from "vitest";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import type { AssistantMessage, ModelEvent, ModelSpec, Usage } from "../../src/llm/types.js";
import { listChunkFixtures, loadChunks, replayThroughParser, summarise } from "../support/fixtures.js";

const model: ModelSpec = {
  provider: "openai",
  id: "gpt-4o",
  protocol: "openai",
  baseUrl: "https://api.openai.com/v1",
  apiKey: "sk-test",
  contextWindow: 128000,
};

interface Expected {
  text: string;
  reasoning: string;
  /** `arguments` is the exact concatenated string; the README also states what it parses to. */
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: string;
  rawFinishReason: string;
  usage: Usage | undefined;
  responseId: string;
  model: string;
}

// Strings copied verbatim from the README's "Exact expected values" section.
const expected: Record<string, Expected> = {
  "openai-compatible--issue-15789-step-1.chunks.txt": {
    text: "PRE_TOOL",
    reasoning: "",
    toolCalls: [{ id: "call_NZa7xqfefoaMI2YYHowVXVlU", name: "weather", arguments: "{}" }],
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
    usage: { inputTokens: 58, outputTokens: 12, totalTokens: 70, reasoningTokens: 0, cachedInputTokens: 0 },
    responseId: "chatcmpl-E6yvi7cuDcHZEHTMxcLDyf3CMKIO2",
    model: "gpt-4o-2024-08-06",
  },
  "openai-compatible--xai-tool-call.chunks.txt": {
    text: "",
    reasoning:
      'First, the user is asking about the weather in San Francisco. I have a available function called "weather" that retrieves the weather for a given location.\n\nThe function requires a parameter: "location", which is a string. The user has provided "San Francisco" as the location, so that\'s clear and inferable.\n\nI should call this function to get the weather information. The format for calling the function is specific: I need to use <function_call> tags with JSON inside, like <function_call>{"action": "weather", "action_input": {"location": "San Francisco"}}</function_call>.\n\nThis seems to be a direct match, so I don\'t need to ask for clarification. My response should only contain the function call if that\'s the next step, which it is.\n\nThe instructions say: "Keep your response to user clear; please do not make your response verbose!" So, I shouldn\'t add any extra text; just the function call.\n\nFinally, after calling the function, if this were a multi-turn conversation, I might need to respond based on the result, but for now, this is the logical next step.',
    toolCalls: [{ id: "call_79382389", name: "weather", arguments: '{"location":"San Francisco"}' }],
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
    usage: {
      inputTokens: 307,
      outputTokens: 26,
      totalTokens: 560,
      reasoningTokens: 227,
      cachedInputTokens: 306,
    },
    responseId: "7027d986-3c59-a37a-9a5f-50713e01c8a6",
    model: "grok-3-mini",
  },
  "openai-compatible--tiny-chunks.chunks.txt": {
    text: "Hi there!",
    reasoning: 'First, the user said: "Hello." That is simple.',
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: undefined,
    responseId: "test-1",
    model: "test-model",
  },
  "openai-compatible--placeholder-first-chunk.chunks.txt": {
    text: "Hello",
    reasoning: "",
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: { inputTokens: 10, outputTokens: 1, totalTokens: 11 },
    responseId: "chatcmpl-123",
    model: "actual-model-name",
  },
  "openai-compatible--issue-20203-empty-tool-calls.chunks.txt": {
    text: "Hello",
    reasoning: "Think more...",
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: undefined,
    responseId: "chatcmpl-issue-20203",
    model: "test-model",
  },
  "openai-compatible--issue-13703-mistral-thinking.chunks.txt": {
    text: "391",
    reasoning:
      "Okay, the user is asking for the product of 17 and 23. I need to calculate this multiplication. Let me break it down:\n\nFirst, I recall that 17 multiplied by 20 is 340 (since 17 * 20 = 340).\nThen, I need to add 17 multiplied by 3, which is 51 (since 17 * 3 = 51).\nNow, add these two results together: 340 + 51 = 391.\n\nSo, 17 * 23 = 391.",
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: { inputTokens: 28, outputTokens: 139, totalTokens: 167, cachedInputTokens: 0 },
    responseId: "ed56a5f5c9254b8981e89c2ecfdd6a8d",
    model: "mistral-small-latest",
  },
  "deepseek--deepseek-tool-call.chunks.txt": {
    text: "",
    reasoning: "The user asks about the weather in San Francisco. I should use the weather tool.",
    toolCalls: [
      { id: "call_00_IhCAliIHtM9gKpgfqbBV9873", name: "weather", arguments: '{"location": "San Francisco"}' },
    ],
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
    usage: {
      inputTokens: 374,
      outputTokens: 61,
      totalTokens: 435,
      reasoningTokens: 17,
      cachedInputTokens: 256,
    },
    responseId: "6e77be01-935b-42f6-8b05-d6c763528589",
    model: "deepseek-v4-flash",
  },
  "deepseek--deepseek-reasoning.chunks.txt": {
    text: "There are **3** “r”s in **“strawberry”**.",
    reasoning:
      'We need answer simple. Need count r in strawberry. strawberry letters s t r a w b e r r y? Let\'s count: "strawberry" has r at position 3, and then "berry" has two r? Actually strawberry = straw + berry. "straw" has one r, "berry" has two r? b e r r y yes two. total 3 r\'s. Need answer.',
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: {
      inputTokens: 97,
      outputTokens: 106,
      totalTokens: 203,
      reasoningTokens: 88,
      cachedInputTokens: 0,
    },
    responseId: "b1e23612-29d5-4f66-b185-fb61fdde0ac9",
    model: "deepseek-v4-flash",
  },
  "deepseek--issue-19789-live-usage.chunks.txt": {
    text: "sanitized",
    reasoning: "",
    toolCalls: [],
    finishReason: "length",
    rawFinishReason: "length",
    usage: { inputTokens: 88, outputTokens: 4, totalTokens: 92, reasoningTokens: 4, cachedInputTokens: 0 },
    responseId: "sanitized",
    model: "deepseek-v4-flash",
  },
  "groq--groq-tool-call.chunks.txt": {
    text: "",
    reasoning: "",
    toolCalls: [{ id: "tk85n1k4m", name: "weather", arguments: "{}" }],
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
    usage: { inputTokens: 210, outputTokens: 15, totalTokens: 225 },
    responseId: "chatcmpl-b610d559-f156-4aca-8827-24b4fe6af54f",
    model: "llama-3.3-70b-versatile",
  },
  "mistral--mistral-incremental-tool-call.chunks.txt": {
    text: "",
    reasoning: "",
    toolCalls: [
      {
        id: "chatcmpl-tool-9f149c74c42f265b",
        name: "webSearchTool",
        arguments: '{"query": "current Berlin weather"}',
      },
    ],
    finishReason: "tool_calls",
    rawFinishReason: "tool_calls",
    usage: { inputTokens: 171, outputTokens: 14, totalTokens: 185, cachedInputTokens: 128 },
    responseId: "735e434874a24f68a2390b3cab149242",
    model: "zai-glm-5-2",
  },
  "mistral--mistral-empty-choices.chunks.txt": {
    text: "Hello!",
    reasoning: "",
    toolCalls: [],
    finishReason: "stop",
    rawFinishReason: "stop",
    usage: { inputTokens: 5, outputTokens: 3, totalTokens: 8 },
    responseId: "abc123",
    model: "mistral-small-latest",
  },
};

const openaiFormat = /^(openai-compatible|deepseek|groq|mistral)--/;

/** The message `done` must carry: reasoning, then text, then calls (the order every fixture streams them). */
function expectedMessage(e: Expected): AssistantMessage {
  const content: AssistantMessage["content"] = [];
  if (e.reasoning) content.push({ type: "reasoning", text: e.reasoning });
  if (e.text) content.push({ type: "text", text: e.text });
  for (const call of e.toolCalls) {
    content.push({ type: "tool_call", ...call });
  }
  return { role: "assistant", content };
}

describe("OpenAI Chat Completions fixtures", () => {
  it("has an expectation for every OpenAI-format fixture", () => {
    const files = listChunkFixtures().filter((f) => openaiFormat.test(f));
    expect(files.length).toBeGreaterThanOrEqual(12);
    expect(Object.keys(expected).sort()).toEqual(files);
  });

  for (const [file, e] of Object.entries(expected)) {
    describe(file, () => {
      const events = replayThroughParser(openaiAdapter, model, file);
      const s = summarise(events);

      it("streams the exact text and reasoning", () => {
        expect(s.text).toBe(e.text);
        expect(s.reasoning).toBe(e.reasoning);
        expect(
          events.some((ev) => (ev.type === "text_delta" || ev.type === "reasoning_delta") && ev.text === ""),
        ).toBe(false);
      });

      it("assembles the tool calls", () => {
        expect(s.toolCalls).toEqual(e.toolCalls);
        for (const call of s.toolCalls) expect(JSON.parse(call.arguments)).toBeTypeOf("object");
      });

      it("reports finish reason, usage, id and model once, ending with done", () => {
        expect(s.error).toBeUndefined();
        expect(events.at(-1)).toBe(s.done);
        expect(events.filter((ev) => ev.type === "done" || ev.type === "error")).toHaveLength(1);
        expect(events.filter((ev) => ev.type === "usage")).toHaveLength(e.usage ? 1 : 0);
        expect(s.usage).toEqual(e.usage);
        expect(s.done?.usage).toEqual(e.usage);
        expect(s.done?.finishReason).toBe(e.finishReason);
        expect(s.done?.rawFinishReason).toBe(e.rawFinishReason);
        expect(s.done?.responseId).toBe(e.responseId);
        expect(s.done?.model).toBe(e.model);
      });

      it("builds the done message from the same deltas", () => {
        expect(s.done?.message).toEqual(expectedMessage(e));
      });

      it("emits each tool call before any usage and done", () => {
        const kinds = events
          .map((ev: ModelEvent) => ev.type)
          .filter((t) => t !== "text_delta" && t !== "reasoning_delta");
        const expectedKinds = [...e.toolCalls.map(() => "tool_call"), ...(e.usage ? ["usage"] : []), "done"];
        expect(kinds).toEqual(expectedKinds);
      });
    });
  }

  it("reports an early end when the stream is cut before its finish chunk and [DONE]", () => {
    for (const file of Object.keys(expected)) {
      const lines = loadChunks(file);
      const parser = openaiAdapter.createParser(model);
      const events: ModelEvent[] = [];
      // Drop every line from the first finish_reason on, and never send [DONE].
      const cut = lines.findIndex((l) => /"finish_reason":"[a-z_]+"/.test(l));
      for (const data of lines.slice(0, cut)) events.push(...parser.push({ data }));
      events.push(...parser.finish());
      const s = summarise(events);
      expect(s.done, file).toBeUndefined();
      expect(s.error?.error.code, file).toBe("provider_unavailable");
      expect(s.error?.error.message, file).toMatch(/ended early/);
      expect(events.at(-1), file).toBe(s.error);
    }
  });
});
