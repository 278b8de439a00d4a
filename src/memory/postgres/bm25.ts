/**
 * BM25 over archival memories on PostgreSQL, computed in SQL exactly as SQLite's FTS5 `bm25()` does
 * it for the SQLite store, so both backends rank alike:
 *
 *   score(d) = Σ_terms idf(t) · f·(k1 + 1) / (f + k1·(1 − b + b·|d| / avgdl)),  k1 = 1.2, b = 0.75
 *   idf(t)   = ln((N − n(t) + 0.5) / (n(t) + 0.5)), at least 1e-6
 *   f        = tf(t, d) · column weight (1 for words and bigrams, WEAK_TERM_WEIGHT for CJK characters)
 *
 * N and avgdl cover every user's memories (as one FTS5 table does): N and the total length are sums
 * of `memory_user_state`; n(t) counts `memory_terms` rows of the term; |d| is the memory's length in
 * terms (`doc_tokens`, copied into each posting so that scoring reads one index).
 * The terms are those the memory layer indexes (indexTerms); a term's column (`terms` or `chars` in
 * SQLite) follows from the term itself (isWeakTerm), so postings need no column. The common-terms
 * cutoff of term-cutoff.ts applies as on SQLite.
 */
import type { PgQueryable } from "../../store/postgres/pg-database.js";
import { TermCutoff } from "../../store/text/term-cutoff.js";
import { indexTerms, isWeakTerm, WEAK_TERM_WEIGHT } from "../../store/text/terms.js";
import { type Bm25Filter, type Bm25Hit, DEFAULT_MAX_POSTINGS } from "../archival-rules.js";

/** A text's postings: each distinct term with its frequency, and the text's length in terms. */
export interface Postings {
  terms: string[];
  tfs: number[];
  tokens: number;
}

export function postingsOf(text: string): Postings {
  const counts = new Map<string, number>();
  const all = indexTerms(text);
  for (const term of all) counts.set(term, (counts.get(term) ?? 0) + 1);
  return { terms: [...counts.keys()], tfs: [...counts.values()], tokens: all.length };
}

/** Ranked lookup over `memory_terms`, with a process-wide cache of document frequencies. */
export class PgBm25 {
  private readonly cutoff: TermCutoff;
  /** Counts just read for the plan being made (TermCutoff looks terms up synchronously). */
  private fresh = new Map<string, number>();

  constructor(maxPostings = DEFAULT_MAX_POSTINGS) {
    this.cutoff = new TermCutoff((term) => this.fresh.get(term), maxPostings);
  }

  /** Counts indexed documents, so cached frequencies are refreshed after enough of them. */
  wrote(documents = 1): void {
    for (let i = 0; i < documents; i++) this.cutoff.wrote();
  }

  /** The best `limit` memories for the terms under the filter, best first (ties: lower id first). */
  async search(
    db: PgQueryable,
    filter: Bm25Filter,
    terms: readonly string[],
    limit: number,
  ): Promise<Bm25Hit[]> {
    if (terms.length === 0 || limit <= 0) return [];
    const missing = terms.filter((t) => this.cutoff.needsLookup(t));
    const fresh = new Map<string, number>();
    if (missing.length > 0) {
      const rows = await db.many<{ term: string; df: number }>(
        "SELECT term, count(*)::int AS df FROM memory_terms WHERE term = ANY($1::text[]) GROUP BY term",
        [missing],
      );
      for (const row of rows) fresh.set(row.term, row.df);
    }
    this.fresh = fresh;
    const { kept: planned } = this.cutoff.plan(terms);
    this.fresh = new Map();
    if (planned.length === 0) return [];
    // FTS5 adds up the terms in the order of the MATCH expression (ftsMatchExpression: the strong
    // terms, then the weak ones); the same order here gives the same floating-point sums.
    const kept = [...planned.filter((t) => !isWeakTerm(t)), ...planned.filter(isWeakTerm)];
    const params: unknown[] = [
      filter.userId,
      kept,
      kept.map((t) => (isWeakTerm(t) ? WEAK_TERM_WEIGHT : 1)),
      // Counts read just now are exact; the others (from the cache) are counted again.
      kept.map((t) => (missing.includes(t) ? (fresh.get(t) ?? 0) : -1)),
      limit,
    ];
    const where: string[] = [];
    if (filter.exactAgent !== undefined) {
      params.push(filter.exactAgent);
      where.push(`p.agent_id = $${params.length}`);
    } else if (filter.agentId !== undefined) {
      params.push(filter.agentId);
      where.push(`p.agent_id IN ('', $${params.length})`);
    }
    if (filter.type !== undefined) {
      params.push(filter.type);
      where.push(`p.type = $${params.length}`);
    }
    // MATERIALIZED: each document frequency is counted once, not once per use or per posting.
    return db.many<Bm25Hit>(
      `WITH q AS (
         SELECT * FROM unnest($2::text[], $3::float8[], $4::bigint[]) WITH ORDINALITY AS q (term, weight, df, ord)),
       stats AS (SELECT sum(count)::float8 AS n, sum(tokens)::float8 AS tokens FROM memory_user_state),
       dfs AS MATERIALIZED (
         SELECT q.term, q.weight, q.ord, CASE WHEN q.df >= 0 THEN q.df
           ELSE (SELECT count(*) FROM memory_terms t WHERE t.term = q.term) END::float8 AS df
         FROM q),
       idf AS MATERIALIZED (
         SELECT dfs.term, dfs.weight, dfs.ord,
           greatest(ln((stats.n - dfs.df + 0.5) / (dfs.df + 0.5)), 1e-6) AS idf
         FROM dfs CROSS JOIN stats),
       -- Summed per memory in term order: the sorted subquery feeds the aggregate in that order.
       contributions AS (
         SELECT p.memory_id AS id,
           idf.idf * (p.tf * idf.weight * 2.2::float8)
             / (p.tf * idf.weight + 1.2::float8 * (0.25::float8
                + 0.75::float8 * p.doc_tokens::float8 / (stats.tokens / stats.n))) AS c
         FROM idf JOIN memory_terms p ON p.user_id = $1 AND p.term = idf.term CROSS JOIN stats
         ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY p.memory_id, idf.ord),
       scored AS (SELECT id, sum(c) AS score FROM contributions GROUP BY id ORDER BY score DESC, id LIMIT $5)
       SELECT s.id, m.text, s.score FROM scored s JOIN memories m ON m.id = s.id
       ORDER BY s.score DESC, s.id`,
      params,
    );
  }
}
