/**
 * The knowledge base on SQLite: bases, documents and their chunks over prepared statements, chunk
 * text in FTS5 (chunk-bm25.ts), vectors as Float32 BLOBs. The work is synchronous (better-sqlite3);
 * the async methods only wrap it, and turn SQLite failures into DimsumErrors naming the file.
 */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../../errors.js";
import { blobToVector, vectorToBlob } from "../../memory/vectors/blob.js";
import { sqliteDatabase } from "../../store/sql-database.js";
import { sqliteCode, storeError } from "../../store/sqlite-errors.js";
import type { SearchFilter } from "../types.js";
import { ChunkBm25 } from "./chunk-bm25.js";
import { KnowledgeReads } from "./knowledge-reads.js";
import type {
  Bm25Hit,
  FailedDocument,
  KnowledgeRepository,
  PreparedDocument,
  WriteReport,
} from "./knowledge-repository.js";
import { GLOB, globPattern, pathSegment } from "./rows.js";
import { type KnowledgeStatements, prepareKnowledge } from "./statements.js";

/** The SQLite implementation of KnowledgeRepository on one connection from `openDatabase`. */
export class SqliteKnowledgeRepository extends KnowledgeReads implements KnowledgeRepository {
  /** The FTS5 index, for callers that search it synchronously. */
  readonly bm25: ChunkBm25;
  private readonly sql: KnowledgeStatements;
  private readonly writeTx: (docs: PreparedDocument[]) => WriteReport;
  private readonly deleteTx: (kbId: number, documentId: number) => WriteReport;
  private readonly vectorsTx: (
    documentId: number,
    kbId: number,
    model: string,
    vectors: Map<number, Float32Array>,
  ) => void;
  private readonly vectorRows;

  constructor(
    private readonly db: Database,
    now: () => number = Date.now,
    maxPostings?: number,
  ) {
    super(sqliteDatabase(db), now);
    this.sql = prepareKnowledge(db);
    this.bm25 = new ChunkBm25(db, maxPostings);
    this.vectorRows = db.prepare<
      [number, string, number],
      { id: number; document_id: number; embedding: Buffer }
    >(
      `SELECT id, document_id, embedding FROM kb_child_chunks
       WHERE kb_id = ? AND embedding_model = ? AND embedding_dims = ? AND embedding IS NOT NULL`,
    );
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
    this.deleteTx = db.transaction((kbId: number, documentId: number): WriteReport => {
      const before = this.sql.version.get(kbId) ?? 0;
      const removedChildIds = this.sql.childIdsOfDocument.all(documentId);
      this.sql.deleteDocument.run(documentId);
      this.sql.bumpVersion.run(this.now(), kbId);
      const after = this.sql.version.get(kbId) ?? 0;
      return { kbId, before, after, documentIds: [documentId], removedChildIds, addedVectors: [] };
    });
    this.vectorsTx = db.transaction((documentId, kbId, model, vectors) => {
      for (const [childId, vector] of vectors) {
        this.sql.setEmbedding.run(vectorToBlob(vector), model, vector.length, childId);
      }
      this.sql.setDocumentModel.run(model, this.now(), documentId);
      this.sql.bumpVersion.run(this.now(), kbId);
    });
  }

  async deleteBase(id: number): Promise<void> {
    this.guard("write to", () => this.sql.deleteBase.run(id));
  }

  async writeDocuments(docs: PreparedDocument[]): Promise<WriteReport> {
    if (docs.some((d) => d.kbId !== docs[0]?.kbId)) {
      throw new DimsumError("internal", "writeDocuments got documents of different bases");
    }
    return this.guard("write to", () => this.writeTx(docs));
  }

  async writeFailed(doc: FailedDocument): Promise<void> {
    this.guard("write to", () => {
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
    });
  }

  /** Deletes a document; its chunks and their index rows go with it (foreign keys and a trigger). */
  async deleteDocument(kbId: number, documentId: number): Promise<WriteReport> {
    return this.guard("write to", () => this.deleteTx(kbId, documentId));
  }

  async setVectors(
    documentId: number,
    kbId: number,
    model: string,
    vectors: Map<number, Float32Array>,
  ): Promise<void> {
    this.guard("write to", () => this.vectorsTx(documentId, kbId, model, vectors));
  }

  async filteredDocuments(kbIds: readonly number[], filter: SearchFilter): Promise<number[]> {
    const where = ["kb_id IN (SELECT value FROM json_each(?))", "status = 'ready'"];
    const params: string[] = [JSON.stringify(kbIds)];
    const path = filter.path?.trim();
    if (path) {
      if (GLOB.test(path)) {
        where.push("source GLOB ?");
        params.push(globPattern(path));
      } else {
        where.push("(source = ? OR substr(source, 1, length(?)) = ? OR instr(source, ?) > 0)");
        params.push(path, path, path, pathSegment(path));
      }
    }
    const mime = filter.mime?.trim().toLowerCase();
    if (mime) {
      where.push(GLOB.test(mime) ? "mime GLOB ?" : "mime = ?");
      params.push(mime);
    }
    return this.guard("read", () =>
      this.db
        .prepare<string[], number>(`SELECT id FROM kb_documents WHERE ${where.join(" AND ")}`)
        .pluck()
        .all(...params),
    );
  }

  async searchText(
    terms: readonly string[],
    limit: number,
    kbIds?: readonly number[],
    documentIds?: readonly number[],
  ): Promise<Bm25Hit[]> {
    return this.guard("read", () => {
      // Searching every base needs no base filter in the FTS query, which makes it cheaper.
      const everyBase =
        kbIds !== undefined && kbIds.length > 0 && new Set(kbIds).size >= (this.sql.baseCount.get() ?? 0);
      return this.bm25.search(terms, limit, everyBase ? undefined : kbIds, documentIds);
    });
  }

  async loadVectors(
    kbId: number,
    model: string,
    dims: number,
    add: (id: number, documentId: number, vector: Float32Array) => void,
  ): Promise<void> {
    this.guard("read", () => {
      for (const row of this.vectorRows.iterate(kbId, model, dims)) {
        add(row.id, row.document_id, blobToVector(row.embedding));
      }
    });
  }

  private guard<T>(action: string, work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw sqliteCode(err) ? storeError(err, this.db.name, action) : err;
    }
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
