/**
 * What the knowledge base stores and how search reads it, behind one async interface with a SQLite
 * implementation (sqlite-knowledge-repository.ts, FTS5) and a PostgreSQL one
 * (pg-knowledge-repository.ts, BM25 over term tables). A document is always written whole in one
 * transaction (its old chunks deleted, the new ones inserted, the base's version bumped), so a search
 * never sees half of a re-ingested file, on either backend.
 */
import type { Visible } from "../../shared/visibility.js";
import type { ChildChunk, ParentChunk } from "../chunking/chunker.js";
import type { SearchFilter } from "../types.js";
import type { BaseRow, ChildRow, DocumentRow, PassageRow } from "./rows.js";

export interface PreparedChild {
  chunk: ChildChunk;
  /** What search indexes: the chunk text, with the document title and section in front when useful. */
  indexText: string;
  vector?: Float32Array;
}

export interface PreparedDocument {
  kbId: number;
  source: string;
  title: string;
  mime: string;
  size: number;
  hash: string;
  pages?: number;
  parents: Array<{ chunk: ParentChunk; children: PreparedChild[] }>;
  /** Set when the children carry vectors of this model. */
  embeddingModel?: string;
}

export interface FailedDocument {
  kbId: number;
  source: string;
  title: string;
  mime: string;
  size: number;
  hash: string;
  error: string;
}

/** What one write transaction changed in a base, for patching in-memory vector indexes. */
export interface WriteReport {
  kbId: number;
  /** The base's version before and after the transaction. */
  before: number;
  after: number;
  /** Document ids written, in input order. */
  documentIds: number[];
  removedChildIds: number[];
  addedVectors: Array<{ id: number; documentId: number; vector: Float32Array }>;
}

export interface Bm25Hit {
  id: number;
  /** BM25 relevance, higher is better. */
  score: number;
}

/** A child chunk as re-embedding needs it. */
export type StoredChild = ChildRow & { seq: number };

/** Ranked full-text lookup over child chunks (FTS5 on SQLite, term tables on PostgreSQL). */
export interface ChunkTextSearch {
  /**
   * The best `limit` child chunks for the query terms (from `queryTerms`), best first, scored with
   * BM25 (k1 = 1.2, b = 0.75, single CJK characters weighted down); `kbIds` undefined searches every
   * base, `documentIds` (when given) keeps only chunks of those documents.
   */
  searchText(
    terms: readonly string[],
    limit: number,
    kbIds?: readonly number[],
    documentIds?: readonly number[],
  ): Promise<Bm25Hit[]>;
}

/** Where in-memory vector indexes load from, and how they tell they are stale. */
export interface ChunkVectorSource {
  /** The current version of each base (bumped by every write to it, from any process); missing ones left out. */
  baseVersions(kbIds: readonly number[]): Promise<Map<number, number>>;
  /** Calls `add` for every child chunk of the base with a vector of this model and size. */
  loadVectors(
    kbId: number,
    model: string,
    dims: number,
    add: (id: number, documentId: number, vector: Float32Array) => void,
  ): Promise<void>;
}

/** Bases, documents and chunks. Store failures reject with a DimsumError naming the database. */
export interface KnowledgeRepository extends ChunkTextSearch, ChunkVectorSource {
  /** A base by name: the agent's own first, then the shared one. */
  findBase(name: string, agentId?: string): Promise<BaseRow | undefined>;
  /** The base (shared, or the agent's own) by name, created when missing. */
  ensureBase(name: string, agentId?: string, description?: string, visible?: Visible): Promise<BaseRow>;
  /** Changes who sees a base (visibility and allowed people; the owner stays). */
  setVisibility(id: number, visible: Visible): Promise<void>;
  /** The base with its document and chunk counts, for display (the row itself when it is gone). */
  withCounts(row: BaseRow): Promise<BaseRow>;
  /** Bases an agent may search (shared plus its own), by name, without counts. */
  visibleBases(agentId: string | undefined): Promise<BaseRow[]>;
  /** Bases visible to an agent (shared plus its own) with counts; every base when `agentId` is null. */
  listBases(agentId: string | null): Promise<BaseRow[]>;
  /** How many bases there are. */
  baseCount(): Promise<number>;
  /** Deletes a base with its documents, chunks and index entries. */
  deleteBase(id: number): Promise<void>;
  documentBySource(kbId: number, source: string): Promise<DocumentRow | undefined>;
  documentById(kbId: number, id: number): Promise<DocumentRow | undefined>;
  /** The base's documents by source. */
  documents(kbId: number): Promise<DocumentRow[]>;
  /**
   * Writes documents of one base with all their chunks, each replacing its earlier version, in one
   * transaction (one commit for a batch of small files is much cheaper than one per file).
   */
  writeDocuments(docs: PreparedDocument[]): Promise<WriteReport>;
  /** Records a document that could not be read (only when no good version of it is stored). */
  writeFailed(doc: FailedDocument): Promise<void>;
  /** Deletes a document with its chunks and their index entries. */
  deleteDocument(kbId: number, documentId: number): Promise<WriteReport>;
  /** A document's child chunks in id order, for re-embedding without re-reading the source. */
  childrenOf(documentId: number): Promise<StoredChild[]>;
  /** Stores new vectors for existing child chunks of one document, in one transaction. */
  setVectors(
    documentId: number,
    kbId: number,
    model: string,
    vectors: Map<number, Float32Array>,
  ): Promise<void>;
  /** Child chunks by id (unknown ids are left out). */
  children(ids: readonly number[]): Promise<ChildRow[]>;
  /** Parent chunks by id with their document and base, for citations. */
  passages(ids: readonly number[]): Promise<PassageRow[]>;
  /**
   * Ready documents of the bases that pass the filter: `path` as a glob (`*`, `?`, `[…]`) or as a
   * source, prefix or path segment; `mime` exact or as a glob.
   */
  filteredDocuments(kbIds: readonly number[], filter: SearchFilter): Promise<number[]>;
  /** Totals across every base, for status; `withVectors` counts chunks with a vector of `model`. */
  counts(model: string | undefined): Promise<{ documents: number; chunks: number; withVectors: number }>;
}
