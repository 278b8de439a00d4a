/**
 * SessionStore on SQLite (better-sqlite3): the statements only, the rest is session-store-base.ts.
 * Synchronous underneath (each call settles in the turn it is made, joining the group commit);
 * writes that read before they write are better-sqlite3 transactions.
 */
import type { Database } from "better-sqlite3";
import { joinGroupCommit } from "./group-commit.js";
import type { MessageRow } from "./message-rows.js";
import type {
  CheckpointRow,
  FinishColumns,
  NewMessage,
  RunEventRow,
  RunRow,
  SessionStoreOptions,
  StepCheckpoint,
} from "./session-records.js";
import {
  duplicateRunError,
  INTERRUPTED_RUN_NOTE,
  missingRunError,
  missingSessionError,
  toSessionRecord,
} from "./session-records.js";
import { checkCompactionCut, SessionStoreBase, type StepColumns } from "./session-store-base.js";
import { storeError } from "./sqlite-errors.js";
import { prepareStatements, type Statements } from "./sqlite-statements.js";
import type * as T from "./types.js";

export type SqliteSessionStoreOptions = SessionStoreOptions;

export { INTERRUPTED_TOOL_RESULT } from "./session-records.js";

export class SqliteSessionStore extends SessionStoreBase {
  private readonly sql: Statements;
  private readonly db: Database;
  private readonly tx: {
    insert: (sessionId: number, runId: string | undefined, batch: NewMessage[]) => T.StoredMessage[];
    compact: (ref: T.SessionRef, sessionId: number, input: T.CompactInput) => number;
    events: (runId: string, events: T.RunEventInput[]) => void;
    recover: (ref: T.SessionRef, sessionId: number) => T.RecoveryResult;
    beginTurn: (ref: T.SessionRef, input: T.BeginTurnInput, first: NewMessage) => T.BeginTurnResult;
    step: (ref: T.SessionRef, runId: string, step: StepColumns) => T.RunStepResult;
  };

  /** `db` must come from `openDatabase` (migrated); the caller keeps ownership and closes it. */
  constructor(db: Database, options: SqliteSessionStoreOptions = {}) {
    super(db.name, options);
    this.db = db;
    this.sql = prepareStatements(db);
    // Nested calls (recovery inserting messages) become savepoints inside the outer transaction.
    this.tx = {
      insert: db.transaction((sessionId: number, runId: string | undefined, batch: NewMessage[]) =>
        this.insertBatch(sessionId, runId, batch),
      ),
      compact: db.transaction((ref: T.SessionRef, sessionId: number, input: T.CompactInput) =>
        this.compactBody(ref, sessionId, input),
      ),
      events: db.transaction((runId: string, events: T.RunEventInput[]) =>
        this.appendEventsBody(runId, events),
      ),
      recover: db.transaction((ref: T.SessionRef, sessionId: number) => this.recoverBody(ref, sessionId)),
      beginTurn: db.transaction((ref: T.SessionRef, input: T.BeginTurnInput, first: NewMessage) =>
        this.beginTurnBody(ref, input, first),
      ),
      step: db.transaction((ref: T.SessionRef, runId: string, step: StepColumns) =>
        this.stepBody(ref, runId, step),
      ),
    };
  }

  /** Runs `body` now (SQLite is synchronous) and reports failures as rejected DimsumErrors. */
  protected call<V>(action: string, body: () => V | Promise<V>): Promise<V> {
    try {
      joinGroupCommit(this.db);
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(storeError(err, this.db.name, action));
    }
  }

  protected open(ref: T.SessionRef, title: string | undefined): T.SessionRecord {
    const now = this.now();
    this.sql.insertSession.run(ref.userId, ref.sessionId, title ?? null, now, now);
    if (title !== undefined) this.sql.fillTitle.run(title, this.requireSession(ref));
    return toSessionRecord(this.sql.session.get(ref.userId, ref.sessionId)!);
  }

  protected session(ref: T.SessionRef): T.SessionRecord | undefined {
    const row = this.sql.session.get(ref.userId, ref.sessionId);
    return row && toSessionRecord(row);
  }

  protected sessions(userId: string): T.SessionRecord[] {
    return this.sql.sessionsOfUser.all(userId).map(toSessionRecord);
  }

  protected append(ref: T.SessionRef, runId: string | undefined, batch: NewMessage[]): T.StoredMessage[] {
    return this.tx.insert(this.requireSession(ref), runId, batch);
  }

  protected newestMessages(
    ref: T.SessionRef,
    includeCompacted: boolean,
    limit: number | undefined,
  ): MessageRow[] {
    const sessionId = this.findSession(ref);
    if (sessionId === undefined) return [];
    const query = includeCompacted ? this.sql.allMessages : this.sql.liveMessages;
    return query.all(sessionId, limit ?? -1);
  }

  protected markCompactedRows(ref: T.SessionRef, uptoMessageId: number): number {
    return this.markCompactedIn(ref, this.requireSession(ref), uptoMessageId);
  }

  protected writeSummary(ref: T.SessionRef, summary: string | undefined): void {
    const now = this.now();
    this.sql.setSummary.run(
      summary ?? null,
      summary === undefined ? null : now,
      now,
      this.requireSession(ref),
    );
  }

  protected summary(ref: T.SessionRef): string | undefined {
    const sessionId = this.findSession(ref);
    return sessionId === undefined ? undefined : (this.sql.summary.get(sessionId) ?? undefined);
  }

  protected compactRows(ref: T.SessionRef, input: T.CompactInput): number {
    return this.tx.compact(ref, this.requireSession(ref), input);
  }

  protected insertRun(ref: T.SessionRef, input: T.StartRunInput): T.RunRecord {
    const sessionId = this.requireSession(ref);
    if (this.sql.runExists.get(input.runId)) throw duplicateRunError(input.runId);
    this.sql.insertRun.run(input.runId, sessionId, input.model, input.prompt ?? null, this.now());
    return this.readRun(input.runId, sessionId);
  }

  protected endRun(ref: T.SessionRef, runId: string, finish: FinishColumns): T.RunRecord {
    const sessionId = this.requireSession(ref);
    if (this.finish(runId, sessionId, finish) === 0) throw missingRunError(ref, runId);
    return this.readRun(runId, sessionId);
  }

  protected run(ref: T.SessionRef, runId: string): T.RunRecord | undefined {
    const sessionId = this.findSession(ref);
    const row = sessionId === undefined ? undefined : this.sql.run.get(runId, sessionId);
    return row && this.decode.run(row);
  }

  protected runOfUser(userId: string, runId: string): T.RunRecord | undefined {
    const row = this.sql.runOfUser.get(runId, userId);
    return row && this.decode.run(row);
  }

  protected runs(ref: T.SessionRef, limit: number | undefined): T.RunRecord[] {
    const sessionId = this.findSession(ref);
    if (sessionId === undefined) return [];
    return this.sql.runs.all(sessionId, limit ?? -1).map((row: RunRow) => this.decode.run(row));
  }

  protected insertEvents(ref: T.SessionRef, runId: string, events: T.RunEventInput[]): void {
    if (!this.sql.runInSession.get(runId, this.requireSession(ref))) throw missingRunError(ref, runId);
    if (events.length > 0) this.tx.events(runId, events);
  }

  protected eventRows(ref: T.SessionRef, runId: string): RunEventRow[] {
    const sessionId = this.findSession(ref);
    if (sessionId === undefined || !this.sql.runInSession.get(runId, sessionId)) return [];
    return this.sql.events.all(runId);
  }

  protected recover(ref: T.SessionRef): T.RecoveryResult {
    const sessionId = this.findSession(ref);
    if (sessionId === undefined) return { runs: [], syntheticResults: [] };
    return this.tx.recover(ref, sessionId);
  }

  protected writeCheckpoint(ref: T.SessionRef, runId: string, checkpoint: StepCheckpoint): void {
    const sessionId = this.requireSession(ref);
    if (this.checkpoint(runId, sessionId, checkpoint) === 0) throw missingRunError(ref, runId);
  }

  protected checkpointRow(ref: T.SessionRef, runId: string): CheckpointRow | undefined {
    const sessionId = this.findSession(ref);
    return sessionId === undefined ? undefined : this.sql.checkpoint.get(runId, sessionId);
  }

  protected todosJson(ref: T.SessionRef): string | undefined {
    const sessionId = this.findSession(ref);
    return sessionId === undefined ? undefined : this.sql.todos.get(sessionId);
  }

  protected writeTodos(ref: T.SessionRef, json: string): void {
    this.sql.saveTodos.run(this.requireSession(ref), json, this.now());
  }

  protected begin(ref: T.SessionRef, input: T.BeginTurnInput, first: NewMessage): T.BeginTurnResult {
    return this.tx.beginTurn(ref, input, first);
  }

  protected step(ref: T.SessionRef, runId: string, step: StepColumns): T.RunStepResult {
    return this.tx.step(ref, runId, step);
  }

  // --- transaction bodies (run through this.tx) ---

  private beginTurnBody(ref: T.SessionRef, input: T.BeginTurnInput, first: NewMessage): T.BeginTurnResult {
    const now = this.now();
    this.sql.insertSession.run(ref.userId, ref.sessionId, input.title ?? null, now, now);
    const sessionId = this.requireSession(ref);
    if (input.title !== undefined) this.sql.fillTitle.run(input.title, sessionId);
    const messages = this.decode.messages(ref, this.sql.liveMessages.all(sessionId, -1).reverse());
    const { runId } = input.run;
    const [appended] = this.insertBatch(sessionId, runId, [first]) as [T.StoredMessage];
    if (this.sql.runExists.get(runId)) throw duplicateRunError(runId);
    this.sql.insertRun.run(runId, sessionId, input.run.model, input.run.prompt ?? null, now);
    const todos = this.sql.todos.get(sessionId);
    return {
      session: toSessionRecord(this.sql.session.get(ref.userId, ref.sessionId)!),
      messages,
      appended,
      run: this.readRun(runId, sessionId),
      todos: this.decode.todos(ref, todos),
    };
  }

  private stepBody(ref: T.SessionRef, runId: string, step: StepColumns): T.RunStepResult {
    const sessionId = this.requireSession(ref);
    if (!this.sql.runInSession.get(runId, sessionId)) throw missingRunError(ref, runId);
    const messages = step.messages.length > 0 ? this.insertBatch(sessionId, runId, step.messages) : [];
    if (step.events.length > 0) this.appendEventsBody(runId, step.events);
    if (step.checkpoint) this.checkpoint(runId, sessionId, step.checkpoint);
    const result: T.RunStepResult = { messages };
    if (step.finish) {
      this.finish(runId, sessionId, step.finish);
      result.run = this.readRun(runId, sessionId);
    }
    if (step.readTodos) result.todos = this.decode.todos(ref, this.sql.todos.get(sessionId));
    return result;
  }

  private insertBatch(sessionId: number, runId: string | undefined, batch: NewMessage[]): T.StoredMessage[] {
    const now = this.now();
    let seq = this.sql.lastSeq.get(sessionId) ?? 0;
    const stored = batch.map((m) => {
      const { c, tokens } = m;
      seq += 1;
      const { lastInsertRowid } = this.sql.insertMessage.run(
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
      );
      return this.stored({ id: Number(lastInsertRowid), seq }, runId, now, m);
    });
    this.sql.touchSession.run(now, sessionId);
    return stored;
  }

  private compactBody(ref: T.SessionRef, sessionId: number, input: T.CompactInput): number {
    const now = this.now();
    this.sql.setSummary.run(input.summary, now, now, sessionId);
    return this.markCompactedIn(ref, sessionId, input.uptoMessageId);
  }

  private appendEventsBody(runId: string, events: T.RunEventInput[]): void {
    const at = this.now();
    let seq = this.sql.lastEventSeq.get(runId) ?? 0;
    for (const event of events) {
      seq += 1;
      this.sql.insertEvent.run(runId, seq, event.type, JSON.stringify(event), at);
    }
  }

  private recoverBody(ref: T.SessionRef, sessionId: number): T.RecoveryResult {
    const now = this.now();
    const running = this.sql.runningRuns.all(sessionId);
    for (const run of running) this.sql.interruptRun.run(now, INTERRUPTED_RUN_NOTE, run.id);
    const runs = running.map((row) => this.readRun(row.id, sessionId));

    // Defence in depth: transactions make this impossible for new data, but older files may need it.
    const tail = this.sql.historyTail.all(sessionId, sessionId);
    const syntheticResults = this.unansweredResults(ref, tail, (runId, batch) =>
      this.insertBatch(sessionId, runId, batch),
    ) as T.StoredMessage[];
    return { runs, syntheticResults };
  }

  // --- helpers ---

  private finish(runId: string, sessionId: number, f: FinishColumns): number {
    const { status, iterations, usageJson, error, note } = f;
    return this.sql.finishRun.run(status, this.now(), iterations, usageJson, error, note, runId, sessionId)
      .changes;
  }

  private checkpoint(runId: string, sessionId: number, { json, waiting }: StepCheckpoint): number {
    return this.sql.saveCheckpoint.run(json, waiting ? 1 : 0, this.now(), runId, sessionId).changes;
  }

  private findSession(ref: T.SessionRef): number | undefined {
    return this.sql.sessionId.get(ref.userId, ref.sessionId);
  }

  private requireSession(ref: T.SessionRef): number {
    const id = this.findSession(ref);
    if (id === undefined) throw missingSessionError(ref);
    return id;
  }

  private markCompactedIn(ref: T.SessionRef, sessionId: number, uptoMessageId: number): number {
    checkCompactionCut(ref, uptoMessageId, this.sql.roleAfter.get(sessionId, uptoMessageId));
    return this.sql.markCompacted.run(sessionId, uptoMessageId).changes;
  }

  private readRun(runId: string, sessionId: number): T.RunRecord {
    return this.decode.run(this.sql.run.get(runId, sessionId)!);
  }
}
