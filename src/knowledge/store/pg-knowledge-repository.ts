/**
 * The knowledge base on PostgreSQL (migration 4): the same rows as on SQLite, BM25 over term tables
 * (pg-chunk-terms.ts) and vectors as Float32 bytes that each instance searches in memory
 * (chunk-vectors.ts reloads a base when its version moved). Every write transaction starts by
 * bumping its base's version, which locks the base's row: writers of one base, on any instance,
 * follow each other, and the version before and after a write is exact.
 */
import { DimsumError } from "../../errors.js";
import { blobToVector, vectorToBlob } from "../../memory/vectors/blob.js";
import type { PgDatabase, PgQueryable } from "../../store/postgres/pg-database.js";
import type { SearchFilter } from "../types.js";
import { DEFAULT_MAX_POSTINGS } from "./chunk-bm25.js";
import type {
  Bm25Hit,
  FailedDocument,
  KnowledgeRepository,
  PreparedDocument,
  StoredChild,
  WriteReport,
} from "./knowledge-repository.js";
import { chunkTerms, searchChunkTerms } from "./pg-chunk-terms.js";
import {
  agentKey,
  type BaseRow,
  type ChildRow,
  DOCUMENT_COLUMNS,
  type DocumentRow,
  GLOB,
  globPattern,
  type PassageRow,
  pathSegment,
} from "./rows.js";

export interface PgKnowledgeOptions {
  now?: () => number;
  /** BM25 work cap in postings (see chunk-bm25.ts). */
  maxPostings?: number;
}

const BASE_COLUMNS = "b.id, b.name, b.agent_id, b.description, b.version, b.created_at, b.updated_at";
const BASE_COUNTS = `${BASE_COLUMNS}, (SELECT count(*) FROM kb_documents d WHERE d.kb_id = b.id) AS documents,
  (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.kb_id = b.id) AS chunks`;
// SQLite compares text bytewise; "C" orders the same way whatever the database's collation.
const BY_NAME = `ORDER BY b.name COLLATE "C", b.agent_id COLLATE "C"`;

/** Runs of documents with distinct sources, in order (one INSERT … ON CONFLICT cannot touch a row twice). */
function distinctSources(docs: readonly PreparedDocument[]): PreparedDocument[][] {
  const groups: PreparedDocument[][] = [];
  let seen = new Set<string>();
  for (const doc of docs) {
    if (groups.length === 0 || seen.has(doc.source)) {
      groups.push([]);
      seen = new Set();
    }
    groups.at(-1)!.push(doc);
    seen.add(doc.source);
  }
  return groups;
}

/** PostgreSQL text cannot hold NUL; SQLite can, and extracted text rarely has one. */
function clean(text: string): string;
function clean(text: string | null | undefined): string | null;
function clean(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.includes("\0") ? text.replaceAll("\0", "") : text;
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
export class PgKnowledgeRepository implements KnowledgeRepository {
  private readonly now: () => number;
  private readonly maxPostings: number;

  constructor(
    private readonly db: PgDatabase,
    options: PgKnowledgeOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.maxPostings = options.maxPostings ?? DEFAULT_MAX_POSTINGS;
  }

  async findBase(name: string, agentId?: string): Promise<BaseRow | undefined> {
    // The agent's own base sorts first ('' is the shared one).
    return this.db.one<BaseRow>(
      `SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.name = $1 AND b.agent_id IN ('', $2)
       ORDER BY b.agent_id = '' LIMIT 1`,
      [name, agentKey(agentId)],
    );
  }

  async ensureBase(name: string, agentId?: string, description = ""): Promise<BaseRow> {
    const now = this.now();
    await this.db.run(
      `INSERT INTO kb_bases (name, agent_id, description, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (agent_id, name) DO NOTHING`,
      [name, agentKey(agentId), description, now],
    );
    const row = await this.db.one<BaseRow>(
      `SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.agent_id = $1 AND b.name = $2`,
      [agentKey(agentId), name],
    );
    if (!row) {
      throw new DimsumError(
        "internal",
        `the knowledge base "${name}" was removed while it was being created`,
        {
          retryable: true,
        },
      );
    }
    return row;
  }

  async withCounts(row: BaseRow): Promise<BaseRow> {
    return (
      (await this.db.one<BaseRow>(`SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.id = $1`, [row.id])) ?? row
    );
  }

  async visibleBases(agentId: string | undefined): Promise<BaseRow[]> {
    return this.db.many<BaseRow>(
      `SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.agent_id IN ('', $1) ORDER BY b.name COLLATE "C"`,
      [agentKey(agentId)],
    );
  }

  async listBases(agentId: string | null): Promise<BaseRow[]> {
    return agentId === null
      ? this.db.many<BaseRow>(`SELECT ${BASE_COUNTS} FROM kb_bases b ${BY_NAME}`)
      : this.db.many<BaseRow>(
          `SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.agent_id IN ('', $1) ${BY_NAME}`,
          [agentId],
        );
  }

  async baseCount(): Promise<number> {
    return (await this.db.one<{ n: number }>("SELECT count(*) AS n FROM kb_bases"))?.n ?? 0;
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

  async documentBySource(kbId: number, source: string): Promise<DocumentRow | undefined> {
    return this.db.one<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = $1 AND d.source = $2`,
      [kbId, source],
    );
  }

  async documentById(kbId: number, id: number): Promise<DocumentRow | undefined> {
    return this.db.one<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = $1 AND d.id = $2`,
      [kbId, id],
    );
  }

  async documents(kbId: number): Promise<DocumentRow[]> {
    return this.db.many<DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = $1
       ORDER BY d.source COLLATE "C"`,
      [kbId],
    );
  }

  async writeDocuments(docs: PreparedDocument[]): Promise<WriteReport> {
    const kbId = docs[0]?.kbId;
    if (kbId === undefined || docs.some((d) => d.kbId !== kbId)) {
      throw new DimsumError("internal", "writeDocuments got documents of different bases (or none)");
    }
    return this.db.transaction(async (tx) => {
      const version = await this.lockBase(tx, kbId);
      const report: WriteReport = {
        kbId,
        before: version - 1,
        after: version,
        documentIds: [],
        removedChildIds: [],
        addedVectors: [],
      };
      const totals = { rows: 0, tokens: 0 };
      for (const group of distinctSources(docs)) {
        report.documentIds.push(...(await this.writeGroup(tx, group, report, totals)));
      }
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
      const version = await this.lockBase(tx, kbId);
      const removed = await this.unindexDocuments(tx, kbId, [documentId]);
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

  async childrenOf(documentId: number): Promise<StoredChild[]> {
    return this.db.many<StoredChild>(
      `SELECT c.id, c.parent_id, c.document_id, c.text, c.section, c.seq FROM kb_parent_chunks p
       JOIN kb_child_chunks c ON c.parent_id = p.id WHERE p.document_id = $1 ORDER BY c.id`,
      [documentId],
    );
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
      await this.lockBase(tx, kbId);
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

  async children(ids: readonly number[]): Promise<ChildRow[]> {
    if (ids.length === 0) return [];
    return this.db.many<ChildRow>(
      "SELECT id, parent_id, document_id, text, section FROM kb_child_chunks WHERE id = ANY($1::bigint[])",
      [ids],
    );
  }

  async passages(ids: readonly number[]): Promise<PassageRow[]> {
    if (ids.length === 0) return [];
    return this.db.many<PassageRow>(
      `SELECT p.id, p.text, p.section, p.page_start, p.page_end, p.document_id, d.title, d.source, d.mime, b.name AS kb_name
       FROM kb_parent_chunks p JOIN kb_documents d ON d.id = p.document_id JOIN kb_bases b ON b.id = d.kb_id
       WHERE p.id = ANY($1::bigint[])`,
      [ids],
    );
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

  async counts(
    model: string | undefined,
  ): Promise<{ documents: number; chunks: number; withVectors: number }> {
    const totals = await this.db.one<{ documents: number; chunks: number }>(
      "SELECT count(*) AS documents, coalesce(sum(chunk_count), 0)::bigint AS chunks FROM kb_documents",
    );
    const withVectors = model
      ? ((
          await this.db.one<{ n: number }>(
            "SELECT count(*) AS n FROM kb_child_chunks WHERE embedding_model = $1 AND embedding IS NOT NULL",
            [model],
          )
        )?.n ?? 0)
      : 0;
    return { documents: totals?.documents ?? 0, chunks: totals?.chunks ?? 0, withVectors };
  }

  async searchText(
    terms: readonly string[],
    limit: number,
    kbIds?: readonly number[],
    documentIds?: readonly number[],
  ): Promise<Bm25Hit[]> {
    return searchChunkTerms(this.db, terms, limit, this.maxPostings, kbIds, documentIds);
  }

  async baseVersions(kbIds: readonly number[]): Promise<Map<number, number>> {
    if (kbIds.length === 0) return new Map();
    const rows = await this.db.many<{ id: number; version: number }>(
      "SELECT id, version FROM kb_bases WHERE id = ANY($1::bigint[])",
      [kbIds],
    );
    return new Map(rows.map((r) => [r.id, r.version] as const));
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

  /** Bumps the base's version, locking its row until the transaction ends; returns the new version. */
  private async lockBase(tx: PgQueryable, kbId: number): Promise<number> {
    const row = await tx.one<{ version: number }>(
      "UPDATE kb_bases SET version = version + 1, updated_at = $2 WHERE id = $1 RETURNING version",
      [kbId, this.now()],
    );
    if (!row) {
      throw new DimsumError("config", `knowledge base #${kbId} was removed while it was being written to`, {
        hint: "add the documents again to create it anew",
      });
    }
    return row.version;
  }

  /**
   * Takes documents' chunks out of the term counts and deletes their postings (the chunks themselves
   * are left to the caller); returns their ids (ascending) and total length.
   */
  private async unindexDocuments(
    tx: PgQueryable,
    kbId: number,
    documentIds: readonly number[],
  ): Promise<{ ids: number[]; tokens: number }> {
    const chunks = await tx.many<{ id: number; fts_len: number }>(
      "SELECT id, fts_len FROM kb_child_chunks WHERE document_id = ANY($1::bigint[]) ORDER BY id",
      [documentIds],
    );
    if (chunks.length === 0) return { ids: [], tokens: 0 };
    const ids = chunks.map((c) => c.id);
    const left = await tx.many<{ term: string; df: number }>(
      `WITH gone AS (SELECT term, count(*)::int AS n FROM kb_chunk_terms WHERE chunk_id = ANY($2::bigint[]) GROUP BY term)
       UPDATE kb_term_df d SET df = d.df - gone.n FROM gone WHERE d.kb_id = $1 AND d.term = gone.term
       RETURNING d.term, d.df`,
      [kbId, ids],
    );
    const unused = left.filter((r) => r.df <= 0).map((r) => r.term);
    if (unused.length > 0) {
      await tx.run("DELETE FROM kb_term_df WHERE kb_id = $1 AND term = ANY($2::text[]) AND df <= 0", [
        kbId,
        unused,
      ]);
    }
    await tx.run("DELETE FROM kb_chunk_terms WHERE kb_id = $1 AND chunk_id = ANY($2::bigint[])", [kbId, ids]);
    return { ids, tokens: chunks.reduce((sum, c) => sum + c.fts_len, 0) };
  }

  /**
   * Writes documents of distinct sources with a fixed number of statements, whatever their count:
   * one round trip per table instead of one per row keeps a batch of small files cheap.
   */
  private async writeGroup(
    tx: PgQueryable,
    docs: PreparedDocument[],
    report: WriteReport,
    totals: { rows: number; tokens: number },
  ): Promise<number[]> {
    const kbId = docs[0]!.kbId;
    const written = await tx.many<{ id: number; source: string }>(
      `INSERT INTO kb_documents (kb_id, source, title, mime, size, content_hash, pages, status, error,
         parent_count, chunk_count, embedding_model, created_at, updated_at)
       SELECT $1::bigint, u.source, u.title, u.mime, u.size, u.hash, u.pages, 'ready', NULL, u.parents, u.chunks,
         u.model, $2::bigint, $2::bigint
       FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[], $8::int[], $9::int[], $10::int[],
         $11::text[]) AS u(source, title, mime, size, hash, pages, parents, chunks, model)
       ON CONFLICT (kb_id, source) DO UPDATE SET title = excluded.title, mime = excluded.mime, size = excluded.size,
         content_hash = excluded.content_hash, pages = excluded.pages, status = excluded.status, error = excluded.error,
         parent_count = excluded.parent_count, chunk_count = excluded.chunk_count,
         embedding_model = excluded.embedding_model, updated_at = excluded.updated_at
       RETURNING id, source`,
      [
        kbId,
        this.now(),
        docs.map((d) => clean(d.source)),
        docs.map((d) => clean(d.title)),
        docs.map((d) => d.mime),
        docs.map((d) => d.size),
        docs.map((d) => d.hash),
        docs.map((d) => d.pages ?? null),
        docs.map((d) => d.parents.length),
        docs.map((d) => d.parents.reduce((sum, p) => sum + p.children.length, 0)),
        docs.map((d) => d.embeddingModel ?? null),
      ],
    );
    const idOf = new Map(written.map((r) => [r.source, r.id] as const));
    const ids = docs.map((d) => idOf.get(clean(d.source))!);
    const removed = await this.unindexDocuments(tx, kbId, ids);
    report.removedChildIds.push(...removed.ids);
    totals.rows -= removed.ids.length;
    totals.tokens -= removed.tokens;
    // Children go with their parents (ON DELETE CASCADE); their postings went above.
    await tx.run("DELETE FROM kb_parent_chunks WHERE document_id = ANY($1::bigint[])", [ids]);

    const parents = docs.flatMap((doc, i) =>
      doc.parents.map((parent, seq) => ({ doc, documentId: ids[i]!, seq, parent })),
    );
    if (parents.length === 0) return ids;
    const parentRows = await tx.many<{ id: number; document_id: number; seq: number }>(
      `INSERT INTO kb_parent_chunks (document_id, seq, text, section, page_start, page_end, tokens)
       SELECT * FROM unnest($1::bigint[], $2::int[], $3::text[], $4::text[], $5::int[], $6::int[], $7::int[])
       RETURNING id, document_id, seq`,
      [
        parents.map((p) => p.documentId),
        parents.map((p) => p.seq),
        parents.map((p) => clean(p.parent.chunk.text)),
        parents.map((p) => clean(p.parent.chunk.section)),
        parents.map((p) => p.parent.chunk.pageStart ?? null),
        parents.map((p) => p.parent.chunk.pageEnd ?? null),
        parents.map((p) => p.parent.chunk.tokens),
      ],
    );
    const parentIds = new Map(parentRows.map((r) => [`${r.document_id}:${r.seq}`, r.id] as const));
    const children = parents.flatMap(({ doc, documentId, seq: parentSeq, parent }) =>
      parent.children.map((child, seq) => ({
        child,
        seq,
        documentId,
        parentId: parentIds.get(`${documentId}:${parentSeq}`)!,
        vector: doc.embeddingModel ? child.vector : undefined,
        model: doc.embeddingModel,
        terms: chunkTerms(child.indexText),
      })),
    );
    if (children.length === 0) return ids;
    const childRows = await tx.many<{ id: number; parent_id: number; seq: number }>(
      `INSERT INTO kb_child_chunks (parent_id, document_id, kb_id, seq, text, section, page_start, page_end, tokens,
         embedding, embedding_model, embedding_dims, fts_len)
       SELECT u.parent_id, u.document_id, $1::bigint, u.seq, u.text, u.section, u.page_start, u.page_end, u.tokens,
         u.embedding, u.model, u.dims, u.len
       FROM unnest($2::bigint[], $3::bigint[], $4::int[], $5::text[], $6::text[], $7::int[], $8::int[], $9::int[],
         $10::bytea[], $11::text[], $12::int[], $13::int[])
         AS u(parent_id, document_id, seq, text, section, page_start, page_end, tokens, embedding, model, dims, len)
       RETURNING id, parent_id, seq`,
      [
        kbId,
        children.map((c) => c.parentId),
        children.map((c) => c.documentId),
        children.map((c) => c.seq),
        children.map((c) => clean(c.child.chunk.text)),
        children.map((c) => clean(c.child.chunk.section)),
        children.map((c) => c.child.chunk.pageStart ?? null),
        children.map((c) => c.child.chunk.pageEnd ?? null),
        children.map((c) => c.child.chunk.tokens),
        children.map((c) => (c.vector ? vectorToBlob(c.vector) : null)),
        children.map((c) => (c.vector ? c.model! : null)),
        children.map((c) => (c.vector ? c.vector.length : null)),
        children.map((c) => c.terms.len),
      ],
    );
    const childIds = new Map(childRows.map((r) => [`${r.parent_id}:${r.seq}`, r.id] as const));

    const postings = {
      terms: [] as string[],
      chunks: [] as number[],
      tf: [] as number[],
      len: [] as number[],
    };
    const df = new Map<string, number>();
    for (const c of children) {
      const childId = childIds.get(`${c.parentId}:${c.seq}`)!;
      for (const [term, count] of c.terms.tf) {
        postings.terms.push(term);
        postings.chunks.push(childId);
        postings.tf.push(count);
        postings.len.push(c.terms.len);
        df.set(term, (df.get(term) ?? 0) + 1);
      }
      totals.rows++;
      totals.tokens += c.terms.len;
      if (c.vector) report.addedVectors.push({ id: childId, documentId: c.documentId, vector: c.vector });
    }
    if (postings.terms.length > 0) {
      await tx.run(
        `INSERT INTO kb_chunk_terms (term, kb_id, chunk_id, tf, len)
         SELECT u.term, $1::bigint, u.chunk_id, u.tf, u.len FROM unnest($2::text[], $3::bigint[], $4::int[], $5::int[])
           AS u(term, chunk_id, tf, len)`,
        [kbId, postings.terms, postings.chunks, postings.tf, postings.len],
      );
      await tx.run(
        `INSERT INTO kb_term_df (term, kb_id, df)
         SELECT u.term, $1::bigint, u.df FROM unnest($2::text[], $3::int[]) AS u(term, df)
         ON CONFLICT (term, kb_id) DO UPDATE SET df = kb_term_df.df + excluded.df`,
        [kbId, [...df.keys()], [...df.values()]],
      );
    }
    return ids;
  }
}

/** The knowledge repository over a migrated PostgreSQL database (see openPostgres). */
export function createPostgresKnowledgeRepository(
  db: PgDatabase,
  options: PgKnowledgeOptions = {},
): PgKnowledgeRepository {
  return new PgKnowledgeRepository(db, options);
}
