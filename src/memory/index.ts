/** Long-term memory: core blocks, recall search, archival memories with hybrid retrieval. */
export { createEmbedder } from "./embedder.js";
export { EMBEDDING_MODEL_ENV, resolveEmbeddingModel } from "./embedding-config.js";
export {
  type ExtractedMemory,
  type ExtractOptions,
  type ExtractResult,
  extractMemories,
  saveExtracted,
} from "./extract.js";
export { type MemoryLayers, type MemoryLayersOptions, memoryLayers } from "./injection.js";
export {
  createPostgresMemoryStore,
  PostgresMemoryStore,
  type PostgresMemoryStoreOptions,
} from "./postgres-memory-store.js";
export {
  DEFAULT_SEARCH_WEIGHTS,
  EVICTION_WEIGHTS,
  evictionScore,
  RECENCY_HALF_LIFE_DAYS,
  RRF_K,
  reciprocalRankFusion,
  type SearchWeights,
  weightFactor,
} from "./ranking.js";
export { SqliteMemoryStore, type SqliteMemoryStoreOptions } from "./sqlite-memory-store.js";
export type { MemoryStoreOptions } from "./store-front.js";
export { createMemoryTools, type MemoryToolsOptions } from "./tools.js";
export {
  type CoreBlock,
  type CoreEditResult,
  type Embedder,
  type ListMemoriesOptions,
  MEMORY_TYPES,
  type MemoryEdit,
  type MemoryRecord,
  type MemoryScope,
  type MemorySearchHit,
  type MemorySearchQuery,
  type MemorySearchResult,
  type MemoryStatus,
  type MemoryStore,
  type MemoryType,
  type RecallHit,
  type RecallQuery,
  type RememberInput,
  type RememberResult,
  type RetrievalMode,
} from "./types.js";
