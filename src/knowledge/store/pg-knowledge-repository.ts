/**
 * The knowledge base on PostgreSQL (migration 4): the same rows as on SQLite, BM25 over term tables
 * (pg-chunk-terms.ts) and vectors as Float32 bytes that each instance searches in memory
 * (chunk-vectors.ts reloads a base when its version moved). Every write transaction starts by
 * bumping its base's version, which locks the base's row: writers of one base, on any instance,
 * follow each other, and the version before and after a write is exact.
 */
import { DimsumError } from "../../errors.js";
import { blobToVector, vectorToBlob } from "../../memory/vectors/blob.js";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { postgresDatabase } from "../../store/sql-database.js";
import type { SearchFilter } from "../types.js";
import { DEFAULT_MAX_POSTINGS } from "./chunk-bm25.js";
import { KnowledgeReads } from "./knowledge-reads.js";
import type {
  Bm25Hit,
  FailedDocument,
  KnowledgeRepository,
  PreparedDocument,
  WriteReport,
} from "./knowledge-repository.js";
import { searchChunkTerms } from "./pg-chunk-terms.js";
import { clean, lockBase, unindexDocuments, writeDocumentsIn } from "./pg-knowledge-writes.js";
import { GLOB, globPattern, pathSegment } from "./rows.js";

export interface PgKnowledgeOptions {
  now?: () => number;
  /** BM25 work cap in postings (see chunk-bm25.ts). */
  maxPostings?: number;
}

/** A SQLite GLOB pattern (`*`, `?`, `[…]`, `[^…]`, case-sensitive) as an anchored POSIX regex. */
export function globToRegex(glob: string): string {
  let out = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*") out += ".*";
    else if (c === "?") out += ".";
    else if (c === "[") {
      let j = i + 1;
      if (glob[j] === "^") j++;
      if (glob[j] === "]") j++;
      const end = glob.indexOf("]", j);
      if (end < 0) {
        out += "\\[";
        continue;
      }
      const negated = glob[i + 1] === "^";
      const body = glob.slice(negated ? i + 2 : i + 1, end).replaceAll("\\", "\\\\");
      out += `[${negated ? "^" : ""}${body}]`;
      i = end;
    } else out += /[\\^$.|+(){}[\]]/.test(c) ? `\\${c}` : c;
  }
  return `${out}$`;
}

/** The PostgreSQL implementation of KnowledgeRepository. */
export class PgKnowledgeRepository extends KnowledgeReads implements KnowledgeRepository {
  private readonly maxPostings: number;

  constructor(
    private readonly db: PgDatabase,
    options: PgKnowledgeOptions = {},
  ) {
    super(postgresDatabase(db), options.now ?? Date.now);
    this.maxPostings = options.maxPostings ?? DEFAULT_MAX_POSTINGS;
  }

  async deleteBase(id: number): Promise<void> {
    await this.db.transaction(async (tx) => {
      // Locked first, so no writer adds postings between the two deletes (writers lock it too).
      await tx.run("SELECT id FROM kb_bases WHERE id = $1 FOR UPDATE", [id]);
      await tx.run("DELETE FROM kb_chunk_terms WHERE kb_id = $1", [id]);
      // Documents, chunks and term counts go with it (ON DELETE CASCADE).
      await tx.run("DELETE FROM kb_bases WHERE id = $1", [id]);
    });
  }

  async writeDocuments(docs: PreparedDocument[]): Promise<WriteReport> {
    const kbId = docs[0]?.kbId;
    if (kbId === undefined || docs.some((d) => d.kbId !== kbId)) {
      throw new DimsumError("internal", "writeDocuments got documents of different bases (or none)");
    }
    return this.db.transaction(async (tx) => {
      const version = await lockBase(tx, kbId, this.now());
      const report: WriteReport = {
        kbId,
        before: version - 1,
        after: version,
        documentIds: [],
        removedChildIds: [],
        addedVectors: [],
      };
      const totals = { rows: 0, tokens: 0 };
      await writeDocumentsIn(tx, docs, report, totals, this.now());
      await tx.run(
        "UPDATE kb_bases SET fts_rows = fts_rows + $2, fts_tokens = fts_tokens + $3 WHERE id = $1",
        [kbId, totals.rows, totals.tokens],
      );
      return report;
    });
  }

  async writeFailed(doc: FailedDocument): Promise<void> {
    // A failed read never replaces a good version; ON CONFLICT … WHERE keeps that check atomic.
    await this.db.run(
      `INSERT INTO kb_documents (kb_id, source, title, mime, size, content_hash, pages, status, error,
         parent_count, chunk_count, embedding_model, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, NULL, 'failed', $7, 0, 0, NULL, $8, $8)
       ON CONFLICT (kb_id, source) DO UPDATE SET title = excluded.title, mime = excluded.mime, size = excluded.size,
         content_hash = excluded.content_hash, pages = NULL, status = 'failed', error = excluded.error,
         parent_count = 0, chunk_count = 0, embedding_model = NULL, updated_at = excluded.updated_at
       WHERE kb_documents.status <> 'ready'`,
      [
        doc.kbId,
        clean(doc.source),
        clean(doc.title),
        doc.mime,
        doc.size,
        doc.hash,
        clean(doc.error),
        this.now(),
      ],
    );
  }

  async deleteDocument(kbId: number, documentId: number): Promise<WriteReport> {
    return this.db.transaction(async (tx) => {
      const version = await lockBase(tx, kbId, this.now());
      const removed = await unindexDocuments(tx, kbId, [documentId]);
      await tx.run("DELETE FROM kb_documents WHERE id = $1", [documentId]);
      await tx.run(
        "UPDATE kb_bases SET fts_rows = fts_rows - $2, fts_tokens = fts_tokens - $3 WHERE id = $1",
        [kbId, removed.ids.length, removed.tokens],
      );
      return {
        kbId,
        before: version - 1,
        after: version,
        documentIds: [documentId],
        removedChildIds: removed.ids,
        addedVectors: [],
      };
    });
  }

  async setVectors(
    documentId: number,
    kbId: number,
    model: string,
    vectors: Map<number, Float32Array>,
  ): Promise<void> {
    const ids = [...vectors.keys()];
    const blobs = [...vectors.values()].map(vectorToBlob);
    const dims = [...vectors.values()].map((v) => v.length);
    await this.db.transaction(async (tx) => {
      await lockBase(tx, kbId, this.now());
      await tx.run(
        `UPDATE kb_child_chunks c SET embedding = v.embedding, embedding_model = $4, embedding_dims = v.dims
         FROM unnest($1::bigint[], $2::bytea[], $3::int[]) AS v(id, embedding, dims) WHERE c.id = v.id`,
        [ids, blobs, dims, model],
      );
      await tx.run("UPDATE kb_documents SET embedding_model = $1, updated_at = $2 WHERE id = $3", [
        model,
        this.now(),
        documentId,
      ]);
    });
  }

  async filteredDocuments(kbIds: readonly number[], filter: SearchFilter): Promise<number[]> {
    const params: unknown[] = [kbIds];
    const where = ["kb_id = ANY($1::bigint[])", "status = 'ready'"];
    const path = filter.path?.trim();
    if (path) {
      if (GLOB.test(path)) {
        where.push(`source ~ $${params.push(globToRegex(globPattern(path)))}`);
      } else {
        const whole = params.push(path);
        where.push(
          `(source = $${whole} OR starts_with(source, $${whole}) OR strpos(source, $${params.push(pathSegment(path))}) > 0)`,
        );
      }
    }
    const mime = filter.mime?.trim().toLowerCase();
    if (mime) {
      where.push(
        GLOB.test(mime) ? `mime ~ $${params.push(globToRegex(mime))}` : `mime = $${params.push(mime)}`,
      );
    }
    const rows = await this.db.many<{ id: number }>(
      `SELECT id FROM kb_documents WHERE ${where.join(" AND ")} ORDER BY id`,
      params,
    );
    return rows.map((r) => r.id);
  }

  async searchText(
    terms: readonly string[],
    limit: number,
    kbIds?: readonly number[],
    documentIds?: readonly number[],
  ): Promise<Bm25Hit[]> {
    return searchChunkTerms(this.db, terms, limit, this.maxPostings, kbIds, documentIds);
  }

  async loadVectors(
    kbId: number,
    model: string,
    dims: number,
    add: (id: number, documentId: number, vector: Float32Array) => void,
  ): Promise<void> {
    const rows = await this.db.many<{ id: number; document_id: number; embedding: Buffer }>(
      `SELECT id, document_id, embedding FROM kb_child_chunks
       WHERE kb_id = $1 AND embedding_model = $2 AND embedding_dims = $3 AND embedding IS NOT NULL`,
      [kbId, model, dims],
    );
    for (const row of rows) add(row.id, row.document_id, blobToVector(row.embedding));
  }
}

/** The knowledge repository over a migrated PostgreSQL database (see openPostgres). */
export function createPostgresKnowledgeRepository(
  db: PgDatabase,
  options: PgKnowledgeOptions = {},
): PgKnowledgeRepository {
  return new PgKnowledgeRepository(db, options);
}
