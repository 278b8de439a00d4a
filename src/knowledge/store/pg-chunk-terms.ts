/**
 * BM25 over child chunks on PostgreSQL, computed the way SQLite's FTS5 `bm25()` computes it for
 * chunk-bm25.ts, so both backends rank alike:
 *
 *   score = Σ_terms idf(t) · f·(k1 + 1) / (f + k1·(1 − b + b·D/avgdl)),  k1 = 1.2, b = 0.75
 *   idf(t) = ln((N − n(t) + 0.5) / (n(t) + 0.5)), at least 1e-6
 *
 * where f is the term's count in the chunk times its column weight (1, or WEAK_TERM_WEIGHT for
 * single CJK characters), D the chunk's length in terms and avgdl the mean length, N and n(t) counted
 * over every base. The terms are the memory layer's (`ftsColumns` for chunks, `queryTerms` for
 * queries); the postings, per-base term counts and per-base totals live in the tables of migration 4.
 * The common-terms cutoff (term-cutoff.ts) drops the most frequent query terms as on SQLite.
 */

import type { PgQueryable } from "../../store/postgres/pg-database.js";
import { TermCutoff } from "../../store/text/term-cutoff.js";
import { ftsColumns, isWeakTerm, WEAK_TERM_WEIGHT } from "../../store/text/terms.js";
import type { Bm25Hit } from "./knowledge-repository.js";

const K1 = 1.2;
const B = 0.75;
const MIN_IDF = 1e-6;

/** A chunk's terms with their counts, and its length as FTS5 counts it. */
export interface ChunkTerms {
  tf: Map<string, number>;
  len: number;
}

/** The postings of a chunk's index text: the FTS5 columns' terms (`terms` and `chars`) counted. */
export function chunkTerms(indexText: string): ChunkTerms {
  const { terms, chars } = ftsColumns(indexText);
  const tf = new Map<string, number>();
  // FTS5's length of a row counts its `kb` column too: one token, the base tag.
  let len = 1;
  for (const column of [terms, chars]) {
    for (const term of column.split(" ")) {
      if (term === "") continue;
      tf.set(term, (tf.get(term) ?? 0) + 1);
      len++;
    }
  }
  return { tf, len };
}

const STATS = `WITH s AS (
    SELECT coalesce(sum(fts_rows), 0)::float8 AS n, coalesce(sum(fts_tokens), 0)::float8 AS tokens FROM kb_bases)
  SELECT q.term, coalesce((SELECT sum(d.df) FROM kb_term_df d WHERE d.term = q.term), 0)::float8 AS df,
    s.n, s.tokens
  FROM unnest($1::text[]) AS q(term) CROSS JOIN s`;

/**
 * The best `limit` chunks for the query terms, best first (ties by id); `kbIds` undefined searches
 * every base, `documentIds` keeps only chunks of those documents. When even the rarest term is more
 * common than `maxPostings`, only the first `maxPostings` matching chunks (by id) are scored, as
 * chunk-bm25.ts does on SQLite.
 */
export async function searchChunkTerms(
  db: PgQueryable,
  terms: readonly string[],
  limit: number,
  maxPostings: number,
  kbIds?: readonly number[],
  documentIds?: readonly number[],
): Promise<Bm25Hit[]> {
  if (terms.length === 0 || limit <= 0 || kbIds?.length === 0 || documentIds?.length === 0) return [];
  const stats = await db.many<{ term: string; df: number; n: number; tokens: number }>(STATS, [
    [...new Set(terms)],
  ]);
  const n = stats[0]?.n ?? 0;
  const tokens = stats[0]?.tokens ?? 0;
  if (n === 0 || tokens === 0) return [];
  const df = new Map(stats.map((s) => [s.term, s.df] as const));
  const { kept, postings } = new TermCutoff((term) => df.get(term), maxPostings).plan(terms);
  const present = kept.filter((term) => (df.get(term) ?? 0) > 0);
  if (present.length === 0) return [];
  const idf = present.map((term) => {
    const hits = df.get(term) ?? 0;
    const value = Math.log((n - hits + 0.5) / (hits + 0.5));
    return value <= 0 ? MIN_IDF : value;
  });
  const weights = present.map((term) => (isWeakTerm(term) ? WEAK_TERM_WEIGHT : 1));

  const params: unknown[] = [present, weights, idf, tokens / n];
  const kbParam = kbIds ? params.push(kbIds) : 0;
  const docParam = documentIds ? params.push(documentIds) : 0;
  // The base and document restrictions on postings under `alias`.
  const restrict = (alias: string) => [
    ...(kbParam ? [`${alias}.kb_id = ANY($${kbParam}::bigint[])`] : []),
    ...(docParam
      ? [
          `${alias}.chunk_id IN (SELECT id FROM kb_child_chunks WHERE document_id = ANY($${docParam}::bigint[]))`,
        ]
      : []),
  ];
  // The ANY condition lets the planner walk the (term, kb_id, chunk_id) index, whatever it guesses
  // of the unnest's size.
  const where = ["p.term = ANY($1::text[])", ...restrict("p")];
  if (postings > maxPostings) {
    const cap = params.push(maxPostings);
    const first = ["b.term = ANY($1::text[])", ...restrict("b")].join(" AND ");
    where.push(
      `p.chunk_id IN (SELECT DISTINCT b.chunk_id FROM kb_chunk_terms b WHERE ${first} ORDER BY b.chunk_id LIMIT $${cap})`,
    );
  }
  params.push(limit);
  const sql = `WITH q AS (SELECT * FROM unnest($1::text[], $2::float8[], $3::float8[]) AS q(term, w, idf))
    SELECT p.chunk_id AS id,
      sum(q.idf * (p.tf * q.w * ${K1 + 1}) / (p.tf * q.w + ${K1} * (${1 - B} + ${B}::float8 * p.len / $4::float8)))::float8 AS score
    FROM q JOIN kb_chunk_terms p ON p.term = q.term
    WHERE ${where.join(" AND ")}
    GROUP BY p.chunk_id ORDER BY score DESC, id LIMIT $${params.length}`;
  return db.many<Bm25Hit>(sql, params);
}
