/** Non-streaming `chat.completion` bodies turn into the same events a stream gives. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseChatCompletion } from "../../src/llm/openai/index.js";
import { fixturesDir, summarise } from "../support/fixtures.js";

const body = (file: string): unknown => JSON.parse(readFileSync(join(fixturesDir, file), "utf8"));

describe("parseChatCompletion", () => {
  it("reads the DeepSeek tool-call body", () => {
    const events = parseChatCompletion(body("deepseek--deepseek-tool-call.json"), "deepseek");
    const s = summarise(events);
    const reasoning = "The user asks about weather in San Francisco. I'll call the weather tool.";
    const call = {
      id: "call_00_lCIkdHRa7AKmCG3TlxXz1061",
      name: "weather",
      arguments: '{"location": "San Francisco"}',
    };
    expect(s.text).toBe("");
    expect(s.reasoning).toBe(reasoning);
    expect(s.toolCalls).toEqual([call]);
    expect(JSON.parse(call.arguments)).toEqual({ location: "San Francisco" });
    const usage = {
      inputTokens: 374,
      outputTokens: 60,
      totalTokens: 434,
      reasoningTokens: 16,
      cachedInputTokens: 0,
    };
    expect(s.usage).toEqual(usage);
    expect(s.done).toEqual({
      type: "done",
      finishReason: "tool_calls",
      rawFinishReason: "tool_calls",
      usage,
      responseId: "21d2ddcb-4947-4e28-a783-857aedbe6ace",
      model: "deepseek-v4-flash",
      message: {
        role: "assistant",
        content: [
          { type: "reasoning", text: reasoning },
          { type: "tool_call", ...call },
        ],
      },
    });
    expect(events.map((e) => e.type)).toEqual(["reasoning_delta", "tool_call", "usage", "done"]);
  });

  it("reads the DeepSeek reasoning body from its text", () => {
    const text = readFileSync(join(fixturesDir, "deepseek--deepseek-reasoning.json"), "utf8");
    const s = summarise(parseChatCompletion(text, "deepseek"));
    expect(s.text).toBe("There are **3** “r”s in **“strawberry”**.");
    expect(s.reasoning.startsWith("We need answer simple. Count r in strawberry.")).toBe(true);
    expect(s.reasoning.endsWith("Total 3. Need respond.")).toBe(true);
    expect(s.toolCalls).toEqual([]);
    expect(s.done?.finishReason).toBe("stop");
    expect(s.usage).toEqual({
      inputTokens: 97,
      outputTokens: 131,
      totalTokens: 228,
      reasoningTokens: 113,
      cachedInputTokens: 0,
    });
    expect(s.done?.message.content.map((p) => p.type)).toEqual(["reasoning", "text"]);
  });

  it("reads the xAI body, whose tool call has no index", () => {
    const s = summarise(parseChatCompletion(body("openai-compatible--xai-tool-call.json")));
    expect(s.text).toBe("");
    expect(s.reasoning.startsWith("First, the user is asking about the weather in San Francisco.")).toBe(
      true,
    );
    expect(s.toolCalls).toEqual([
      { id: "call_46427107", name: "weather", arguments: '{"location":"San Francisco"}' },
    ]);
    expect(s.done?.finishReason).toBe("tool_calls");
    expect(s.usage).toEqual({
      inputTokens: 307,
      outputTokens: 26,
      totalTokens: 588,
      reasoningTokens: 255,
      cachedInputTokens: 244,
    });
    expect(s.done?.responseId).toBe("acfa24c3-b556-0f2c-731e-64fb836d544b");
    expect(s.done?.model).toBe("grok-3-mini");
  });

  it("keeps several un-indexed tool calls apart", () => {
    const s = summarise(
      parseChatCompletion({
        choices: [
          {
            message: {
              role: "assistant",
              content: null,
              tool_calls: [
                { id: "a", type: "function", function: { name: "one", arguments: '{"x":1}' } },
                { id: "b", type: "function", function: { name: "two", arguments: "" } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
      }),
    );
    expect(s.toolCalls).toEqual([
      { id: "a", name: "one", arguments: '{"x":1}' },
      { id: "b", name: "two", arguments: "{}" },
    ]);
  });

  it("turns an error body or a non-JSON body into an error event", () => {
    const rate = parseChatCompletion(
      { error: { message: "Slow down", type: "rate_limit_error", code: 429 } },
      "groq",
    );
    expect(rate).toHaveLength(1);
    const s = summarise(rate);
    expect(s.error?.error.code).toBe("rate_limit");
    expect(s.error?.error.message).toContain("Slow down");
    expect(s.error?.error.message).toContain("groq");
    const junk = summarise(parseChatCompletion("<html>Bad gateway</html>"));
    expect(junk.error?.error.code).toBe("provider_unavailable");
    expect(junk.error?.error.message).toContain("<html>Bad gateway</html>");
  });
});
