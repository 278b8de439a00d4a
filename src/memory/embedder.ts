/** An Embedder backed by a provider's embeddings endpoint. */
import type { EmbedOptions } from "../llm/embeddings.js";
import type { ModelSpec } from "../llm/types.js";
import type { Embedder } from "./types.js";

/** Wraps `embed` for one model; `model` is `provider:id` so stored vectors name where they came from. */
export function createEmbedder(spec: ModelSpec, options: Omit<EmbedOptions, "signal"> = {}): Embedder {
  const model = `${spec.provider}:${spec.id}${options.dimensions ? `@${options.dimensions}` : ""}`;
  return {
    model,
    // The embeddings client (and the provider adapters it uses) loads with the first call.
    embed: async (texts, signal) => {
      const { embed } = await import("../llm/embeddings.js");
      return embed(spec, texts, signal ? { ...options, signal } : options);
    },
  };
}
