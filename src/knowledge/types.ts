/**
 * The knowledge base as data: bases, documents, two-level chunks, ingestion progress and results,
 * search queries, cited passages and the trace of how a search ran.
 */
import type { Viewer, Visibility } from "../shared/visibility.js";

/** How retrieval runs: BM25 and vectors fused, or BM25 alone (no embedding model configured). */
export type KnowledgeMode = "hybrid" | "bm25";

export interface KnowledgeBaseInfo {
  id: string;
  name: string;
  /** Set for a per-agent base; shared bases have none. */
  agentId?: string;
  /** Who made it (an account id); undefined: made before owners existed, seen by everyone. */
  ownerId?: string;
  /** Who sees and searches it (src/shared/visibility.ts); undefined: everyone. */
  visibility?: Visibility;
  /** The people who see it besides its owner (visibility `people`). */
  allowedUsers?: string[];
  description: string;
  documents: number;
  chunks: number;
  createdAt: number;
  updatedAt: number;
}

export type DocumentStatus = "ready" | "failed";

export interface DocumentRecord {
  id: string;
  kb: string;
  /** Absolute path or URL; a document's identity inside its base. */
  source: string;
  title: string;
  mime: string;
  size: number;
  /** SHA-256 of the bytes, hex. */
  contentHash: string;
  /** Page count, for formats that have pages (PDF). */
  pages?: number;
  status: DocumentStatus;
  /** Why a `failed` document could not be read. */
  error?: string;
  parentChunks: number;
  childChunks: number;
  /** `provider:model` of the child-chunk vectors, when they have any. */
  embeddingModel?: string;
  createdAt: number;
  updatedAt: number;
}

/** Sizes in estimated tokens. Children overlap within their parent; parents only when a section spills. */
export interface ChunkingOptions {
  /** Target size of a parent chunk, what the model reads (default 800). */
  parentTokens?: number;
  /** Target size of a child chunk, what search matches (default 200). */
  childTokens?: number;
  /** Tokens a child repeats from the end of the previous child (default 40). */
  overlapTokens?: number;
  /** Tokens a parent repeats from the previous one when a long section is cut (default 0). */
  parentOverlapTokens?: number;
}

export interface IngestLimits {
  /** Largest file accepted, in bytes (default 20 MB). */
  maxFileBytes?: number;
  /** Most files in one batch, after folders are expanded (default 1,000). */
  maxFiles?: number;
}

/** Something to ingest: a file or folder on disk, or bytes already in hand (uploads, generated text). */
export type IngestSource =
  | { kind: "path"; path: string }
  | {
      kind: "bytes";
      /** File name; its extension picks the format unless `mime` is given. */
      name: string;
      data: Uint8Array | string;
      mime?: string;
      /** Identity in the base (e.g. a URL); defaults to `name`. */
      source?: string;
      title?: string;
    };

export interface IngestProgress {
  /** Files finished (indexed, unchanged, failed or skipped). */
  done: number;
  total: number;
  bytesDone: number;
  bytesTotal: number;
  /** The file being worked on, if any. */
  current?: string;
}

export type IngestOutcome = "added" | "updated" | "unchanged" | "failed" | "skipped";

export interface IngestFileResult {
  source: string;
  outcome: IngestOutcome;
  documentId?: string;
  chunks?: number;
  /** Why the file failed or was skipped. */
  reason?: string;
  /** Something went wrong without failing the file (e.g. vectors could not be computed). */
  warning?: string;
}

export interface IngestResult {
  kb: string;
  files: IngestFileResult[];
  added: number;
  updated: number;
  unchanged: number;
  failed: number;
  skipped: number;
  /** True when the signal stopped the batch; files finished before that stay indexed. */
  cancelled: boolean;
  bytes: number;
  ms: number;
}

export interface IngestOptions {
  signal?: AbortSignal;
  onProgress?: (progress: IngestProgress) => void;
  /** Per-agent base to write into (created if missing). */
  agentId?: string;
  /** Re-extract and re-embed even when the content hash is unchanged (reindex). */
  force?: boolean;
}

export type IngestJobStatus = "running" | "done" | "failed" | "cancelled";

/** A snapshot of an ingestion running in the background, as an API would return it. */
export interface IngestJobSnapshot {
  id: string;
  kb: string;
  status: IngestJobStatus;
  progress: IngestProgress;
  startedAt: number;
  finishedAt?: number;
  result?: IngestResult;
  error?: string;
}

export interface SearchFilter {
  /** Exact source, a prefix of it (a folder), or a glob with `*`/`?`. */
  path?: string;
  /** Exact mime type, or a family such as `text/*`. */
  mime?: string;
}

export interface KnowledgeSearchQuery {
  query: string;
  /** Passages returned (default 5, at most 100). */
  topK?: number;
  /** Base name(s) to search; default every base visible to `agentId` (shared ones without it). */
  kb?: string | string[];
  agentId?: string;
  /** Only bases this person may see (named ones they may not see are unknown); absent: every base. */
  viewer?: Viewer;
  filter?: SearchFilter;
  /** Use the configured reranker (default true when one is configured). */
  rerank?: boolean;
  /** Force one retriever (evaluation, debugging); default `hybrid` when an embedder is configured. */
  retrievers?: "hybrid" | "bm25" | "vector";
  signal?: AbortSignal;
}

export interface Citation {
  kb: string;
  documentId: string;
  title: string;
  source: string;
  mime: string;
  /** Heading path such as `Install › From source`, or a code declaration. */
  section?: string;
  pageStart?: number;
  pageEnd?: number;
  /** The parent chunk the passage is. */
  chunkId: string;
  /** The child chunks that matched inside it, best first. */
  matchedChunkIds: string[];
}

export interface Passage {
  /** The parent chunk text, what the model reads. */
  text: string;
  citation: Citation;
  /** Final score (reranker's 0..10 when reranked, else the fused RRF score). */
  score: number;
  fusedScore: number;
  bm25Rank?: number;
  vectorRank?: number;
  rerankScore?: number;
}

export type RerankStatus = "ok" | "failed" | "skipped";

export interface RetrievalTrace {
  /** What actually ranked this query: both lists, or one of them. */
  mode: KnowledgeMode | "vector";
  bases: string[];
  bm25: { hits: number; ms: number; terms: string[] };
  vector?: { hits: number; ms: number; model: string } | { error: string };
  rrfK: number;
  /** Child hits after fusion, and the distinct parents they expanded to. */
  fused: number;
  parents: number;
  rerank: { status: RerankStatus; reason?: string; candidates?: number; ms?: number };
  warnings: string[];
  ms: number;
}

export interface KnowledgeSearchResult {
  passages: Passage[];
  trace: RetrievalTrace;
}

export interface KnowledgeStatus {
  mode: KnowledgeMode;
  embeddingModel?: string;
  reranker?: string;
  /** One line saying how retrieval runs and, when degraded, how to fix it. */
  note: string;
  bases: number;
  documents: number;
  childChunks: number;
  /** Child chunks without a vector of the configured model (reindex to add them). */
  chunksWithoutVectors: number;
}

/** Scores passages for a query; throws (or rejects) on any failure, and the caller keeps the fused order. */
export interface Reranker {
  readonly name: string;
  rerank(
    query: string,
    passages: ReadonlyArray<{ id: string; text: string }>,
    signal?: AbortSignal,
  ): Promise<Map<string, number>>;
}
