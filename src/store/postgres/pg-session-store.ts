/**
 * SessionStore on PostgreSQL: the same tables and behaviour as the SQLite store, safe for several
 * instances. Appends lock their session row (messages) or run row (trace events) so sequence numbers
 * never collide, and every multi-row write is one transaction.
 */
import type { Message } from "../../llm/types.js";
import type { TodoItem } from "../../tools/types.js";
import { type MessageRow, messageToColumns } from "../message-rows.js";
import {
  checkRef,
  checkToolPairs,
  defaultStoreLogger,
  duplicateRunError,
  INTERRUPTED_RUN_NOTE,
  missingRunError,
  missingSessionError,
  RowDecoder,
  type RunEventRow,
  type RunRow,
  type SessionRow,
  splitToolResultError,
  toSessionRecord,
  toStoredMessage,
  unansweredResults,
} from "../session-records.js";
import { describeToolPairIssues } from "../tool-pairs.js";
import type {
  CompactInput,
  FinishRunInput,
  LoadMessagesOptions,
  RecoveryResult,
  RunEventInput,
  RunRecord,
  SessionRecord,
  SessionRef,
  SessionStore,
  StartRunInput,
  StoredMessage,
  StoredRunEvent,
  StoreLogger,
} from "../types.js";
import type { PgDatabase, PgQueryable } from "./pg-database.js";

export interface PgSessionStoreOptions {
  /** Clock in epoch milliseconds (tests pin it). */
  now?: () => number;
  /** Receives a line for every stored row that could not be read and was skipped. */
  logger?: StoreLogger;
  /** Fills `tokens_estimate` for new messages. */
  estimateTokens?: (message: Message) => number;
}

const SESSION_COLUMNS = `s.id, s.user_id, s.session_key, s.title, s.summary, s.summary_updated_at, s.created_at,
  s.updated_at, (SELECT count(*)::int FROM messages m WHERE m.session_id = s.id) AS message_count`;
const MESSAGE_COLUMNS = `id, seq, run_id, role, content_json, tool_call_id, tool_name, is_error, created_at,
  tokens_estimate, compacted`;
const RUN_COLUMNS = `r.id, s.user_id, s.session_key, r.status, r.model, r.prompt, r.started_at, r.ended_at,
  r.iterations, r.usage_json, r.error, r.note`;
const RUN_FROM = "FROM runs r JOIN sessions s ON s.id = r.session_id";

export class PgSessionStore implements SessionStore {
  private readonly now: () => number;
  private readonly logger: StoreLogger;
  private readonly decode: RowDecoder;
  private readonly estimateTokens: ((message: Message) => number) | undefined;

  /** `db` must come from `openPostgres` (migrated); the caller keeps ownership and closes it. */
  constructor(
    private readonly db: PgDatabase,
    options: PgSessionStoreOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? defaultStoreLogger;
    this.decode = new RowDecoder(this.logger, db.label);
    this.estimateTokens = options.estimateTokens;
  }

  async openSession(ref: SessionRef, options: { title?: string } = {}): Promise<SessionRecord> {
    checkRef(ref);
    const now = this.now();
    await this.db.run(
      `INSERT INTO sessions (user_id, session_key, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)
       ON CONFLICT (user_id, session_key) DO UPDATE SET title = coalesce(sessions.title, excluded.title)`,
      [ref.userId, ref.sessionId, options.title ?? null, now],
    );
    return (await this.getSession(ref)) as SessionRecord;
  }

  async getSession(ref: SessionRef): Promise<SessionRecord | undefined> {
    checkRef(ref);
    const row = await this.db.one<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.user_id = $1 AND s.session_key = $2`,
      [ref.userId, ref.sessionId],
    );
    return row && toSessionRecord(row);
  }

  async listSessions(userId: string): Promise<SessionRecord[]> {
    const rows = await this.db.many<SessionRow>(
      `SELECT ${SESSION_COLUMNS} FROM sessions s WHERE s.user_id = $1 ORDER BY s.updated_at DESC, s.id DESC`,
      [userId],
    );
    return rows.map(toSessionRecord);
  }

  async appendMessages(
    ref: SessionRef,
    runId: string | undefined,
    messages: Message[],
  ): Promise<StoredMessage[]> {
    checkToolPairs(ref, messages, describeToolPairIssues);
    return this.db.transaction(async (tx) =>
      this.insertBatch(tx, await this.lockSession(tx, ref), runId, messages),
    );
  }

  async loadMessages(ref: SessionRef, options: LoadMessagesOptions = {}): Promise<StoredMessage[]> {
    const sessionId = await this.findSession(this.db, ref);
    if (sessionId === undefined) return [];
    const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
    const live = options.includeCompacted ? "" : "AND compacted = 0";
    const rows = await this.db.many<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = $1 ${live} ORDER BY id DESC LIMIT $2`,
      [sessionId, limit],
    );
    return this.decode.messages(ref, rows.reverse());
  }

  async markCompacted(ref: SessionRef, uptoMessageId: number): Promise<number> {
    return this.db.transaction(async (tx) =>
      this.markCompactedIn(tx, ref, await this.lockSession(tx, ref), uptoMessageId),
    );
  }

  async setSummary(ref: SessionRef, summary: string | undefined): Promise<void> {
    const sessionId = await this.requireSession(this.db, ref);
    const now = this.now();
    await this.db.run(
      "UPDATE sessions SET summary = $1, summary_updated_at = $2, updated_at = $3 WHERE id = $4",
      [summary ?? null, summary === undefined ? null : now, now, sessionId],
    );
  }

  async getSummary(ref: SessionRef): Promise<string | undefined> {
    const sessionId = await this.findSession(this.db, ref);
    if (sessionId === undefined) return undefined;
    const row = await this.db.one<{ summary: string | null }>("SELECT summary FROM sessions WHERE id = $1", [
      sessionId,
    ]);
    return row?.summary ?? undefined;
  }

  async compact(ref: SessionRef, input: CompactInput): Promise<number> {
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

  async startRun(ref: SessionRef, input: StartRunInput): Promise<RunRecord> {
    const sessionId = await this.requireSession(this.db, ref);
    const inserted = await this.db.run(
      `INSERT INTO runs (id, session_id, status, model, prompt, started_at) VALUES ($1, $2, 'running', $3, $4, $5)
       ON CONFLICT (id) DO NOTHING`,
      [input.runId, sessionId, input.model, input.prompt ?? null, this.now()],
    );
    if (inserted === 0) throw duplicateRunError(input.runId);
    return this.readRun(this.db, input.runId, sessionId) as Promise<RunRecord>;
  }

  async finishRun(ref: SessionRef, runId: string, input: FinishRunInput): Promise<RunRecord> {
    const sessionId = await this.requireSession(this.db, ref);
    const changed = await this.db.run(
      `UPDATE runs SET status = $1, ended_at = $2, iterations = $3, usage_json = $4, error = $5, note = $6
       WHERE id = $7 AND session_id = $8`,
      [
        input.status,
        this.now(),
        input.iterations,
        input.usage === undefined ? null : JSON.stringify(input.usage),
        input.error ?? null,
        input.note ?? null,
        runId,
        sessionId,
      ],
    );
    if (changed === 0) throw missingRunError(ref, runId);
    return this.readRun(this.db, runId, sessionId) as Promise<RunRecord>;
  }

  async getRun(ref: SessionRef, runId: string): Promise<RunRecord | undefined> {
    const sessionId = await this.findSession(this.db, ref);
    return sessionId === undefined ? undefined : this.readRun(this.db, runId, sessionId);
  }

  async findRun(userId: string, runId: string): Promise<RunRecord | undefined> {
    const row = await this.db.one<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.id = $1 AND s.user_id = $2`,
      [runId, userId],
    );
    return row && this.decode.run(row);
  }

  async listRuns(ref: SessionRef, options: { limit?: number } = {}): Promise<RunRecord[]> {
    const sessionId = await this.findSession(this.db, ref);
    if (sessionId === undefined) return [];
    const limit = options.limit === undefined ? null : Math.max(0, Math.floor(options.limit));
    const rows = await this.db.many<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.session_id = $1 ORDER BY r.started_at DESC, r.seq DESC LIMIT $2`,
      [sessionId, limit],
    );
    return rows.map((row) => this.decode.run(row));
  }

  async appendRunEvents(ref: SessionRef, runId: string, events: RunEventInput[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      const sessionId = await this.requireSession(tx, ref);
      const run = await tx.one("SELECT 1 FROM runs WHERE id = $1 AND session_id = $2 FOR UPDATE", [
        runId,
        sessionId,
      ]);
      if (!run) throw missingRunError(ref, runId);
      if (events.length === 0) return;
      const at = this.now();
      const last = await tx.one<{ seq: number }>(
        "SELECT coalesce(max(seq), 0) AS seq FROM run_events WHERE run_id = $1",
        [runId],
      );
      const first = (last?.seq ?? 0) + 1;
      await tx.run(
        `INSERT INTO run_events (run_id, seq, type, payload_json, at)
         SELECT $1, $2 + n - 1, type, payload, $3 FROM unnest($4::text[], $5::text[]) WITH ORDINALITY AS e(type, payload, n)`,
        [runId, first, at, events.map((e) => e.type), events.map((e) => JSON.stringify(e))],
      );
    });
  }

  async getRunEvents(ref: SessionRef, runId: string): Promise<StoredRunEvent[]> {
    const sessionId = await this.findSession(this.db, ref);
    if (sessionId === undefined) return [];
    const rows = await this.db.many<RunEventRow>(
      `SELECT e.run_id, e.seq, e.type, e.payload_json, e.at FROM run_events e JOIN runs r ON r.id = e.run_id
       WHERE e.run_id = $1 AND r.session_id = $2 ORDER BY e.seq`,
      [runId, sessionId],
    );
    return this.decode.events(runId, rows);
  }

  async recoverInterruptedRuns(ref: SessionRef): Promise<RecoveryResult> {
    if ((await this.findSession(this.db, ref)) === undefined) return { runs: [], syntheticResults: [] };
    return this.db.transaction(async (tx) => {
      const sessionId = await this.lockSession(tx, ref);
      const now = this.now();
      const interrupted = await tx.many<{ id: string }>(
        `UPDATE runs SET status = 'interrupted', ended_at = $1, note = $2
         WHERE session_id = $3 AND status = 'running' RETURNING id`,
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
      const plan = unansweredResults(ref, this.decode.messages(ref, tail), this.logger);
      if (!plan) return { runs, syntheticResults: [] };
      return { runs, syntheticResults: await this.insertBatch(tx, sessionId, plan.runId, plan.results) };
    });
  }

  async getTodos(ref: SessionRef): Promise<TodoItem[]> {
    const sessionId = await this.findSession(this.db, ref);
    if (sessionId === undefined) return [];
    const row = await this.db.one<{ items_json: string }>(
      "SELECT items_json FROM todos WHERE session_id = $1",
      [sessionId],
    );
    return this.decode.todos(ref, row?.items_json);
  }

  async saveTodos(ref: SessionRef, items: TodoItem[]): Promise<void> {
    const sessionId = await this.requireSession(this.db, ref);
    await this.db.run(
      `INSERT INTO todos (session_id, items_json, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (session_id) DO UPDATE SET items_json = excluded.items_json, updated_at = excluded.updated_at`,
      [sessionId, JSON.stringify(items), this.now()],
    );
  }

  // --- helpers ---

  private async insertBatch(
    tx: PgQueryable,
    sessionId: number,
    runId: string | undefined,
    messages: readonly Message[],
  ): Promise<StoredMessage[]> {
    const now = this.now();
    const last = await tx.one<{ seq: number }>(
      "SELECT coalesce(max(seq), 0) AS seq FROM messages WHERE session_id = $1",
      [sessionId],
    );
    let seq = last?.seq ?? 0;
    const stored: StoredMessage[] = [];
    for (const message of messages) {
      const c = messageToColumns(message);
      const tokens = this.estimateTokens ? Math.round(this.estimateTokens(message)) : null;
      seq += 1;
      const inserted = await tx.one<{ id: number }>(
        `INSERT INTO messages (session_id, run_id, seq, role, content_json, tool_call_id, tool_name, is_error,
           created_at, tokens_estimate) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
        [
          sessionId,
          runId ?? null,
          seq,
          c.role,
          c.contentJson,
          c.toolCallId,
          c.toolName,
          c.isError,
          now,
          tokens,
        ],
      );
      const row: MessageRow = {
        id: inserted?.id ?? 0,
        seq,
        run_id: runId ?? null,
        role: c.role,
        content_json: c.contentJson,
        tool_call_id: c.toolCallId,
        tool_name: c.toolName,
        is_error: c.isError,
        created_at: now,
        tokens_estimate: tokens,
        compacted: 0,
      };
      stored.push(toStoredMessage(row, message));
    }
    await tx.run("UPDATE sessions SET updated_at = $1 WHERE id = $2", [now, sessionId]);
    return stored;
  }

  private async markCompactedIn(
    tx: PgQueryable,
    ref: SessionRef,
    sessionId: number,
    uptoMessageId: number,
  ): Promise<number> {
    const next = await tx.one<{ role: string }>(
      "SELECT role FROM messages WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT 1",
      [sessionId, uptoMessageId],
    );
    if (next?.role === "tool") throw splitToolResultError(ref, uptoMessageId);
    return tx.run("UPDATE messages SET compacted = 1 WHERE session_id = $1 AND id <= $2 AND compacted = 0", [
      sessionId,
      uptoMessageId,
    ]);
  }

  private async findSession(q: PgQueryable, ref: SessionRef): Promise<number | undefined> {
    checkRef(ref);
    const row = await q.one<{ id: number }>(
      "SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2",
      [ref.userId, ref.sessionId],
    );
    return row?.id;
  }

  private async requireSession(q: PgQueryable, ref: SessionRef): Promise<number> {
    const id = await this.findSession(q, ref);
    if (id === undefined) throw missingSessionError(ref);
    return id;
  }

  /** The session's id, its row locked until the transaction ends: appends to it run one at a time. */
  private async lockSession(tx: PgQueryable, ref: SessionRef): Promise<number> {
    checkRef(ref);
    const row = await tx.one<{ id: number }>(
      "SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2 FOR UPDATE",
      [ref.userId, ref.sessionId],
    );
    if (!row) throw missingSessionError(ref);
    return row.id;
  }

  private async readRun(q: PgQueryable, runId: string, sessionId: number): Promise<RunRecord | undefined> {
    const row = await q.one<RunRow>(
      `SELECT ${RUN_COLUMNS} ${RUN_FROM} WHERE r.id = $1 AND r.session_id = $2`,
      [runId, sessionId],
    );
    return row && this.decode.run(row);
  }
}
