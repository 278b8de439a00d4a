/** Knowledge base (RAG): ingestion, two-level chunks, hybrid retrieval with RRF and reranking, citations. */

export type { Block, ExtractedDocument } from "../attachments/extracted-document.js";
export {
  type ChildChunk,
  chunkBlocks,
  DEFAULT_CHUNKING,
  type ParentChunk,
  resolveChunking,
} from "./chunking/chunker.js";
export { type DetectedFormat, type FormatKind, formatOf, isPersonaFile } from "./formats/detect.js";
export { extractDocument } from "./formats/extract.js";
export { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES } from "./ingest/collect.js";
export { IngestJob } from "./ingest/ingest-job.js";
export { KnowledgeService, type KnowledgeServiceOptions } from "./knowledge-service.js";
export { createPostgresKnowledgeService } from "./postgres.js";
export { createRagTool, formatCitation, type RagToolOptions } from "./rag-tool.js";
export { createModelReranker, type ModelRerankerOptions, parseRerankReply } from "./retrieval/rerank.js";
export type {
  ChunkTextSearch,
  ChunkVectorSource,
  KnowledgeRepository,
} from "./store/knowledge-repository.js";
export { knowledgeTermsStep } from "./store/pg-knowledge-derived.js";
export {
  createPostgresKnowledgeRepository,
  PgKnowledgeRepository,
} from "./store/pg-knowledge-repository.js";
export { SqliteKnowledgeRepository } from "./store/sqlite-knowledge-repository.js";
export type {
  ChunkingOptions,
  Citation,
  DocumentRecord,
  DocumentStatus,
  IngestFileResult,
  IngestJobSnapshot,
  IngestJobStatus,
  IngestLimits,
  IngestOptions,
  IngestOutcome,
  IngestProgress,
  IngestResult,
  IngestSource,
  KnowledgeBaseInfo,
  KnowledgeMode,
  KnowledgeSearchQuery,
  KnowledgeSearchResult,
  KnowledgeStatus,
  Passage,
  Reranker,
  RerankStatus,
  RetrievalTrace,
  SearchFilter,
} from "./types.js";
