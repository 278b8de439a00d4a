/** Every SQL statement the session store runs, prepared once per database connection. */
import type { Database } from "better-sqlite3";
import type { MessageRow } from "./message-rows.js";
import type { CheckpointRow, RunEventRow, RunRow, SessionRow } from "./session-records.js";

const sessionColumns = `s.id, s.user_id, s.session_key, s.title, s.summary, s.summary_updated_at, s.created_at,
  s.updated_at, (SELECT count(*) FROM messages m WHERE m.session_id = s.id) AS message_count`;
const messageColumns = `id, seq, run_id, role, content_json, tool_call_id, tool_name, is_error, created_at,
  tokens_estimate, compacted`;
const runColumns = `r.id, s.user_id, s.session_key, r.status, r.model, r.prompt, r.started_at, r.ended_at,
  r.iterations, r.usage_json, r.error, r.note`;

/**
 * Prepares the store's statements; the schema must already be migrated.
 * @internal Kept out of the declaration files: better-sqlite3's statement type cannot be named there.
 */
export function prepareStatements(db: Database) {
  return {
    sessionId: db
      .prepare<[string, string], number>("SELECT id FROM sessions WHERE user_id = ? AND session_key = ?")
      .pluck(),
    insertSession: db.prepare<[string, string, string | null, number, number]>(
      `INSERT INTO sessions (user_id, session_key, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, session_key) DO NOTHING`,
    ),
    fillTitle: db.prepare<[string, number]>("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL"),
    session: db.prepare<[string, string], SessionRow>(
      `SELECT ${sessionColumns} FROM sessions s WHERE s.user_id = ? AND s.session_key = ?`,
    ),
    sessionsOfUser: db.prepare<[string], SessionRow>(
      `SELECT ${sessionColumns} FROM sessions s WHERE s.user_id = ? ORDER BY s.updated_at DESC, s.id DESC`,
    ),
    touchSession: db.prepare<[number, number]>("UPDATE sessions SET updated_at = ? WHERE id = ?"),
    setSummary: db.prepare<[string | null, number | null, number, number]>(
      "UPDATE sessions SET summary = ?, summary_updated_at = ?, updated_at = ? WHERE id = ?",
    ),
    summary: db.prepare<[number], string | null>("SELECT summary FROM sessions WHERE id = ?").pluck(),

    lastSeq: db
      .prepare<[number], number>("SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = ?")
      .pluck(),
    insertMessage: db.prepare<
      [
        number,
        string | null,
        number,
        string,
        string,
        string | null,
        string | null,
        number | null,
        number,
        number | null,
      ]
    >(
      `INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, is_error,
         created_at, tokens_estimate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // Newest first so LIMIT keeps the recent end; a negative LIMIT means no limit in SQLite.
    liveMessages: db.prepare<[number, number], MessageRow>(
      `SELECT ${messageColumns} FROM messages WHERE session_id = ? AND compacted = 0 ORDER BY id DESC LIMIT ?`,
    ),
    allMessages: db.prepare<[number, number], MessageRow>(
      `SELECT ${messageColumns} FROM messages WHERE session_id = ? ORDER BY id DESC LIMIT ?`,
    ),
    // The last assistant message and everything after it: where an unanswered tool call would be.
    historyTail: db.prepare<[number, number], MessageRow>(
      `SELECT ${messageColumns} FROM messages WHERE session_id = ? AND id >=
         (SELECT coalesce(max(id), 0) FROM messages WHERE session_id = ? AND role = 'assistant') ORDER BY id`,
    ),
    roleAfter: db
      .prepare<[number, number], string>(
        "SELECT role FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT 1",
      )
      .pluck(),
    markCompacted: db.prepare<[number, number]>(
      "UPDATE messages SET compacted = 1 WHERE session_id = ? AND id <= ? AND compacted = 0",
    ),

    insertRun: db.prepare<[string, number, string, string | null, number]>(
      `INSERT INTO runs (id, session_id, status, model, prompt, started_at) VALUES (?, ?, 'running', ?, ?, ?)`,
    ),
    finishRun: db.prepare<
      [string, number, number, string | null, string | null, string | null, string, number]
    >(
      `UPDATE runs SET status = ?, ended_at = ?, iterations = ?, usage_json = ?, error = ?, note = ?,
         checkpoint_json = NULL, waiting_since = NULL
       WHERE id = ? AND session_id = ?`,
    ),
    // A run waiting for a person is not running in any process: recovery leaves it alone.
    interruptRun: db.prepare<[number, string, string]>(
      `UPDATE runs SET status = 'interrupted', ended_at = ?, note = ?
       WHERE id = ? AND status = 'running' AND waiting_since IS NULL`,
    ),
    // Waiting keeps the time it started waiting when saved again while waiting.
    saveCheckpoint: db.prepare<[string | null, number, number, string, number]>(
      `UPDATE runs SET checkpoint_json = ?, waiting_since = CASE WHEN ? THEN coalesce(waiting_since, ?) END
       WHERE id = ? AND session_id = ?`,
    ),
    checkpoint: db.prepare<[string, number], CheckpointRow>(
      "SELECT checkpoint_json, waiting_since FROM runs WHERE id = ? AND session_id = ?",
    ),
    run: db.prepare<[string, number], RunRow>(
      `SELECT ${runColumns} FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ? AND r.session_id = ?`,
    ),
    runOfUser: db.prepare<[string, string], RunRow>(
      `SELECT ${runColumns} FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.id = ? AND s.user_id = ?`,
    ),
    runs: db.prepare<[number, number], RunRow>(
      `SELECT ${runColumns} FROM runs r JOIN sessions s ON s.id = r.session_id WHERE r.session_id = ?
       ORDER BY r.started_at DESC, r.rowid DESC LIMIT ?`,
    ),
    runningRuns: db.prepare<[number], RunRow>(
      `SELECT ${runColumns} FROM runs r JOIN sessions s ON s.id = r.session_id
       WHERE r.session_id = ? AND r.status = 'running' AND r.waiting_since IS NULL ORDER BY r.started_at, r.rowid`,
    ),
    runExists: db.prepare<[string], number>("SELECT 1 FROM runs WHERE id = ?").pluck(),
    runInSession: db
      .prepare<[string, number], number>("SELECT 1 FROM runs WHERE id = ? AND session_id = ?")
      .pluck(),

    lastEventSeq: db
      .prepare<[string], number>("SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = ?")
      .pluck(),
    insertEvent: db.prepare<[string, number, string, string, number]>(
      "INSERT INTO run_events (run_id, seq, type, payload_json, at) VALUES (?, ?, ?, ?, ?)",
    ),
    events: db.prepare<[string], RunEventRow>(
      "SELECT run_id, seq, type, payload_json, at FROM run_events WHERE run_id = ? ORDER BY seq",
    ),

    todos: db.prepare<[number], string>("SELECT items_json FROM todos WHERE session_id = ?").pluck(),
    saveTodos: db.prepare<[number, string, number]>(
      `INSERT INTO todos (session_id, items_json, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (session_id) DO UPDATE SET items_json = excluded.items_json, updated_at = excluded.updated_at`,
    ),
  };
}

/** @internal */
export type Statements = ReturnType<typeof prepareStatements>;
