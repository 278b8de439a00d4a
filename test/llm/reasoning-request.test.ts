/** Reasoning effort in each protocol's own words: the request bodies the builders produce. */
import { describe, expect, it } from "vitest";
import { buildAnthropicRequest } from "../../src/llm/anthropic/request.js";
import { buildGeminiRequest } from "../../src/llm/gemini/request.js";
import { openaiAdapter } from "../../src/llm/openai/index.js";
import type { Context, ModelSpec, ReasoningEffort } from "../../src/llm/types.js";

const context: Context = { messages: [{ role: "user", content: "hi" }] };

function spec(provider: string, protocol: ModelSpec["protocol"], id = "m"): ModelSpec {
  return { provider, id, protocol, baseUrl: "https://example.test/v1", contextWindow: 100_000 };
}

function body(model: ModelSpec, effort: ReasoningEffort): Record<string, unknown> {
  const options = { reasoning: { effort } };
  const request =
    model.protocol === "anthropic"
      ? buildAnthropicRequest(model, context, options)
      : model.protocol === "gemini"
        ? buildGeminiRequest(model, context, options)
        : openaiAdapter.buildRequest(model, context, options);
  return request.body as Record<string, unknown>;
}

const fields = (b: Record<string, unknown>, keys: string[]) =>
  Object.fromEntries(keys.filter((k) => k in b).map((k) => [k, b[k]]));

describe("reasoning effort per protocol", () => {
  it("OpenAI: reasoning_effort, `off` as minimal", () => {
    const openai = spec("openai", "openai", "gpt-5");
    expect(fields(body(openai, "low"), ["reasoning_effort"])).toStrictEqual({ reasoning_effort: "low" });
    expect(fields(body(openai, "medium"), ["reasoning_effort"])).toStrictEqual({
      reasoning_effort: "medium",
    });
    expect(fields(body(openai, "high"), ["reasoning_effort"])).toStrictEqual({ reasoning_effort: "high" });
    expect(fields(body(openai, "off"), ["reasoning_effort"])).toStrictEqual({ reasoning_effort: "minimal" });
  });

  it("other OpenAI-compatible servers: reasoning_effort, nothing for `off`", () => {
    const kimi = spec("kimi", "openai");
    expect(fields(body(kimi, "high"), ["reasoning_effort"])).toStrictEqual({ reasoning_effort: "high" });
    expect(fields(body(kimi, "off"), ["reasoning_effort", "thinking", "enable_thinking"])).toStrictEqual({});
  });

  it("DeepSeek: thinking {type} plus reasoning_effort low/high", () => {
    const deepseek = spec("deepseek", "openai", "deepseek-chat");
    const keys = ["thinking", "reasoning_effort"];
    expect(fields(body(deepseek, "off"), keys)).toStrictEqual({ thinking: { type: "disabled" } });
    expect(fields(body(deepseek, "low"), keys)).toStrictEqual({
      thinking: { type: "enabled" },
      reasoning_effort: "low",
    });
    expect(fields(body(deepseek, "medium"), keys)).toStrictEqual({
      thinking: { type: "enabled" },
      reasoning_effort: "high",
    });
  });

  it("Qwen (DashScope): enable_thinking with a thinking_budget", () => {
    const qwen = spec("qwen", "openai", "qwen-plus");
    const keys = ["enable_thinking", "thinking_budget", "reasoning_effort"];
    expect(fields(body(qwen, "off"), keys)).toStrictEqual({ enable_thinking: false });
    expect(fields(body(qwen, "low"), keys)).toStrictEqual({ enable_thinking: true, thinking_budget: 2048 });
    expect(fields(body(qwen, "high"), keys)).toStrictEqual({ enable_thinking: true, thinking_budget: 24576 });
  });

  it("GLM: thinking {type}", () => {
    const glm = spec("glm", "openai", "glm-4.5");
    expect(fields(body(glm, "off"), ["thinking"])).toStrictEqual({ thinking: { type: "disabled" } });
    expect(fields(body(glm, "medium"), ["thinking"])).toStrictEqual({ thinking: { type: "enabled" } });
  });

  it("Anthropic: a thinking budget, max_tokens above it; `off` sends no thinking", () => {
    const claude = { ...spec("anthropic", "anthropic", "claude-sonnet-4-5"), maxOutputTokens: 4096 };
    expect(fields(body(claude, "low"), ["thinking"])).toStrictEqual({
      thinking: { type: "enabled", budget_tokens: 2048 },
    });
    const high = body(claude, "high");
    expect(high.thinking).toStrictEqual({ type: "enabled", budget_tokens: 24576 });
    expect(high.max_tokens as number).toBeGreaterThan(24576);
    expect("thinking" in body(claude, "off")).toBe(false);
  });

  it("Gemini: thinkingConfig.thinkingBudget; `off` is a budget of 0 without thoughts", () => {
    const gemini = spec("gemini", "gemini", "gemini-2.5-flash");
    const config = (effort: ReasoningEffort) =>
      (body(gemini, effort).generationConfig as { thinkingConfig?: unknown }).thinkingConfig;
    expect(config("low")).toStrictEqual({ includeThoughts: true, thinkingBudget: 1024 });
    expect(config("medium")).toStrictEqual({ includeThoughts: true, thinkingBudget: 8192 });
    expect(config("off")).toStrictEqual({ includeThoughts: false, thinkingBudget: 0 });
  });
});
