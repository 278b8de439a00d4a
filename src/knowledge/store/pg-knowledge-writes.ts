/**
 * The write path of the PostgreSQL knowledge repository: a batch of documents replaced in a fixed
 * number of statements (one per table, not one per row), with their postings and term counts kept
 * in step with the chunks (see migration 4 and pg-chunk-terms.ts).
 */
import { DimsumError } from "../../errors.js";
import { vectorToBlob } from "../../memory/vectors/blob.js";
import type { PgQueryable } from "../../store/postgres/pg-database.js";
import type { PreparedDocument, WriteReport } from "./knowledge-repository.js";
import { chunkTerms } from "./pg-chunk-terms.js";

/** PostgreSQL text cannot hold NUL; SQLite can, and extracted text rarely has one. */
export function clean(text: string): string;
export function clean(text: string | null | undefined): string | null;
export function clean(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  return text.includes("\0") ? text.replaceAll("\0", "") : text;
}

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

/** Bumps the base's version, locking its row until the transaction ends; returns the new version. */
export async function lockBase(tx: PgQueryable, kbId: number, now: number): Promise<number> {
  const row = await tx.one<{ version: number }>(
    "UPDATE kb_bases SET version = version + 1, updated_at = $2 WHERE id = $1 RETURNING version",
    [kbId, now],
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
export async function unindexDocuments(
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
async function writeGroup(
  tx: PgQueryable,
  docs: PreparedDocument[],
  report: WriteReport,
  totals: { rows: number; tokens: number },
  now: number,
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
      now,
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
  const removed = await unindexDocuments(tx, kbId, ids);
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

/**
 * Writes documents of one base, each replacing its earlier version, inside the caller's transaction
 * (which has locked the base); adds the change of the base's chunk and term totals to `totals`.
 */
export async function writeDocumentsIn(
  tx: PgQueryable,
  docs: readonly PreparedDocument[],
  report: WriteReport,
  totals: { rows: number; tokens: number },
  now: number,
): Promise<void> {
  for (const group of distinctSources(docs)) {
    report.documentIds.push(...(await writeGroup(tx, group, report, totals, now)));
  }
}
