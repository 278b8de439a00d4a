/** Which embedding model memory uses: `DIMSUM_EMBEDDING_MODEL` (e.g. `openai:text-embedding-3-small`), or none. */
import type { DimsumConfig } from "../config/load-config.js";
import { resolveModel } from "../config/resolve-model.js";
import { DimsumError } from "../errors.js";
import type { ModelSpec } from "../llm/types.js";

export const EMBEDDING_MODEL_ENV = "DIMSUM_EMBEDDING_MODEL";

/**
 * The embedding model spec (base URL and key resolved like a chat model's), or undefined when none
 * is configured, in which case memory retrieval runs on BM25 alone.
 */
export function resolveEmbeddingModel(config: DimsumConfig): ModelSpec | undefined {
  const value = config.embeddingModel;
  if (!value) return undefined;
  const spec = resolveModel(config, value);
  if (spec.protocol === "anthropic") {
    throw new DimsumError(
      "config",
      `${EMBEDDING_MODEL_ENV}=${value}: ${spec.provider} offers no embeddings API`,
      {
        hint: "use an OpenAI-compatible, Gemini or Ollama model, e.g. openai:text-embedding-3-small, gemini:text-embedding-004, ollama:nomic-embed-text",
      },
    );
  }
  return spec;
}
