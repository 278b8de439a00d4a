/**
 * Long-term memory and knowledge for CLI sessions: the memory store over the session database, its
 * tools and context layer, and the knowledge bases' `rag_query` tool.
 */
import type { Database } from "better-sqlite3";
import type { LayerProvider } from "../agent/layered-context.js";
import type { DimsumConfig } from "../config/load-config.js";
import { createRagTool, KnowledgeService } from "../knowledge/index.js";
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
  /** Memory tools, and `rag_query` over the knowledge bases (`dimsum kb add`). */
  tools: Tool[];
  layers: LayerProvider;
}

/** Memory for one user's sessions; hybrid retrieval when DIMSUM_EMBEDDING_MODEL is set, else BM25. */
export function setUpMemory(db: Database, config: DimsumConfig): MemorySetup {
  const embeddingModel = resolveEmbeddingModel(config);
  const embedder = embeddingModel ? { embedder: createEmbedder(embeddingModel) } : {};
  const store = new SqliteMemoryStore(db, embedder);
  const knowledge = new KnowledgeService(db, embedder);
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
  return { store, tools: [...createMemoryTools(store), createRagTool(knowledge)], layers };
}
