/** Token usage arithmetic and cost. */
import type { ModelPricing, Usage } from "../llm/types.js";

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
}

/** Sums two usages; optional fields stay absent unless either side has them. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) {
    sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  }
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) {
    sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  }
  if (a.cacheWriteTokens !== undefined || b.cacheWriteTokens !== undefined) {
    sum.cacheWriteTokens = (a.cacheWriteTokens ?? 0) + (b.cacheWriteTokens ?? 0);
  }
  return sum;
}

/**
 * Cost in USD, or undefined when the model's prices are unknown. Input read from the cache and input
 * written to it are billed at their own rates (the input rate where the price list has none).
 */
export function costOf(usage: Usage, pricing: ModelPricing | undefined): number | undefined {
  if (!pricing) return undefined;
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  const cachedRate = pricing.cachedInput ?? pricing.input;
  const writeRate = pricing.cacheWrite ?? pricing.input;
  return (
    (fresh * pricing.input +
      cached * cachedRate +
      written * writeRate +
      usage.outputTokens * pricing.output) /
    1_000_000
  );
}
