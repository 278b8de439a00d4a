/** Maps OpenAI-style `usage` objects and finish reasons to the canonical types. */
import type { FinishReason, Usage } from "../types.js";
import { asNumber, asRecord, type JsonRecord } from "./json.js";

/** Converts a Chat Completions `usage` object; undefined when it carries no token counts. */
export function toUsage(raw: JsonRecord): Usage | undefined {
  const input = asNumber(raw.prompt_tokens);
  const output = asNumber(raw.completion_tokens);
  if (input === undefined && output === undefined) return undefined;
  const inputTokens = input ?? 0;
  const outputTokens = output ?? 0;
  const usage: Usage = {
    inputTokens,
    outputTokens,
    // Kept as reported: xAI's total includes reasoning tokens that completion_tokens leaves out.
    totalTokens: asNumber(raw.total_tokens) ?? inputTokens + outputTokens,
  };
  const reasoning = asNumber(asRecord(raw.completion_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  const cached = cachedTokens(raw);
  if (cached !== undefined) usage.cachedInputTokens = cached;
  return usage;
}

// OpenAI reports prompt_tokens_details.cached_tokens; DeepSeek also (and earlier only) prompt_cache_hit_tokens.
function cachedTokens(raw: JsonRecord): number | undefined {
  const details = asNumber(asRecord(raw.prompt_tokens_details)?.cached_tokens);
  const deepseek = asNumber(raw.prompt_cache_hit_tokens);
  if (details === undefined) return deepseek;
  if (deepseek === undefined) return details;
  return Math.max(details, deepseek);
}

const finishReasons = new Map<string, FinishReason>(
  Object.entries({
    stop: "stop",
    eos: "stop",
    end_turn: "stop",
    length: "length",
    model_length: "length", // Mistral
    max_tokens: "length",
    tool_calls: "tool_calls",
    function_call: "tool_calls",
    content_filter: "content_filter",
    sensitive: "content_filter", // GLM
    network_error: "error", // GLM
    insufficient_system_resource: "error", // DeepSeek
    error: "error", // OpenRouter, after an in-stream error
  } satisfies Record<string, FinishReason>),
);

/** Maps a vendor's `finish_reason` to the canonical reason; unknown values become `other`. */
export function mapFinishReason(raw: string): FinishReason {
  return finishReasons.get(raw) ?? "other";
}
