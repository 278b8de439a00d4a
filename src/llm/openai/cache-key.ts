/**
 * OpenAI's prompt-cache routing. Its caching is automatic (prefixes of 1,024 tokens and more); a
 * `prompt_cache_key` sends the calls of one session to the same cache, and `prompt_cache_retention:
 * "24h"` (models that accept it) keeps entries longer when the config asks for `cache.ttl: "1h"`.
 * Other OpenAI-compatible servers (DeepSeek, Qwen, Kimi, GLM) cache automatically and may reject
 * unknown fields, so the key is sent only to `openai` unless the quirk `promptCacheKey` says otherwise.
 */
import type { ModelSpec, StreamOptions } from "../types.js";

/** Model families whose API accepts `prompt_cache_retention`. */
const EXTENDED_RETENTION = /^(gpt-5|gpt-4\.1)/;

/** Adds `prompt_cache_key` (and the extended retention) to a Chat Completions body, in place. */
export function addPromptCacheFields(
  body: Record<string, unknown>,
  model: ModelSpec,
  options: StreamOptions,
): void {
  const quirk = model.quirks?.promptCacheKey;
  const send = typeof quirk === "boolean" ? quirk : model.provider === "openai";
  if (!send) return;
  if (options.cacheKey) body.prompt_cache_key = options.cacheKey;
  if (model.cacheTtl === "1h" && EXTENDED_RETENTION.test(model.id)) body.prompt_cache_retention = "24h";
}
