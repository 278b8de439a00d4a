/**
 * BM25 over archival memories with SQLite FTS5, with the common-terms cutoff of term-cutoff.ts
 * (the vector side still sees the whole query).
 */
import type { Database, Statement } from "better-sqlite3";
import { TermCutoff } from "../../store/text/term-cutoff.js";
import { ftsColumns, ftsMatchExpression, WEAK_TERM_WEIGHT } from "../../store/text/terms.js";
import { type Bm25Filter, type Bm25Hit, DEFAULT_MAX_POSTINGS } from "../archival-rules.js";

/** FTS5 index maintenance and ranked lookup for one database connection. */
export class Bm25Index {
  private readonly statements = new Map<string, Statement<Array<string | number>, Bm25Hit>>();
  private readonly cutoff: TermCutoff;
  private readonly deleteRow;
  private readonly insertRow;

  constructor(
    private readonly db: Database,
    maxPostings = DEFAULT_MAX_POSTINGS,
  ) {
    const docFrequency = db
      .prepare<[string], number>("SELECT doc FROM memories_fts_vocab WHERE term = ?")
      .pluck();
    this.cutoff = new TermCutoff((term) => docFrequency.get(term), maxPostings);
    this.deleteRow = db.prepare<[number]>("DELETE FROM memories_fts WHERE rowid = ?");
    this.insertRow = db.prepare<[number, string, string]>(
      "INSERT INTO memories_fts (rowid, terms, chars) VALUES (?, ?, ?)",
    );
  }

  /** Indexes (or re-indexes) a memory's text under its id. */
  put(id: number, text: string): void {
    this.deleteRow.run(id);
    const columns = ftsColumns(text);
    this.insertRow.run(id, columns.terms, columns.chars);
    this.cutoff.wrote();
  }

  /** The best `limit` memories for the terms under the filter, best first. */
  search(filter: Bm25Filter, terms: readonly string[], limit: number): Bm25Hit[] {
    const { kept } = this.cutoff.plan(terms);
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
        `SELECT m.id AS id, -bm25(memories_fts, 1.0, ${WEAK_TERM_WEIGHT}) AS score, m.text AS text FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid
         WHERE ${where.join(" AND ")} ORDER BY score DESC LIMIT ?`,
      );
      this.statements.set(key, statement);
    }
    return statement;
  }
}
