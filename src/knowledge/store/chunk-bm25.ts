/**
 * BM25 over child chunks with SQLite FTS5 (k1 = 1.2, b = 0.75). Chunk text is indexed as the terms
 * the memory layer's text processing produces (stems and CJK bigrams in `terms`, single CJK
 * characters in the lower-weighted `chars`), and queries use the same processing. The `kb` column
 * holds `kbid<N>` so a query stays inside the chosen bases inside FTS5 itself; it gets weight 0.
 *
 * Very common terms are dropped by the common-terms cutoff shared with memory search
 * (term-cutoff.ts). When even the rarest term is that common, only its first `maxPostings` matches
 * are scored, so one query of stop-word-like terms cannot cost a scan of the whole corpus.
 */
import type { Database, Statement } from "better-sqlite3";
import { TermCutoff } from "../../store/text/term-cutoff.js";
import { ftsColumns, ftsMatchExpression, WEAK_TERM_WEIGHT } from "../../store/text/terms.js";
import type { Bm25Hit } from "./knowledge-repository.js";

export const DEFAULT_MAX_POSTINGS = 10_000;
export type { Bm25Hit };

/** The FTS value that tags a chunk with its base. */
export function kbTag(kbId: number): string {
  return `kbid${kbId}`;
}

/** Child-chunk FTS maintenance and ranked lookup on one connection. */
export class ChunkBm25 {
  private readonly insert;
  private readonly cutoff: TermCutoff;
  private readonly statements = new Map<string, Statement<Array<string | number>, Bm25Hit>>();

  constructor(
    private readonly db: Database,
    private readonly maxPostings = DEFAULT_MAX_POSTINGS,
  ) {
    this.insert = db.prepare<[number, string, string, string]>(
      "INSERT INTO kb_chunks_fts (rowid, terms, chars, kb) VALUES (?, ?, ?, ?)",
    );
    const docFrequency = db
      .prepare<[string], number>("SELECT doc FROM kb_chunks_fts_vocab WHERE term = ?")
      .pluck();
    this.cutoff = new TermCutoff((term) => docFrequency.get(term), maxPostings);
  }

  /** Indexes a new child chunk's text (deletes happen by trigger with the chunk row). */
  put(id: number, kbId: number, text: string): void {
    const columns = ftsColumns(text);
    this.insert.run(id, columns.terms, columns.chars, kbTag(kbId));
    this.cutoff.wrote();
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
    const { kept, postings } = this.cutoff.plan(terms);
    if (kept.length === 0 || limit <= 0 || kbIds?.length === 0 || documentIds?.length === 0) return [];
    let match = ftsMatchExpression(kept);
    if (kbIds) match = `kb : (${kbIds.map((id) => `"${kbTag(id)}"`).join(" OR ")}) AND ${match}`;
    const params: Array<string | number> = [match];
    if (documentIds) params.push(JSON.stringify(documentIds));
    // Even the rarest term is too common: score only the first `maxPostings` matches (rowid order).
    const bounded = postings > this.maxPostings;
    if (bounded) params.push(this.maxPostings);
    params.push(limit);
    return this.statement(documentIds !== undefined, bounded).all(...params);
  }

  private statement(byDocument: boolean, bounded: boolean) {
    const key = `${byDocument ? "doc" : "all"}:${bounded ? "bounded" : "full"}`;
    let statement = this.statements.get(key);
    if (!statement) {
      const scored = byDocument
        ? `SELECT f.rowid AS id, -bm25(kb_chunks_fts, 1.0, ${WEAK_TERM_WEIGHT}, 0.0) AS score FROM kb_chunks_fts f
           JOIN kb_child_chunks c ON c.id = f.rowid
           WHERE kb_chunks_fts MATCH ? AND c.document_id IN (SELECT value FROM json_each(?))`
        : `SELECT rowid AS id, -bm25(kb_chunks_fts, 1.0, ${WEAK_TERM_WEIGHT}, 0.0) AS score FROM kb_chunks_fts
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
