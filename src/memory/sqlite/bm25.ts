/**
 * BM25 over archival memories with SQLite FTS5. FTS5 scores every row a query matches (about 1 µs
 * each), so a query made of common terms would cost tens of milliseconds at 100k memories. Like
 * Lucene's common-terms cutoff, terms are looked up in the FTS vocabulary first and the most
 * frequent are dropped once the expected work passes `maxPostings`: they carry the least IDF, and
 * the vector side still sees the whole query.
 */
import type { Database, Statement } from "better-sqlite3";
import { ftsDocument, ftsMatchExpression } from "../text/terms.js";
import type { MemoryType } from "../types.js";

export const DEFAULT_MAX_POSTINGS = 3000;
// Document counts only steer pruning, so slightly stale ones are fine: FTS5 computes a count by
// walking the term's whole posting list, which for common terms costs more than the search saves.
const DF_REFRESH_WRITES = 500;
const DF_CACHE_TERMS = 20_000;

export interface Bm25Filter {
  userId: string;
  /** Restrict to shared memories plus this agent's. */
  agentId?: string;
  /** Restrict to exactly this agent key ('' = shared only); used by duplicate checks. */
  exactAgent?: string;
  type?: MemoryType;
}

export interface Bm25Hit {
  id: number;
  /** BM25 relevance, higher is better (FTS5's bm25() negated). */
  score: number;
}

/** FTS5 index maintenance and ranked lookup for one database connection. */
export class Bm25Index {
  private readonly statements = new Map<string, Statement<Array<string | number>, Bm25Hit>>();
  private readonly docFrequency;
  private readonly deleteRow;
  private readonly insertRow;
  private readonly dfCache = new Map<string, { df: number; stamp: number }>();
  private writes = 0;

  constructor(
    private readonly db: Database,
    private readonly maxPostings = DEFAULT_MAX_POSTINGS,
  ) {
    this.docFrequency = db
      .prepare<[string], number>("SELECT doc FROM memories_fts_vocab WHERE term = ?")
      .pluck();
    this.deleteRow = db.prepare<[number]>("DELETE FROM memories_fts WHERE rowid = ?");
    this.insertRow = db.prepare<[number, string]>("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)");
  }

  /** Indexes (or re-indexes) a memory's text under its id. */
  put(id: number, text: string): void {
    this.deleteRow.run(id);
    this.insertRow.run(id, ftsDocument(text));
    this.writes++;
  }

  /** How many memories (of all users) contain the term, from a short-lived cache. */
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

  /**
   * Keeps the rarest terms whose document counts add up to at most `maxPostings` (always at least
   * one); terms no memory contains cost nothing and stay.
   */
  selectTerms(terms: readonly string[]): string[] {
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
    return kept;
  }

  /** The best `limit` memories for the terms under the filter, best first. */
  search(filter: Bm25Filter, terms: readonly string[], limit: number): Bm25Hit[] {
    const kept = this.selectTerms(terms);
    if (kept.length === 0 || limit <= 0) return [];
    const params: Array<string | number> = [ftsMatchExpression(kept), filter.userId];
    let key = "";
    if (filter.exactAgent !== undefined) {
      key += "e";
      params.push(filter.exactAgent);
    } else if (filter.agentId !== undefined) {
      key += "a";
      params.push(filter.agentId);
    }
    if (filter.type !== undefined) {
      key += "t";
      params.push(filter.type);
    }
    params.push(limit);
    return this.statement(key).all(...params);
  }

  private statement(key: string) {
    let statement = this.statements.get(key);
    if (!statement) {
      const where = ["memories_fts MATCH ?", "m.user_id = ?"];
      if (key.includes("e")) where.push("m.agent_id = ?");
      if (key.includes("a")) where.push("m.agent_id IN ('', ?)");
      if (key.includes("t")) where.push("m.type = ?");
      statement = this.db.prepare<Array<string | number>, Bm25Hit>(
        `SELECT m.id AS id, -bm25(memories_fts) AS score FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
         WHERE ${where.join(" AND ")} ORDER BY score DESC LIMIT ?`,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }
}
