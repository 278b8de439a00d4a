/** An Embedder backed by a provider's embeddings endpoint. */
import { type EmbedOptions, embed } from "../llm/embeddings.js";
import type { ModelSpec } from "../llm/types.js";
import type { Embedder } from "./types.js";

/** Wraps `embed` for one model; `model` is `provider:id` so stored vectors name where they came from. */
export function createEmbedder(spec: ModelSpec, options: Omit<EmbedOptions, "signal"> = {}): Embedder {
  const model = `${spec.provider}:${spec.id}${options.dimensions ? `@${options.dimensions}` : ""}`;
  return {
    model,
    embed: (texts, signal) => embed(spec, texts, signal ? { ...options, signal } : options),
  };
}
