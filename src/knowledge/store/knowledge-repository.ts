/**
 * The synchronous SQLite core of the knowledge base: bases, documents and their chunks. A document
 * is always written whole in one transaction (its old chunks deleted, the new ones inserted, the
 * base's version bumped), so a search never sees half of a re-ingested file.
 */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../../errors.js";
import { vectorToBlob } from "../../memory/vectors/blob.js";
import type { ChildChunk, ParentChunk } from "../chunking/chunker.js";
import type { SearchFilter } from "../types.js";
import { ChunkBm25 } from "./chunk-bm25.js";
import { agentKey, type BaseRow, type DocumentRow, type PassageRow } from "./rows.js";
import { type KnowledgeStatements, prepareKnowledge } from "./statements.js";

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

const GLOB = /[*?[]/;

/** Bases, documents and chunks on one connection; callers map SQLite errors. */
export class KnowledgeRepository {
  readonly bm25: ChunkBm25;
  private readonly sql: KnowledgeStatements;
  private readonly writeTx: (docs: PreparedDocument[]) => WriteReport;
  private readonly vectorsTx: (
    documentId: number,
    kbId: number,
    model: string,
    vectors: Map<number, Float32Array>,
  ) => void;

  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
    maxPostings?: number,
  ) {
    this.sql = prepareKnowledge(db);
    this.bm25 = new ChunkBm25(db, maxPostings);
    this.writeTx = db.transaction((docs: PreparedDocument[]) => {
      const kbId = docs[0]!.kbId;
      const report: WriteReport = {
        kbId,
        before: this.sql.version.get(kbId) ?? 0,
        after: 0,
        documentIds: [],
        removedChildIds: [],
        addedVectors: [],
      };
      for (const doc of docs) report.documentIds.push(this.writeDocumentNow(doc, report));
      report.after = this.sql.version.get(kbId) ?? 0;
      return report;
    });
    this.vectorsTx = db.transaction((documentId, kbId, model, vectors) => {
      for (const [childId, vector] of vectors) {
        this.sql.setEmbedding.run(vectorToBlob(vector), model, vector.length, childId);
      }
      this.sql.setDocumentModel.run(model, this.now(), documentId);
      this.sql.bumpVersion.run(this.now(), kbId);
    });
  }

  /** A base by name: the agent's own first, then the shared one. */
  findBase(name: string, agentId?: string): BaseRow | undefined {
    if (agentId) {
      const own = this.sql.base.get(agentKey(agentId), name);
      if (own) return own;
    }
    return this.sql.base.get("", name);
  }

  /** The base (shared, or the agent's own) by name, created when missing. */
  ensureBase(name: string, agentId?: string, description = ""): BaseRow {
    const existing = this.sql.base.get(agentKey(agentId), name);
    if (existing) return existing;
    const now = this.now();
    this.sql.insertBase.run(name, agentKey(agentId), description, now, now);
    return this.sql.base.get(agentKey(agentId), name)!;
  }

  /** The base with its document and chunk counts, for display. */
  withCounts(row: BaseRow): BaseRow {
    return this.sql.baseWithCounts.get(row.id) ?? row;
  }

  /** Bases an agent may search (shared plus its own), without counts. */
  visibleBases(agentId: string | undefined): BaseRow[] {
    return this.sql.visibleBases.all(agentKey(agentId));
  }

  /** Bases visible to an agent (shared plus its own) with counts; every base when `agentId` is null. */
  listBases(agentId: string | null): BaseRow[] {
    return agentId === null ? this.sql.allBases.all() : this.sql.bases.all({ agent: agentId });
  }

  baseCount(): number {
    return this.sql.baseCount.get() ?? 0;
  }

  deleteBase(id: number): void {
    this.sql.deleteBase.run(id);
  }

  documentBySource(kbId: number, source: string): DocumentRow | undefined {
    return this.sql.documentBySource.get(kbId, source);
  }

  documentById(kbId: number, id: number): DocumentRow | undefined {
    return this.sql.documentById.get(kbId, id);
  }

  documents(kbId: number): DocumentRow[] {
    return this.sql.documents.all(kbId);
  }

  /**
   * Writes documents of one base with all their chunks, each replacing its earlier version, in one
   * transaction (one commit for a batch of small files is much cheaper than one per file).
   */
  writeDocuments(docs: PreparedDocument[]): WriteReport {
    if (docs.some((d) => d.kbId !== docs[0]?.kbId)) {
      throw new DimsumError("internal", "writeDocuments got documents of different bases");
    }
    return this.writeTx(docs);
  }

  /** Records a document that could not be read (only when no good version of it is stored). */
  writeFailed(doc: FailedDocument): void {
    const existing = this.sql.documentBySource.get(doc.kbId, doc.source);
    if (existing && existing.status === "ready") return;
    this.sql.upsertDocument.get({
      kbId: doc.kbId,
      source: doc.source,
      title: doc.title,
      mime: doc.mime,
      size: doc.size,
      hash: doc.hash,
      pages: null,
      status: "failed",
      error: doc.error,
      parents: 0,
      chunks: 0,
      model: null,
      now: this.now(),
    });
  }

  /** Deletes a document; its chunks and their index rows go with it (foreign keys and a trigger). */
  deleteDocument(kbId: number, documentId: number): WriteReport {
    return this.db.transaction((): WriteReport => {
      const before = this.sql.version.get(kbId) ?? 0;
      const removedChildIds = this.sql.childIdsOfDocument.all(documentId);
      this.sql.deleteDocument.run(documentId);
      this.sql.bumpVersion.run(this.now(), kbId);
      const after = this.sql.version.get(kbId) ?? 0;
      return { kbId, before, after, documentIds: [documentId], removedChildIds, addedVectors: [] };
    })();
  }

  /** A document's child chunks, for re-embedding without re-reading the source. */
  childrenOf(documentId: number) {
    return this.sql.childrenOfDocument.all(documentId);
  }

  /** Stores new vectors for existing child chunks of one document, in one transaction. */
  setVectors(documentId: number, kbId: number, model: string, vectors: Map<number, Float32Array>): void {
    this.vectorsTx(documentId, kbId, model, vectors);
  }

  /** Child chunks by id (unknown ids are left out). */
  children(ids: readonly number[]) {
    return ids.length === 0 ? [] : this.sql.children.all(JSON.stringify(ids));
  }

  /** Parent chunks by id with their document and base, for citations. */
  passages(ids: readonly number[]): PassageRow[] {
    return ids.length === 0 ? [] : this.sql.passages.all(JSON.stringify(ids));
  }

  /** Ready documents of the bases that pass the filter. */
  filteredDocuments(kbIds: readonly number[], filter: SearchFilter): number[] {
    const where = ["kb_id IN (SELECT value FROM json_each(?))", "status = 'ready'"];
    const params: string[] = [JSON.stringify(kbIds)];
    const path = filter.path?.trim();
    if (path) {
      if (GLOB.test(path)) {
        where.push("source GLOB ?");
        params.push(path.startsWith("/") || path.startsWith("*") ? path : `*${path}`);
      } else {
        where.push("(source = ? OR substr(source, 1, length(?)) = ? OR instr(source, ?) > 0)");
        params.push(path, path, path, `/${path.replace(/^\.?\//, "")}`);
      }
    }
    const mime = filter.mime?.trim().toLowerCase();
    if (mime) {
      where.push(GLOB.test(mime) ? "mime GLOB ?" : "mime = ?");
      params.push(mime);
    }
    return this.db
      .prepare<string[], number>(`SELECT id FROM kb_documents WHERE ${where.join(" AND ")}`)
      .pluck()
      .all(...params);
  }

  /** Totals across every base, for status. */
  counts(model: string | undefined): { documents: number; chunks: number; withVectors: number } {
    const { documents, chunks } = this.sql.counts.get() ?? { documents: 0, chunks: 0 };
    const withVectors = model ? (this.sql.chunksWithVectors.get(model) ?? 0) : 0;
    return { documents, chunks, withVectors };
  }

  private writeDocumentNow(doc: PreparedDocument, report: WriteReport): number {
    const chunks = doc.parents.reduce((sum, p) => sum + p.children.length, 0);
    const { id } = this.sql.upsertDocument.get({
      kbId: doc.kbId,
      source: doc.source,
      title: doc.title,
      mime: doc.mime,
      size: doc.size,
      hash: doc.hash,
      pages: doc.pages ?? null,
      status: "ready",
      error: null,
      parents: doc.parents.length,
      chunks,
      model: doc.embeddingModel ?? null,
      now: this.now(),
    })!;
    report.removedChildIds.push(...this.sql.childIdsOfDocument.all(id));
    this.sql.deleteParentsOf.run(id);
    doc.parents.forEach(({ chunk, children }, seq) => {
      const parentId = Number(
        this.sql.insertParent.run(
          id,
          seq,
          chunk.text,
          chunk.section ?? null,
          chunk.pageStart ?? null,
          chunk.pageEnd ?? null,
          chunk.tokens,
        ).lastInsertRowid,
      );
      children.forEach((child, childSeq) => {
        const vector = doc.embeddingModel ? child.vector : undefined;
        const childId = Number(
          this.sql.insertChild.run(
            parentId,
            id,
            doc.kbId,
            childSeq,
            child.chunk.text,
            child.chunk.section ?? null,
            child.chunk.pageStart ?? null,
            child.chunk.pageEnd ?? null,
            child.chunk.tokens,
            vector ? vectorToBlob(vector) : null,
            vector ? doc.embeddingModel! : null,
            vector ? vector.length : null,
          ).lastInsertRowid,
        );
        this.bm25.put(childId, doc.kbId, child.indexText);
        if (vector) report.addedVectors.push({ id: childId, documentId: id, vector });
      });
    });
    this.sql.bumpVersion.run(this.now(), doc.kbId);
    return id;
  }
}
