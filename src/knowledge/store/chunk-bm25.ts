/**
 * BM25 over child chunks with SQLite FTS5 (k1 = 1.2, b = 0.75). Chunk text is indexed as the terms
 * the memory layer's text processing produces (stems, CJK characters and bigrams), and queries use
 * the same processing. The `kb` column holds `kbid<N>` so a query stays inside the chosen bases
 * inside FTS5 itself; it gets weight 0 in the score.
 *
 * Like memory search (and Lucene's common-terms cutoff), very common terms are dropped once the
 * expected work passes `maxPostings`: they carry the least IDF, and the vector side still sees the
 * whole query. When even the rarest term is that common, only its first `maxPostings` matches are
 * scored, so one query of stop-word-like terms cannot cost a scan of the whole corpus.
 */
import type { Database, Statement } from "better-sqlite3";
import { ftsDocument, ftsMatchExpression } from "../../memory/text/terms.js";

export const DEFAULT_MAX_POSTINGS = 10_000;
// Counts only steer pruning, so slightly stale ones are fine: FTS5 computes a count by walking the
// term's posting list, which for common terms costs more than the search saves.
const DF_REFRESH_WRITES = 500;
const DF_CACHE_TERMS = 20_000;

export interface Bm25Hit {
  id: number;
  /** BM25 relevance, higher is better. */
  score: number;
}

/** The FTS value that tags a chunk with its base. */
export function kbTag(kbId: number): string {
  return `kbid${kbId}`;
}

/** Child-chunk FTS maintenance and ranked lookup on one connection. */
export class ChunkBm25 {
  private readonly insert;
  private readonly docFrequency;
  private readonly statements = new Map<string, Statement<Array<string | number>, Bm25Hit>>();
  private readonly dfCache = new Map<string, { df: number; stamp: number }>();
  private writes = 0;

  constructor(
    private readonly db: Database,
    private readonly maxPostings = DEFAULT_MAX_POSTINGS,
  ) {
    this.insert = db.prepare<[number, string, string]>(
      "INSERT INTO kb_chunks_fts (rowid, terms, kb) VALUES (?, ?, ?)",
    );
    this.docFrequency = db
      .prepare<[string], number>("SELECT doc FROM kb_chunks_fts_vocab WHERE term = ?")
      .pluck();
  }

  /** Indexes a new child chunk's text (deletes happen by trigger with the chunk row). */
  put(id: number, kbId: number, text: string): void {
    this.insert.run(id, ftsDocument(text), kbTag(kbId));
    this.writes++;
  }

  /** How many chunks (of every base) contain the term, from a short-lived cache. */
  documentFrequency(term: string): number {
    const cached = this.dfCache.get(term);
    if (cached && this.writes - cached.stamp < DF_REFRESH_WRITES) return cached.df;
    const df = this.docFrequency.get(term) ?? 0;
    // Zero is never cached: the term may arrive with the next write and must be searched for then.
    if (df === 0) return 0;
    if (this.dfCache.size >= DF_CACHE_TERMS) this.dfCache.clear();
    this.dfCache.set(term, { df, stamp: this.writes });
    return df;
  }

  /** The rarest terms whose posting counts add up to at most `maxPostings` (always at least one). */
  selectTerms(terms: readonly string[]): string[] {
    return this.plan(terms).kept;
  }

  /**
   * The best `limit` child chunks for the query terms, best first; `kbIds` undefined searches every
   * base, `documentIds` (when given) keeps only chunks of those documents.
   */
  search(
    terms: readonly string[],
    limit: number,
    kbIds?: readonly number[],
    documentIds?: readonly number[],
  ): Bm25Hit[] {
    const { kept, postings } = this.plan(terms);
    if (kept.length === 0 || limit <= 0 || kbIds?.length === 0 || documentIds?.length === 0) return [];
    let match = `terms : (${ftsMatchExpression(kept)})`;
    if (kbIds) match = `kb : (${kbIds.map((id) => `"${kbTag(id)}"`).join(" OR ")}) AND ${match}`;
    const params: Array<string | number> = [match];
    if (documentIds) params.push(JSON.stringify(documentIds));
    // Even the rarest term is too common: score only the first `maxPostings` matches (rowid order).
    const bounded = postings > this.maxPostings;
    if (bounded) params.push(this.maxPostings);
    params.push(limit);
    return this.statement(documentIds !== undefined, bounded).all(...params);
  }

  private plan(terms: readonly string[]): { kept: string[]; postings: number } {
    if (!Number.isFinite(this.maxPostings)) return { kept: [...terms], postings: 0 };
    const counted = terms
      .map((term) => ({ term, df: this.documentFrequency(term) }))
      .sort((a, b) => a.df - b.df);
    const kept: string[] = [];
    let postings = 0;
    for (const { term, df } of counted) {
      if (kept.length > 0 && postings + df > this.maxPostings) break;
      kept.push(term);
      postings += df;
    }
    return { kept, postings };
  }

  private statement(byDocument: boolean, bounded: boolean) {
    const key = `${byDocument ? "doc" : "all"}:${bounded ? "bounded" : "full"}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const scored = byDocument
        ? `SELECT f.rowid AS id, -bm25(kb_chunks_fts, 1.0, 0.0) AS score FROM kb_chunks_fts f
           JOIN kb_child_chunks c ON c.id = f.rowid
           WHERE kb_chunks_fts MATCH ? AND c.document_id IN (SELECT value FROM json_each(?))`
        : `SELECT rowid AS id, -bm25(kb_chunks_fts, 1.0, 0.0) AS score FROM kb_chunks_fts
           WHERE kb_chunks_fts MATCH ?`;
      statement = this.db.prepare<Array<string | number>, Bm25Hit>(
        bounded
          ? `SELECT id, score FROM (${scored} LIMIT ?) ORDER BY score DESC LIMIT ?`
          : `${scored} ORDER BY score DESC LIMIT ?`,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }
}
