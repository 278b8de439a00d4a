/**
 * SessionStore on PostgreSQL: the same tables and behaviour as the SQLite store, safe for several
 * instances. Each call of a turn is one statement, one round trip: rows are found by the session's
 * (user, key) inside the statement, and an append takes its sequence numbers from a counter on the
 * session row (messages) or run row (trace events), whose row lock orders concurrent appends
 * (migration 6). Writes that read before they write (compaction, recovery) are transactions.
 */

import type { MessageRow } from "../message-rows.js";
import {
  type CheckpointRow,
  duplicateRunError,
  type FinishColumns,
  INTERRUPTED_RUN_NOTE,
  missingRunError,
  missingSessionError,
  type NewMessage,
  type RunEventRow,
  type RunRow,
  type SessionRow,
  type SessionStoreOptions,
  type StepCheckpoint,
  toSessionRecord,
} from "../session-records.js";
import { checkCompactionCut, SessionStoreBase, type StepColumns } from "../session-store-base.js";
import type * as T from "../types.js";
import type { PgDatabase, PgQueryable } from "./pg-database.js";

export type PgSessionStoreOptions = SessionStoreOptions;

const SESSION_COLUMNS = `s.id, s.user_id, s.session_key, s.title, s.summary, s.summary_updated_at, s.created_at,
  s.updated_at, (SELECT count(*)::int FROM messages m WHERE m.session_id = s.id) AS message_count`;
const MESSAGE_COLUMNS = `id, seq, run_id, role, content_json, tool_call_id, tool_name, is_error, created_at,
  tokens_estimate, compacted`;
const RUN_COLUMNS = `r.id, s.user_id, s.session_key, r.status, r.model, r.prompt, r.started_at, r.ended_at,
  r.iterations, r.usage_json, r.error, r.note`;
const RUN_FROM = "FROM runs r JOIN sessions s ON s.id = r.session_id";
/** A run as an INSERT or UPDATE of `runs AS r` returns it, for the session ($1, $2). */
const RUN_RETURNING = `r.id, $1::text AS user_id, $2::text AS session_key, r.status, r.model, r.prompt,
  r.started_at, r.ended_at, r.iterations, r.usage_json, r.error, r.note`;
/** The id of the session ($1, $2) = (user, key), inside a statement. */
const SESSION_ID = "(SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2)";

/** 23505: a unique key taken, here a `seq` an instance of an earlier version wrote meanwhile. */
function isUniqueViolation(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return cause instanceof Error && "code" in cause && cause.code === "23505";
}

/** A run id taken (the runs table's primary key), which no retry can cure. */
function isDuplicateRun(err: unknown): boolean {
  const cause = err instanceof Error ? err.cause : undefined;
  return isUniqueViolation(err) && (cause as { constraint?: string }).constraint === "runs_pkey";
}

/** Runs `append` once more after a unique violation on a `seq` (see `appendMessages`). */
async function withSeqRetry<T>(append: () => Promise<T>): Promise<T> {
  try {
    return await append();
  } catch (err) {
    if (!isUniqueViolation(err) || isDuplicateRun(err)) throw err;
    return append();
  }
}

/** The live messages of the session row `s`, oldest first, as JSON rows (`MessageRow`). */
const LIVE_MESSAGES_JSON = `(SELECT json_agg(m ORDER BY m.id) FROM (SELECT ${MESSAGE_COLUMNS} FROM messages
  WHERE session_id = s.id AND compacted = 0) m)`;

/**
 * `beginTurn` in one statement: the session is created or found with its message counter moved on by
 * one (its row lock orders concurrent appends), the input is stored under that `seq`, the run is
 * inserted, and the session, its live messages (the statement's snapshot: before the input) and its
 * todos are read. A duplicate run id fails the whole statement, so nothing is written then.
 */
const BEGIN_TURN = `WITH s AS (
    INSERT INTO sessions AS s (user_id, session_key, title, created_at, updated_at, last_seq)
    VALUES ($1, $2, $3, $4, $4, 1)
    ON CONFLICT (user_id, session_key) DO UPDATE SET title = coalesce(s.title, excluded.title),
      updated_at = excluded.updated_at,
      last_seq = greatest(coalesce(s.last_seq, 0),
        (SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = s.id)) + 1
    RETURNING s.id, s.title, s.summary, s.summary_updated_at, s.created_at, s.updated_at, s.last_seq
  ), added AS (
    INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, is_error,
      created_at, tokens_estimate)
    SELECT s.id, $5, s.last_seq, $6, $7, $8, $9, $10::int, $4, $11::int FROM s
    RETURNING id, seq
  ), r AS (
    INSERT INTO runs (id, session_id, status, model, prompt, started_at)
    SELECT $5, s.id, 'running', $12, $13, $4 FROM s
    RETURNING status, model, prompt, started_at, ended_at, iterations, usage_json, error, note
  )
  SELECT s.title, s.summary, s.summary_updated_at, s.created_at, s.updated_at,
    (SELECT count(*)::int FROM messages m WHERE m.session_id = s.id) + 1 AS message_count,
    added.id AS added_id, added.seq AS added_seq,
    r.status, r.model, r.prompt, r.started_at, r.ended_at, r.iterations, r.usage_json, r.error, r.note,
    (SELECT items_json FROM todos WHERE session_id = s.id) AS todos_json,
    ${LIVE_MESSAGES_JSON} AS messages_json
  FROM s, added, r`;

/** A run's columns, without the keys a statement that knows them leaves out. */
type RunColumns = Omit<RunRow, "id" | "user_id" | "session_key">;

interface BeginTurnRow extends RunColumns, Omit<SessionRow, "id" | "user_id" | "session_key"> {
  added_id: number;
  added_seq: number;
  todos_json: string | null;
  messages_json: MessageRow[] | null;
}

/**
 * `saveRunStep` in one statement. `run` finds the run in the session ($1, $2); the messages (when
 * $5 > 0) take their `seq` from the session's counter as `appendMessages` does; the run row takes the
 * events' `seq` from its counter and, by $15, a checkpoint or its end. Without the run nothing is
 * written: every write hangs off `run`.
 */
const SAVE_RUN_STEP = `WITH run AS (
    SELECT r.id, r.session_id FROM runs r JOIN sessions s ON s.id = r.session_id
    WHERE r.id = $3 AND s.user_id = $1 AND s.session_key = $2
  ), s AS (
    UPDATE sessions SET updated_at = $4, last_seq = greatest(coalesce(last_seq, 0),
      (SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = sessions.id)) + $5::int
    WHERE $5::int > 0 AND id = (SELECT session_id FROM run)
    RETURNING id, last_seq - $5::int AS base
  ), added AS (
    INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, is_error,
      created_at, tokens_estimate)
    SELECT s.id, $3, s.base + e.n, e.role, e.content_json, e.tool_call_id, e.tool_name, e.is_error, $4, e.tokens
    FROM s, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::int[])
      WITH ORDINALITY AS e (role, content_json, tool_call_id, tool_name, is_error, tokens, n)
    RETURNING id, seq
  ), r AS (
    UPDATE runs SET
      last_event_seq = CASE WHEN $12::int > 0 THEN greatest(coalesce(last_event_seq, 0),
        (SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = runs.id)) + $12::int ELSE last_event_seq END,
      checkpoint_json = CASE $15::text WHEN 'checkpoint' THEN $16::text WHEN 'finish' THEN NULL
        ELSE checkpoint_json END,
      waiting_since = CASE $15::text WHEN 'checkpoint' THEN CASE WHEN $17::boolean THEN coalesce(waiting_since, $4) END
        WHEN 'finish' THEN NULL ELSE waiting_since END,
      status = CASE WHEN $15::text = 'finish' THEN $18::text ELSE status END,
      ended_at = CASE WHEN $15::text = 'finish' THEN $4 ELSE ended_at END,
      iterations = CASE WHEN $15::text = 'finish' THEN $19::int ELSE iterations END,
      usage_json = CASE WHEN $15::text = 'finish' THEN $20::text ELSE usage_json END,
      error = CASE WHEN $15::text = 'finish' THEN $21::text ELSE error END,
      note = CASE WHEN $15::text = 'finish' THEN $22::text ELSE note END
    WHERE id = (SELECT id FROM run) AND ($12::int > 0 OR $15::text <> 'none')
    RETURNING last_event_seq - $12::int AS base, status, model, prompt, started_at, ended_at, iterations,
      usage_json, error, note
  ), added_events AS (
    INSERT INTO run_events (run_id, seq, type, payload_json, at)
    SELECT $3, r.base + e.n, e.type, e.payload, $4
    FROM r, unnest($13::text[], $14::text[]) WITH ORDINALITY AS e (type, payload, n)
  )
  SELECT (SELECT count(*)::int FROM run) AS found,
    (SELECT json_agg(json_build_array(id, seq) ORDER BY seq) FROM added) AS added,
    CASE WHEN $23::boolean THEN (SELECT items_json FROM todos WHERE session_id = (SELECT session_id FROM run))
      END AS todos_json,
    r.status, r.model, r.prompt, r.started_at, r.ended_at, r.iterations, r.usage_json, r.error, r.note
  FROM (SELECT 1) AS one LEFT JOIN r ON true`;

interface RunStepRow extends Omit<RunColumns, "status"> {
  found: number;
  added: Array<[number, number]> | null;
  todos_json: string | null;
  /** Null when the step did not write the run row. */
  status: string | null;
}

/** Appends trace events to the run ($3) of the session ($1, $2), numbered from the run row's counter. */
const APPEND_EVENTS = `WITH r AS (
    UPDATE runs SET last_event_seq = greatest(coalesce(last_event_seq, 0),
      (SELECT coalesce(max(seq), 0) FROM run_events WHERE run_id = runs.id)) + $4
    WHERE id = $3 AND session_id = ${SESSION_ID} RETURNING last_event_seq - $4 AS base
  ), added AS (
    INSERT INTO run_events (run_id, seq, type, payload_json, at)
    SELECT $3, r.base + e.n, e.type, e.payload, $5
    FROM r, unnest($6::text[], $7::text[]) WITH ORDINALITY AS e (type, payload, n)
  )
  SELECT count(*)::int AS found FROM r`;

export class PgSessionStore extends SessionStoreBase {
  /** `db` must come from `openPostgres` (migrated); the caller keeps ownership and closes it. */
  constructor(
    private readonly db: PgDatabase,
    options: PgSessionStoreOptions = {},
  ) {
    super(db.label, options);
  }

  /** Runs `body`; pg-database.ts words the errors already. */
  protected call<V>(_action: string, body: () => V | Promise<V>): Promise<V> {
    try {
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(err);
    }
  }

  protected async open(ref: T.SessionRef, title: string | undefined): Promise<T.SessionRecord> {
    const row = await this.db.one<SessionRow>(
      `INSERT INTO sessions AS s (user_id, session_key, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (user_id, session_key) DO UPDATE SET title = coalesce(s.title, excluded.title)
       RETURNING ${SESSION_COLUMNS}`,
      [ref.userId, ref.sessionId, title ?? null, this.now()],
    );
    return toSessionRecord(row as SessionRow);
  }

  protected async session(ref: T.SessionRef): Promise<T.SessionRecord | undefined> {
    const row = await this.db.one<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.user_id = $1 AND s.session_key = $2`,
      [ref.userId, ref.sessionId],
    );
    return row && toSessionRecord(row);
  }

  protected async sessions(userId: string): Promise<T.SessionRecord[]> {
    const rows = await this.db.many<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.user_id = $1 ORDER BY s.updated_at DESC, s.id DESC`,
      [userId],
    );
    return rows.map(toSessionRecord);
  }

  protected async append(
    ref: T.SessionRef,
    runId: string | undefined,
    batch: NewMessage[],
  ): Promise<T.StoredMessage[]> {
    if (batch.length === 0) {
      await this.requireSession(this.db, ref);
      return [];
    }
    // An instance of an earlier version may have appended to this session meanwhile, without the
    // counter; once more with a fresh snapshot takes the greater of the counter and the stored seq.
    return withSeqRetry(() => this.insertBatch(this.db, ref, runId, batch));
  }

  protected newestMessages(
    ref: T.SessionRef,
    includeCompacted: boolean,
    limit: number | undefined,
  ): Promise<MessageRow[]> {
    const live = includeCompacted ? "" : "AND compacted = 0";
    return this.db.many<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ${SESSION_ID} ${live} ORDER BY id DESC LIMIT $3`,
      [ref.userId, ref.sessionId, limit ?? null],
    );
  }

  protected markCompactedRows(ref: T.SessionRef, uptoMessageId: number): Promise<number> {
    return this.db.transaction(async (tx) =>
      this.markCompactedIn(tx, ref, await this.lockSession(tx, ref), uptoMessageId),
    );
  }

  protected async writeSummary(ref: T.SessionRef, summary: string | undefined): Promise<void> {
    const now = this.now();
    const changed = await this.db.run(
      `UPDATE sessions SET summary = $3, summary_updated_at = $4, updated_at = $5
       WHERE user_id = $1 AND session_key = $2`,
      [ref.userId, ref.sessionId, summary ?? null, summary === undefined ? null : now, now],
    );
    if (changed === 0) throw missingSessionError(ref);
  }

  protected async summary(ref: T.SessionRef): Promise<string | undefined> {
    const row = await this.db.one<{ summary: string | null }>(
      "SELECT summary FROM sessions WHERE user_id = $1 AND session_key = $2",
      [ref.userId, ref.sessionId],
    );
    return row?.summary ?? undefined;
  }

  protected compactRows(ref: T.SessionRef, input: T.CompactInput): Promise<number> {
    return this.db.transaction(async (tx) => {
      const sessionId = await this.lockSession(tx, ref);
      const now = this.now();
      await tx.run(
        "UPDATE sessions SET summary = $1, summary_updated_at = $2, updated_at = $2 WHERE id = $3",
        [input.summary, now, sessionId],
      );
      return this.markCompactedIn(tx, ref, sessionId, input.uptoMessageId);
    });
  }

  protected async insertRun(ref: T.SessionRef, input: T.StartRunInput): Promise<T.RunRecord> {
    const row = await this.db.one<RunRow>(
      `INSERT INTO runs AS r (id, session_id, status, model, prompt, started_at)
       SELECT $3, id, 'running', $4, $5, $6 FROM sessions WHERE user_id = $1 AND session_key = $2
       ON CONFLICT (id) DO NOTHING RETURNING ${RUN_RETURNING}`,
      [ref.userId, ref.sessionId, input.runId, input.model, input.prompt ?? null, this.now()],
    );
    if (row) return this.decode.run(row);
    await this.requireSession(this.db, ref);
    throw duplicateRunError(input.runId);
  }

  protected async endRun(ref: T.SessionRef, runId: string, f: FinishColumns): Promise<T.RunRecord> {
    const row = await this.db.one<RunRow>(
      `UPDATE runs AS r SET status = $4, ended_at = $5, iterations = $6, usage_json = $7, error = $8, note = $9,
         checkpoint_json = NULL, waiting_since = NULL
       WHERE id = $3 AND session_id = ${SESSION_ID} RETURNING ${RUN_RETURNING}`,
      [ref.userId, ref.sessionId, runId, f.status, this.now(), f.iterations, f.usageJson, f.error, f.note],
    );
    if (row) return this.decode.run(row);
    await this.requireSession(this.db, ref);
    throw missingRunError(ref, runId);
  }

  protected async run(ref: T.SessionRef, runId: string): Promise<T.RunRecord | undefined> {
    const row = await this.db.one<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.id = $3 AND s.user_id = $1 AND s.session_key = $2`,
      [ref.userId, ref.sessionId, runId],
    );
    return row && this.decode.run(row);
  }

  protected async runOfUser(userId: string, runId: string): Promise<T.RunRecord | undefined> {
    const row = await this.db.one<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.id = $1 AND s.user_id = $2`,
      [runId, userId],
    );
    return row && this.decode.run(row);
  }

  protected async runs(ref: T.SessionRef, limit: number | undefined): Promise<T.RunRecord[]> {
    const rows = await this.db.many<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE s.user_id = $1 AND s.session_key = $2
       ORDER BY r.started_at DESC, r.seq DESC LIMIT $3`,
      [ref.userId, ref.sessionId, limit ?? null],
    );
    return rows.map((row) => this.decode.run(row));
  }

  protected async insertEvents(ref: T.SessionRef, runId: string, events: T.RunEventInput[]): Promise<void> {
    const row = await withSeqRetry(() =>
      this.db.one<{ found: number }>(APPEND_EVENTS, [
        ref.userId,
        ref.sessionId,
        runId,
        events.length,
        this.now(),
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e)),
      ]),
    );
    if (row?.found) return;
    await this.requireSession(this.db, ref);
    throw missingRunError(ref, runId);
  }

  protected eventRows(ref: T.SessionRef, runId: string): Promise<RunEventRow[]> {
    return this.db.many<RunEventRow>(
      `SELECT e.run_id, e.seq, e.type, e.payload_json, e.at FROM run_events e JOIN runs r ON r.id = e.run_id
       WHERE e.run_id = $3 AND r.session_id = ${SESSION_ID} ORDER BY e.seq`,
      [ref.userId, ref.sessionId, runId],
    );
  }

  protected async recover(ref: T.SessionRef): Promise<T.RecoveryResult> {
    if ((await this.findSession(this.db, ref)) === undefined) return { runs: [], syntheticResults: [] };
    return this.db.transaction(async (tx) => {
      const sessionId = await this.lockSession(tx, ref);
      const now = this.now();
      // A run waiting for a person is not running in any process: it is left alone.
      const interrupted = await tx.many<{ id: string }>(
        `UPDATE runs SET status = 'interrupted', ended_at = $1, note = $2
         WHERE session_id = $3 AND status = 'running' AND waiting_since IS NULL RETURNING id`,
        [now, INTERRUPTED_RUN_NOTE, sessionId],
      );
      const rows = await tx.many<RunRow>(
        `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.id = ANY($1::text[]) ORDER BY r.started_at, r.seq`,
        [interrupted.map((r) => r.id)],
      );
      const runs = rows.map((row) => this.decode.run(row));
      const tail = await tx.many<MessageRow>(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 AND id >=
           (SELECT coalesce(max(id), 0) FROM messages WHERE session_id = $1 AND role = 'assistant') ORDER BY id`,
        [sessionId],
      );
      const syntheticResults = await this.unansweredResults(ref, tail, (runId, batch) =>
        this.insertBatch(tx, ref, runId, batch),
      );
      return { runs, syntheticResults };
    });
  }

  protected async writeCheckpoint(ref: T.SessionRef, runId: string, c: StepCheckpoint): Promise<void> {
    // Waiting keeps the time it started waiting when saved again while waiting.
    const changed = await this.db.run(
      `UPDATE runs SET checkpoint_json = $4,
         waiting_since = CASE WHEN $5::boolean THEN coalesce(waiting_since, $6::bigint) END
       WHERE id = $3 AND session_id = ${SESSION_ID}`,
      [ref.userId, ref.sessionId, runId, c.json, c.waiting, this.now()],
    );
    if (changed > 0) return;
    await this.requireSession(this.db, ref);
    throw missingRunError(ref, runId);
  }

  protected checkpointRow(ref: T.SessionRef, runId: string): Promise<CheckpointRow | undefined> {
    return this.db.one<CheckpointRow>(
      `SELECT checkpoint_json, waiting_since FROM runs WHERE id = $3 AND session_id = ${SESSION_ID}`,
      [ref.userId, ref.sessionId, runId],
    );
  }

  protected async todosJson(ref: T.SessionRef): Promise<string | undefined> {
    const row = await this.db.one<{ items_json: string }>(
      `SELECT items_json FROM todos WHERE session_id = ${SESSION_ID}`,
      [ref.userId, ref.sessionId],
    );
    return row?.items_json;
  }

  protected async writeTodos(ref: T.SessionRef, json: string): Promise<void> {
    const saved = await this.db.run(
      `INSERT INTO todos (session_id, items_json, updated_at)
       SELECT id, $3, $4 FROM sessions WHERE user_id = $1 AND session_key = $2
       ON CONFLICT (session_id) DO UPDATE SET items_json = excluded.items_json, updated_at = excluded.updated_at`,
      [ref.userId, ref.sessionId, json, this.now()],
    );
    if (saved === 0) throw missingSessionError(ref);
  }

  protected async begin(
    ref: T.SessionRef,
    input: T.BeginTurnInput,
    first: NewMessage,
  ): Promise<T.BeginTurnResult> {
    const now = this.now();
    const { c, tokens } = first;
    const { runId } = input.run;
    let row: BeginTurnRow | undefined;
    try {
      row = await withSeqRetry(() =>
        this.db.one<BeginTurnRow>(BEGIN_TURN, [
          ref.userId,
          ref.sessionId,
          input.title ?? null,
          now,
          runId,
          c.role,
          c.contentJson,
          c.toolCallId,
          c.toolName,
          c.isError,
          tokens,
          input.run.model,
          input.run.prompt ?? null,
        ]),
      );
    } catch (err) {
      if (isDuplicateRun(err)) throw duplicateRunError(runId);
      throw err;
    }
    if (!row) throw missingSessionError(ref);
    const session = toSessionRecord({ ...row, id: 0, user_id: ref.userId, session_key: ref.sessionId });
    return {
      session,
      messages: this.decode.messages(ref, row.messages_json ?? []),
      appended: this.stored({ id: row.added_id, seq: row.added_seq }, runId, now, first),
      run: this.decode.run({ ...row, id: runId, user_id: ref.userId, session_key: ref.sessionId }),
      todos: this.decode.todos(ref, row.todos_json ?? undefined),
    };
  }

  protected async step(ref: T.SessionRef, runId: string, step: StepColumns): Promise<T.RunStepResult> {
    const now = this.now();
    const { messages, events, finish } = step;
    const checkpoint = step.checkpoint ?? { json: null, waiting: false };
    const row = await withSeqRetry(() =>
      this.db.one<RunStepRow>(SAVE_RUN_STEP, [
        ref.userId,
        ref.sessionId,
        runId,
        now,
        ...messageArrays(messages),
        events.length,
        events.map((e) => e.type),
        events.map((e) => JSON.stringify(e)),
        finish ? "finish" : step.checkpoint ? "checkpoint" : "none",
        checkpoint.json,
        checkpoint.waiting,
        finish?.status ?? null,
        finish?.iterations ?? null,
        finish?.usageJson ?? null,
        finish?.error ?? null,
        finish?.note ?? null,
        step.readTodos,
      ]),
    );
    if (!row?.found) {
      await this.requireSession(this.db, ref);
      throw missingRunError(ref, runId);
    }
    const added = row.added ?? [];
    if (added.length !== messages.length) throw missingSessionError(ref);
    const result: T.RunStepResult = {
      messages: added.map(([id, seq], i) => this.stored({ id, seq }, runId, now, messages[i] as NewMessage)),
    };
    if (finish && row.status !== null) {
      result.run = this.decode.run({
        ...row,
        status: row.status,
        id: runId,
        user_id: ref.userId,
        session_key: ref.sessionId,
      });
    }
    if (step.readTodos) result.todos = this.decode.todos(ref, row.todos_json ?? undefined);
    return result;
  }

  // --- helpers ---

  /**
   * Appends `batch` to the session in one statement: the session row's counter hands out their
   * `seq` (its row lock orders concurrent appends) and `updated_at` moves; throws when the session
   * does not exist.
   */
  private async insertBatch(
    q: PgQueryable,
    ref: T.SessionRef,
    runId: string | undefined,
    batch: readonly NewMessage[],
  ): Promise<T.StoredMessage[]> {
    const now = this.now();
    const [count, ...arrays] = messageArrays(batch);
    const inserted = await q.many<{ id: number; seq: number }>(
      `WITH s AS (
         UPDATE sessions SET updated_at = $3, last_seq = greatest(coalesce(last_seq, 0),
           (SELECT coalesce(max(seq), 0) FROM messages WHERE session_id = sessions.id)) + $4
         WHERE user_id = $1 AND session_key = $2 RETURNING id, last_seq - $4 AS base
       )
       INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, is_error,
         created_at, tokens_estimate)
       SELECT s.id, $5, s.base + e.n, e.role, e.content_json, e.tool_call_id, e.tool_name, e.is_error, $3, e.tokens
       FROM s, unnest($6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::int[])
         WITH ORDINALITY AS e (role, content_json, tool_call_id, tool_name, is_error, tokens, n)
       RETURNING id, seq`,
      [ref.userId, ref.sessionId, now, count, runId ?? null, ...arrays],
    );
    if (inserted.length !== batch.length) throw missingSessionError(ref);
    inserted.sort((a, b) => a.seq - b.seq);
    return inserted.map((key, i) => this.stored(key, runId, now, batch[i] as NewMessage));
  }

  private async markCompactedIn(
    tx: PgQueryable,
    ref: T.SessionRef,
    sessionId: number,
    uptoMessageId: number,
  ): Promise<number> {
    const next = await tx.one<{ role: string }>(
      "SELECT role FROM messages WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT 1",
      [sessionId, uptoMessageId],
    );
    checkCompactionCut(ref, uptoMessageId, next?.role);
    return tx.run("UPDATE messages SET compacted = 1 WHERE session_id = $1 AND id <= $2 AND compacted = 0", [
      sessionId,
      uptoMessageId,
    ]);
  }

  private async findSession(q: PgQueryable, ref: T.SessionRef): Promise<number | undefined> {
    const row = await q.one<{ id: number }>(
      "SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2",
      [ref.userId, ref.sessionId],
    );
    return row?.id;
  }

  private async requireSession(q: PgQueryable, ref: T.SessionRef): Promise<number> {
    const id = await this.findSession(q, ref);
    if (id === undefined) throw missingSessionError(ref);
    return id;
  }

  /** The session's id, its row locked until the transaction ends: appends to it run one at a time. */
  private async lockSession(tx: PgQueryable, ref: T.SessionRef): Promise<number> {
    const row = await tx.one<{ id: number }>(
      "SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2 FOR UPDATE",
      [ref.userId, ref.sessionId],
    );
    if (!row) throw missingSessionError(ref);
    return row.id;
  }
}

/** A batch's count, then its columns as arrays for `unnest` (role, content, call id, tool, error, tokens). */
function messageArrays(batch: readonly NewMessage[]): unknown[] {
  return [
    batch.length,
    batch.map((x) => x.c.role),
    batch.map((x) => x.c.contentJson),
    batch.map((x) => x.c.toolCallId),
    batch.map((x) => x.c.toolName),
    batch.map((x) => x.c.isError),
    batch.map((x) => x.tokens),
  ];
}
