/** SessionStore on SQLite (better-sqlite3). Synchronous underneath; async to match the interface. */
import type { Database } from "better-sqlite3";
import { DimsumError } from "../errors.js";
import type { Message } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";
import { joinGroupCommit } from "./group-commit.js";
import { type MessageRow, messageToColumns } from "./message-rows.js";
import type { RunRow, SessionStoreOptions } from "./session-records.js";
import {
  checkpointColumns,
  checkRef,
  checkToolPairs,
  defaultStoreLogger,
  duplicateRunError,
  INTERRUPTED_RUN_NOTE,
  missingRunError,
  missingSessionError,
  newStoredMessage,
  RowDecoder,
  splitToolResultError,
  toSessionRecord,
  unansweredResults,
} from "./session-records.js";
import { storeError } from "./sqlite-errors.js";
import { prepareStatements, type Statements } from "./sqlite-statements.js";
import { describeToolPairIssues } from "./tool-pairs.js";
import type {
  BeginTurnInput,
  BeginTurnResult,
  CompactInput,
  FinishRunInput,
  LoadMessagesOptions,
  RecoveryResult,
  RunEventInput,
  RunRecord,
  RunStepInput,
  RunStepResult,
  SessionRecord,
  SessionRef,
  SessionStore,
  StartRunInput,
  StoredCheckpoint,
  StoredMessage,
  StoredRunEvent,
  StoreLogger,
} from "./types.js";

export type SqliteSessionStoreOptions = SessionStoreOptions;

export { INTERRUPTED_TOOL_RESULT } from "./session-records.js";

export class SqliteSessionStore implements SessionStore {
  private readonly sql: Statements;
  private readonly file: string;
  private readonly db: Database;
  private readonly now: () => number;
  private readonly logger: StoreLogger;
  private readonly decode: RowDecoder;
  private readonly estimateTokens: ((message: Message) => number) | undefined;
  private readonly tx: {
    insert: (sessionId: number, runId: string | undefined, messages: Message[]) => StoredMessage[];
    compact: (ref: SessionRef, sessionId: number, input: CompactInput) => number;
    events: (runId: string, events: RunEventInput[]) => void;
    recover: (ref: SessionRef, sessionId: number) => RecoveryResult;
    beginTurn: (ref: SessionRef, input: BeginTurnInput) => BeginTurnResult;
    step: (ref: SessionRef, runId: string, step: RunStepInput) => RunStepResult;
  };

  /** `db` must come from `openDatabase` (migrated); the caller keeps ownership and closes it. */
  constructor(db: Database, options: SqliteSessionStoreOptions = {}) {
    this.file = db.name;
    this.db = db;
    this.sql = prepareStatements(db);
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? defaultStoreLogger;
    this.decode = new RowDecoder(this.logger, this.file);
    this.estimateTokens = options.estimateTokens;
    // Nested calls (recovery inserting messages) become savepoints inside the outer transaction.
    this.tx = {
      insert: db.transaction((sessionId: number, runId: string | undefined, messages: Message[]) =>
        this.insertBatch(sessionId, runId, messages),
      ),
      compact: db.transaction((ref: SessionRef, sessionId: number, input: CompactInput) =>
        this.compactBody(ref, sessionId, input),
      ),
      events: db.transaction((runId: string, events: RunEventInput[]) =>
        this.appendEventsBody(runId, events),
      ),
      recover: db.transaction((ref: SessionRef, sessionId: number) => this.recoverBody(ref, sessionId)),
      beginTurn: db.transaction((ref: SessionRef, input: BeginTurnInput) => this.beginTurnBody(ref, input)),
      step: db.transaction((ref: SessionRef, runId: string, step: RunStepInput) =>
        this.stepBody(ref, runId, step),
      ),
    };
  }

  openSession(ref: SessionRef, options: { title?: string } = {}): Promise<SessionRecord> {
    return this.guard("open a session in", () => {
      checkRef(ref);
      const now = this.now();
      this.sql.insertSession.run(ref.userId, ref.sessionId, options.title ?? null, now, now);
      if (options.title !== undefined) this.sql.fillTitle.run(options.title, this.requireSession(ref));
      return toSessionRecord(this.sql.session.get(ref.userId, ref.sessionId)!);
    });
  }

  getSession(ref: SessionRef): Promise<SessionRecord | undefined> {
    return this.guard("read", () => {
      const row = this.sql.session.get(checkRef(ref).userId, ref.sessionId);
      return row && toSessionRecord(row);
    });
  }

  listSessions(userId: string): Promise<SessionRecord[]> {
    return this.guard("read", () => this.sql.sessionsOfUser.all(userId).map(toSessionRecord));
  }

  appendMessages(ref: SessionRef, runId: string | undefined, messages: Message[]): Promise<StoredMessage[]> {
    return this.guard("write to", () => {
      checkToolPairs(ref, messages, describeToolPairIssues);
      return this.tx.insert(this.requireSession(ref), runId, messages);
    });
  }

  loadMessages(ref: SessionRef, options: LoadMessagesOptions = {}): Promise<StoredMessage[]> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      if (sessionId === undefined) return [];
      const limit = options.limit === undefined ? -1 : Math.max(0, Math.floor(options.limit));
      const query = options.includeCompacted ? this.sql.allMessages : this.sql.liveMessages;
      return this.decodeMessages(ref, query.all(sessionId, limit).reverse());
    });
  }

  markCompacted(ref: SessionRef, uptoMessageId: number): Promise<number> {
    return this.guard("write to", () => this.markCompactedIn(ref, this.requireSession(ref), uptoMessageId));
  }

  setSummary(ref: SessionRef, summary: string | undefined): Promise<void> {
    return this.guard("write to", () => {
      const now = this.now();
      this.sql.setSummary.run(
        summary ?? null,
        summary === undefined ? null : now,
        now,
        this.requireSession(ref),
      );
    });
  }

  getSummary(ref: SessionRef): Promise<string | undefined> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      return sessionId === undefined ? undefined : (this.sql.summary.get(sessionId) ?? undefined);
    });
  }

  compact(ref: SessionRef, input: CompactInput): Promise<number> {
    return this.guard("write to", () => this.tx.compact(ref, this.requireSession(ref), input));
  }

  startRun(ref: SessionRef, input: StartRunInput): Promise<RunRecord> {
    return this.guard("write to", () => {
      const sessionId = this.requireSession(ref);
      if (this.sql.runExists.get(input.runId)) throw duplicateRunError(input.runId);
      this.sql.insertRun.run(input.runId, sessionId, input.model, input.prompt ?? null, this.now());
      return this.readRun(this.sql.run.get(input.runId, sessionId)!);
    });
  }

  finishRun(ref: SessionRef, runId: string, input: FinishRunInput): Promise<RunRecord> {
    return this.guard("write to", () => {
      const sessionId = this.requireSession(ref);
      const usage = input.usage === undefined ? null : JSON.stringify(input.usage);
      const { status, iterations } = input;
      const changed = this.sql.finishRun.run(
        status,
        this.now(),
        iterations,
        usage,
        input.error ?? null,
        input.note ?? null,
        runId,
        sessionId,
      ).changes;
      if (changed === 0) throw this.missingRun(ref, runId);
      return this.readRun(this.sql.run.get(runId, sessionId)!);
    });
  }

  getRun(ref: SessionRef, runId: string): Promise<RunRecord | undefined> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      const row = sessionId === undefined ? undefined : this.sql.run.get(runId, sessionId);
      return row && this.readRun(row);
    });
  }

  findRun(userId: string, runId: string): Promise<RunRecord | undefined> {
    return this.guard("read", () => {
      const row = this.sql.runOfUser.get(runId, userId);
      return row && this.readRun(row);
    });
  }

  listRuns(ref: SessionRef, options: { limit?: number } = {}): Promise<RunRecord[]> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      if (sessionId === undefined) return [];
      const limit = options.limit === undefined ? -1 : Math.max(0, Math.floor(options.limit));
      return this.sql.runs.all(sessionId, limit).map((row) => this.readRun(row));
    });
  }

  appendRunEvents(ref: SessionRef, runId: string, events: RunEventInput[]): Promise<void> {
    return this.guard("write to", () => {
      if (!this.sql.runInSession.get(runId, this.requireSession(ref))) throw this.missingRun(ref, runId);
      if (events.length > 0) this.tx.events(runId, events);
    });
  }

  getRunEvents(ref: SessionRef, runId: string): Promise<StoredRunEvent[]> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      if (sessionId === undefined || !this.sql.runInSession.get(runId, sessionId)) return [];
      return this.decode.events(runId, this.sql.events.all(runId));
    });
  }

  recoverInterruptedRuns(ref: SessionRef): Promise<RecoveryResult> {
    return this.guard("write to", () => {
      const sessionId = this.findSession(ref);
      if (sessionId === undefined) return { runs: [], syntheticResults: [] };
      return this.tx.recover(ref, sessionId);
    });
  }

  saveCheckpoint(
    ref: SessionRef,
    runId: string,
    checkpoint: unknown,
    options: { waiting?: boolean } = {},
  ): Promise<void> {
    return this.guard("write to", () => {
      const sessionId = this.requireSession(ref);
      const { json, waiting } = checkpointColumns(checkpoint, options);
      const changed = this.sql.saveCheckpoint.run(
        json,
        waiting ? 1 : 0,
        this.now(),
        runId,
        sessionId,
      ).changes;
      if (changed === 0) throw this.missingRun(ref, runId);
    });
  }

  loadCheckpoint(ref: SessionRef, runId: string): Promise<StoredCheckpoint | undefined> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      if (sessionId === undefined) return undefined;
      return this.decode.checkpoint(runId, this.sql.checkpoint.get(runId, sessionId));
    });
  }

  getTodos(ref: SessionRef): Promise<TodoItem[]> {
    return this.guard("read", () => {
      const sessionId = this.findSession(ref);
      return this.decode.todos(ref, sessionId === undefined ? undefined : this.sql.todos.get(sessionId));
    });
  }

  saveTodos(ref: SessionRef, items: TodoItem[]): Promise<void> {
    return this.guard("write to", () => {
      this.sql.saveTodos.run(this.requireSession(ref), JSON.stringify(items), this.now());
    });
  }

  beginTurn(ref: SessionRef, input: BeginTurnInput): Promise<BeginTurnResult> {
    return this.guard("write to", () => {
      checkToolPairs(ref, [input.message], describeToolPairIssues);
      checkRef(ref);
      return this.tx.beginTurn(ref, input);
    });
  }

  saveRunStep(ref: SessionRef, runId: string, step: RunStepInput): Promise<RunStepResult> {
    return this.guard("write to", () => {
      if (step.messages && step.messages.length > 0)
        checkToolPairs(ref, step.messages, describeToolPairIssues);
      if (step.finish && step.checkpoint) {
        throw new DimsumError(
          "internal",
          "A run step either saves a checkpoint or finishes the run, not both.",
        );
      }
      return this.tx.step(ref, runId, step);
    });
  }

  // --- transaction bodies (run through this.tx) ---

  private beginTurnBody(ref: SessionRef, input: BeginTurnInput): BeginTurnResult {
    const now = this.now();
    this.sql.insertSession.run(ref.userId, ref.sessionId, input.title ?? null, now, now);
    const sessionId = this.requireSession(ref);
    if (input.title !== undefined) this.sql.fillTitle.run(input.title, sessionId);
    const messages = this.decodeMessages(ref, this.sql.liveMessages.all(sessionId, -1).reverse());
    const { runId } = input.run;
    const [appended] = this.insertBatch(sessionId, runId, [input.message]) as [StoredMessage];
    if (this.sql.runExists.get(runId)) throw duplicateRunError(runId);
    this.sql.insertRun.run(runId, sessionId, input.run.model, input.run.prompt ?? null, now);
    const todos = this.sql.todos.get(sessionId);
    return {
      session: toSessionRecord(this.sql.session.get(ref.userId, ref.sessionId)!),
      messages,
      appended,
      run: this.readRun(this.sql.run.get(runId, sessionId)!),
      todos: this.decode.todos(ref, todos),
    };
  }

  private stepBody(ref: SessionRef, runId: string, step: RunStepInput): RunStepResult {
    const sessionId = this.requireSession(ref);
    if (!this.sql.runInSession.get(runId, sessionId)) throw this.missingRun(ref, runId);
    const messages =
      step.messages && step.messages.length > 0 ? this.insertBatch(sessionId, runId, step.messages) : [];
    if (step.events && step.events.length > 0) this.appendEventsBody(runId, step.events);
    if (step.checkpoint) {
      const { json, waiting } = checkpointColumns(step.checkpoint.value, {
        waiting: step.checkpoint.waiting,
      });
      this.sql.saveCheckpoint.run(json, waiting ? 1 : 0, this.now(), runId, sessionId);
    }
    const result: RunStepResult = { messages };
    if (step.finish) {
      const { status, iterations, usage, error, note } = step.finish;
      const usageJson = usage === undefined ? null : JSON.stringify(usage);
      this.sql.finishRun.run(
        status,
        this.now(),
        iterations,
        usageJson,
        error ?? null,
        note ?? null,
        runId,
        sessionId,
      );
      result.run = this.readRun(this.sql.run.get(runId, sessionId)!);
    }
    if (step.readTodos) result.todos = this.decode.todos(ref, this.sql.todos.get(sessionId));
    return result;
  }

  private insertBatch(sessionId: number, runId: string | undefined, messages: Message[]): StoredMessage[] {
    const now = this.now();
    let seq = this.sql.lastSeq.get(sessionId) ?? 0;
    const stored = messages.map((message) => {
      const c = messageToColumns(message);
      const tokens = this.estimateTokens ? Math.round(this.estimateTokens(message)) : null;
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
      return newStoredMessage({ id: Number(lastInsertRowid), seq }, runId, now, c, tokens, message);
    });
    this.sql.touchSession.run(now, sessionId);
    return stored;
  }

  private compactBody(ref: SessionRef, sessionId: number, input: CompactInput): number {
    const now = this.now();
    this.sql.setSummary.run(input.summary, now, now, sessionId);
    return this.markCompactedIn(ref, sessionId, input.uptoMessageId);
  }

  private appendEventsBody(runId: string, events: RunEventInput[]): void {
    const at = this.now();
    let seq = this.sql.lastEventSeq.get(runId) ?? 0;
    for (const event of events) {
      seq += 1;
      this.sql.insertEvent.run(runId, seq, event.type, JSON.stringify(event), at);
    }
  }

  private recoverBody(ref: SessionRef, sessionId: number): RecoveryResult {
    const now = this.now();
    const running = this.sql.runningRuns.all(sessionId);
    for (const run of running) this.sql.interruptRun.run(now, INTERRUPTED_RUN_NOTE, run.id);
    const runs = running.map((row) => this.readRun(this.sql.run.get(row.id, sessionId)!));

    // Defence in depth: transactions make this impossible for new data, but older files may need it.
    const tail = this.decodeMessages(ref, this.sql.historyTail.all(sessionId, sessionId));
    const plan = unansweredResults(ref, tail, this.logger);
    if (!plan) return { runs, syntheticResults: [] };
    return { runs, syntheticResults: this.insertBatch(sessionId, plan.runId, plan.results) };
  }

  // --- helpers ---

  /** Runs `fn` now (SQLite is synchronous) and reports failures as rejected DimsumErrors. */
  private guard<T>(action: string, fn: () => T): Promise<T> {
    try {
      joinGroupCommit(this.db);
      return Promise.resolve(fn());
    } catch (err) {
      return Promise.reject(storeError(err, this.file, action));
    }
  }

  private findSession(ref: SessionRef): number | undefined {
    return this.sql.sessionId.get(checkRef(ref).userId, ref.sessionId);
  }

  private requireSession(ref: SessionRef): number {
    const id = this.findSession(ref);
    if (id === undefined) throw missingSessionError(ref);
    return id;
  }

  private markCompactedIn(ref: SessionRef, sessionId: number, uptoMessageId: number): number {
    if (this.sql.roleAfter.get(sessionId, uptoMessageId) === "tool")
      throw splitToolResultError(ref, uptoMessageId);
    return this.sql.markCompacted.run(sessionId, uptoMessageId).changes;
  }

  private missingRun(ref: SessionRef, runId: string) {
    return missingRunError(ref, runId);
  }

  private decodeMessages(ref: SessionRef, rows: MessageRow[]): StoredMessage[] {
    return this.decode.messages(ref, rows);
  }

  private readRun(row: RunRow): RunRecord {
    return this.decode.run(row);
  }
}
