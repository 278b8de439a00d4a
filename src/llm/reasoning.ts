/**
 * Reasoning effort (`off | low | medium | high`) mapped to each protocol's own control. The
 * mapping table is in the README ("Reasoning effort"); each request builder asks here for its fields.
 */
import type { ModelSpec, ReasoningEffort, StreamOptions } from "./types.js";

export const REASONING_EFFORTS: readonly ReasoningEffort[] = ["off", "low", "medium", "high"];

/** True for one of the four effort words. */
export function isReasoningEffort(value: unknown): value is ReasoningEffort {
  return typeof value === "string" && (REASONING_EFFORTS as readonly string[]).includes(value);
}

/** Thinking token budgets for Anthropic (its minimum is 1,024) and Gemini, by effort. */
export const THINKING_BUDGETS = {
  anthropic: { low: 2048, medium: 8192, high: 24576 },
  gemini: { low: 1024, medium: 8192, high: 24576 },
  qwen: { low: 2048, medium: 8192, high: 24576 },
} as const;

type Reasoning = NonNullable<StreamOptions["reasoning"]>;

/** The thinking budget of a protocol for this call: undefined when thinking is not asked for, 0 when switched off. */
export function thinkingBudgetFor(
  family: keyof typeof THINKING_BUDGETS,
  reasoning: Reasoning | undefined,
): number | undefined {
  if (!reasoning) return undefined;
  if (reasoning.effort === "off") return 0;
  if (reasoning.budgetTokens !== undefined) return reasoning.budgetTokens;
  return reasoning.effort ? THINKING_BUDGETS[family][reasoning.effort] : undefined;
}

/**
 * Body fields of an OpenAI-compatible request. The switch depends on whose API it is:
 * DeepSeek and GLM `thinking: {type}`, Qwen (DashScope) `enable_thinking` + `thinking_budget`,
 * everyone else OpenAI's `reasoning_effort` (`off` is `minimal` for OpenAI itself, and not sent elsewhere).
 */
export function openaiReasoningFields(
  model: ModelSpec,
  reasoning: Reasoning | undefined,
): Record<string, unknown> {
  const effort = reasoning?.effort;
  if (!reasoning || (effort === undefined && reasoning.budgetTokens === undefined)) return {};
  switch (model.provider) {
    case "deepseek":
      if (effort === "off") return { thinking: { type: "disabled" } };
      // DeepSeek accepts low/high/max; medium maps to high on its side, so say so here.
      return {
        thinking: { type: "enabled" },
        ...(effort ? { reasoning_effort: effort === "low" ? "low" : "high" } : {}),
      };
    case "glm":
      return { thinking: { type: effort === "off" ? "disabled" : "enabled" } };
    case "qwen": {
      if (effort === "off") return { enable_thinking: false };
      const budget = thinkingBudgetFor("qwen", reasoning);
      return { enable_thinking: true, ...(budget ? { thinking_budget: budget } : {}) };
    }
    default:
      if (effort === undefined) return {};
      if (effort === "off") return model.provider === "openai" ? { reasoning_effort: "minimal" } : {};
      return { reasoning_effort: effort };
  }
}
