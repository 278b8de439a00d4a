/** Long-term memory for CLI sessions: the store over the session database, its tools and its context layer. */
import type { Database } from "better-sqlite3";
import type { LayerProvider } from "../agent/layered-context.js";
import type { DimsumConfig } from "../config/load-config.js";
import {
  createEmbedder,
  createMemoryTools,
  type MemoryStore,
  memoryLayers,
  resolveEmbeddingModel,
  SqliteMemoryStore,
} from "../memory/index.js";
import type { Tool } from "../tools/types.js";

export interface MemorySetup {
  store: MemoryStore;
  tools: Tool[];
  layers: LayerProvider;
}

/** Memory for one user's sessions; hybrid retrieval when DIMSUM_EMBEDDING_MODEL is set, else BM25. */
export function setUpMemory(db: Database, config: DimsumConfig): MemorySetup {
  const embeddingModel = resolveEmbeddingModel(config);
  const store = new SqliteMemoryStore(db, embeddingModel ? { embedder: createEmbedder(embeddingModel) } : {});
  const layers: LayerProvider = async ({ userId, query, signal }) => {
    if (!userId) return { layers: {} };
    const result = await memoryLayers(store, { userId, query, signal });
    return {
      layers: { coreMemory: result.coreMemory, memories: result.memories },
      memories: result.trace.ids.map((id, i) => {
        const score = result.trace.scores[i];
        return score === undefined ? { id } : { id, score };
      }),
      memoryMode: result.trace.mode,
    };
  };
  return { store, tools: createMemoryTools(store), layers };
}
