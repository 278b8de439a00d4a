/**
 * Recall search on SQLite: a user's own past messages, across all of their sessions. `messages_fts`
 * indexes message text by trigrams (kept in sync by triggers), which finds any substring of three or
 * more characters, CJK included. Shorter pieces are matched as substrings over the user's messages.
 * The rules (terms, fusion, excerpts) are in ../recall-rules.ts.
 */
import type { Database, Statement } from "better-sqlite3";
import { RECALL_CANDIDATES, type RecallRow, searchRecall } from "../recall-rules.js";
import type { RecallHit, RecallQuery } from "../types.js";

/** Recall search statements for one connection. */
export class RecallSearch {
  private readonly substringStatements = new Map<
    number,
    Statement<Array<string | number | null>, { id: number }>
  >();
  private readonly phraseStatement;
  private readonly rowsById;

  constructor(private readonly db: Database) {
    this.phraseStatement = db.prepare<[string, string, string | null, string | null, number], { id: number }>(
      `SELECT m.id AS id FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts MATCH ? AND s.user_id IN (SELECT value FROM json_each(?))
         AND NOT (s.user_id IS ? AND s.session_key IS ?)
       ORDER BY bm25(messages_fts) LIMIT ?`,
    );
    this.rowsById = db.prepare<[string], RecallRow>(
      `SELECT m.id, s.session_key, m.role, f.text, m.created_at
       FROM messages m JOIN sessions s ON s.id = m.session_id JOIN messages_fts f ON f.rowid = m.id
       WHERE m.id IN (SELECT value FROM json_each(?))`,
    );
  }

  /** The user's messages that best match the query, best first. */
  search(query: RecallQuery): Promise<RecallHit[]> {
    return searchRecall(query, {
      phrases: async (phrases, scope) => {
        const match = phrases.map((p) => `"${p.replaceAll('"', '""')}"`).join(" OR ");
        return this.phraseStatement.all(
          match,
          JSON.stringify(scope.owners),
          scope.excludeOwner,
          scope.exclude,
          RECALL_CANDIDATES,
        );
      },
      substrings: async (substrings, scope) =>
        this.substringStatement(substrings.length).all(
          ...substrings,
          JSON.stringify(scope.owners),
          scope.excludeOwner,
          scope.exclude,
          RECALL_CANDIDATES,
        ),
      rows: async (ids) => this.rowsById.all(JSON.stringify(ids)),
    });
  }

  /** Counts how many of the n substrings each of the user's messages contains; most first, then newest. */
  private substringStatement(n: number) {
    let statement = this.substringStatements.get(n);
    if (!statement) {
      const hits = Array.from({ length: n }, () => "(instr(lower(f.text), ?) > 0)").join(" + ");
      statement = this.db.prepare<Array<string | number | null>, { id: number }>(
        `SELECT id FROM (
           SELECT m.id AS id, ${hits} AS hits FROM sessions s JOIN messages m ON m.session_id = s.id
           JOIN messages_fts f ON f.rowid = m.id
           WHERE s.user_id IN (SELECT value FROM json_each(?)) AND NOT (s.user_id IS ? AND s.session_key IS ?))
         WHERE hits > 0 ORDER BY hits DESC, id DESC LIMIT ?`,
      );
      this.substringStatements.set(n, statement);
    }
    return statement;
  }
}
