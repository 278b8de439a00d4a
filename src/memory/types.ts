/**
 * Long-term memory, MemGPT/Letta style: core blocks always in context, recall search over past
 * conversations, and archival memories retrieved by hybrid search. Everything is scoped to a user,
 * optionally narrowed to one agent.
 */

export type MemoryType = "semantic" | "episodic" | "procedural";

/** semantic: facts and preferences; episodic: events; procedural: how the user wants things done. */
export const MEMORY_TYPES: readonly MemoryType[] = ["semantic", "episodic", "procedural"];

/** How archival search ran: words and vectors fused, or words alone (no embedding model, or it failed). */
export type RetrievalMode = "hybrid" | "bm25";

/**
 * Whose memory. Without `agentId` reads see all of the user's archival memories and writes are
 * shared; with it, reads see the shared memories plus that agent's, and writes belong to the agent.
 */
export interface MemoryScope {
  userId: string;
  agentId?: string;
}

export interface MemoryRecord {
  id: string;
  userId: string;
  agentId?: string;
  type: MemoryType;
  text: string;
  tags: string[];
  /** 1 (trivia) .. 10 (must never be forgotten). */
  importance: number;
  /** 0..1: how sure the writer was. */
  confidence: number;
  sourceSessionId?: string;
  sourceRunId?: string;
  accessCount: number;
  createdAt: number;
  updatedAt: number;
  lastAccessedAt?: number;
  /** `provider:model` of the stored vector, if any. */
  embeddingModel?: string;
  embeddingDims?: number;
}

export interface RememberInput extends MemoryScope {
  text: string;
  type: MemoryType;
  tags?: string[];
  /** Default 5. */
  importance?: number;
  /** Default 1. */
  confidence?: number;
  sourceSessionId?: string;
  sourceRunId?: string;
}

export interface RememberResult {
  id: string;
  /** True when the text was folded into an existing near-duplicate memory (`id` is that memory). */
  merged: boolean;
  memory: MemoryRecord;
  /** Cosine (with vectors) or term Jaccard (without) against the memory merged into. */
  similarity?: number;
  /** Ids evicted to stay under the per-user cap. */
  evicted: string[];
  /** Set when the embedding could not be computed and the memory was stored without a vector. */
  warning?: string;
}

export interface MemorySearchQuery extends MemoryScope {
  query: string;
  /** Default 10, at most 100. */
  limit?: number;
  type?: MemoryType;
  /** Vector hits below this cosine are dropped before fusion (default 0). */
  minSimilarity?: number;
  signal?: AbortSignal;
}

export interface MemorySearchHit {
  memory: MemoryRecord;
  /** Fused and weighted score (see ranking.ts); higher is better. */
  score: number;
  /** 1-based rank in the BM25 list, if the memory was in it. */
  bm25Rank?: number;
  /** 1-based rank in the vector list, if the memory was in it. */
  vectorRank?: number;
  /** Approximate cosine similarity to the query, when vectors were used. */
  similarity?: number;
}

export interface MemorySearchResult {
  mode: RetrievalMode;
  hits: MemorySearchHit[];
  /** Why a hybrid-capable store fell back to BM25 for this query. */
  warning?: string;
}

export interface ListMemoriesOptions {
  agentId?: string;
  type?: MemoryType;
  /** Default 50. */
  limit?: number;
  offset?: number;
}

export interface CoreBlock {
  label: string;
  value: string;
  /** Most characters the block may hold. */
  limit: number;
  updatedAt: number;
  /** Set when the block belongs to one agent rather than to the user. */
  agentId?: string;
}

/** What a person may change in one of their archival memories; omitted fields stay as they are. */
export interface MemoryEdit {
  text?: string;
  type?: MemoryType;
  tags?: string[];
  /** 1..10. */
  importance?: number;
}

/** A core memory edit either succeeds or is refused with a reason written for the model. */
export type CoreEditResult = { ok: true; block: CoreBlock } | { ok: false; reason: string };

export interface RecallQuery {
  userId: string;
  /** Owners of the sessions searched (default: `userId`), e.g. a person and the channels they are in. */
  owners?: string[];
  query: string;
  /** Default 10. */
  limit?: number;
  /** Leave out one session (usually the live one, whose messages are already in context). */
  excludeSessionId?: string;
  /** Owner of the excluded session (default: `userId`). */
  excludeSessionOwner?: string;
}

export interface RecallHit {
  messageId: number;
  sessionId: string;
  role: "user" | "assistant";
  text: string;
  createdAt: number;
  /** Fused rank score; higher is better. */
  score: number;
}

export interface MemoryStatus {
  mode: RetrievalMode;
  embeddingModel?: string;
}

/** Turns texts into vectors; `model` names them so vectors of different models never mix. */
export interface Embedder {
  readonly model: string;
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
}

/** The memory repository. Async so that a networked database can implement it later. */
export interface MemoryStore {
  status(): MemoryStatus;
  remember(input: RememberInput, options?: { signal?: AbortSignal }): Promise<RememberResult>;
  /** Several memories with one embedding request; each may merge like `remember` unless `merge: false`. */
  rememberMany(
    inputs: RememberInput[],
    options?: { signal?: AbortSignal; merge?: boolean },
  ): Promise<RememberResult[]>;
  search(query: MemorySearchQuery): Promise<MemorySearchResult>;
  get(userId: string, id: string): Promise<MemoryRecord | undefined>;
  list(userId: string, options?: ListMemoriesOptions): Promise<MemoryRecord[]>;
  count(userId: string): Promise<number>;
  forget(userId: string, id: string): Promise<boolean>;
  /** Changes one memory (a new text is re-indexed and re-embedded); undefined when it does not exist. */
  update(userId: string, id: string, edit: MemoryEdit): Promise<MemoryRecord | undefined>;
  /** Counts a use of each memory (injected into a context, returned by a tool). */
  touch(userId: string, ids: readonly string[]): Promise<void>;
  coreBlocks(scope: MemoryScope): Promise<CoreBlock[]>;
  /** Every core block of the user: the shared ones and each agent's own. */
  allCoreBlocks(userId: string): Promise<CoreBlock[]>;
  /** Deletes one block: the agent's own with `agentId`, else the shared one; false when absent. */
  deleteCoreBlock(scope: MemoryScope, label: string): Promise<boolean>;
  coreAppend(scope: MemoryScope, label: string, text: string): Promise<CoreEditResult>;
  coreReplace(scope: MemoryScope, label: string, oldText: string, newText: string): Promise<CoreEditResult>;
  setCoreBlock(
    scope: MemoryScope,
    label: string,
    value: string,
    options?: { limit?: number },
  ): Promise<CoreEditResult>;
  recallSearch(query: RecallQuery): Promise<RecallHit[]>;
}
