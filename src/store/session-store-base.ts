/**
 * The part of a SessionStore that is the same on every database, written once: checking refs and
 * batches (a tool call is never stored apart from its results), limits, the rule that a compaction
 * never cuts a tool result from its call, the columns of new messages, checkpoints and finished runs,
 * and the decoding of stored rows (oldest first). A database's store extends this with its
 * statements only (sqlite-session-store.ts, postgres/pg-session-store.ts).
 */
import { DimsumError } from "../errors.js";
import type { Message } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";
import { type MessageRow, messageToColumns } from "./message-rows.js";
import {
  type CheckpointRow,
  checkpointColumns,
  checkRef,
  checkToolPairs,
  defaultStoreLogger,
  type FinishColumns,
  finishColumns,
  type NewMessage,
  newStoredMessage,
  RowDecoder,
  type RunEventRow,
  type SessionStoreOptions,
  type StepCheckpoint,
  splitToolResultError,
  unansweredResults,
} from "./session-records.js";
import { describeToolPairIssues } from "./tool-pairs.js";
import type * as T from "./types.js";

/** A value now (SQLite) or later (PostgreSQL). */
export type Awaitable<V> = V | Promise<V>;

/** Applies `f` to a value at once, or when its promise settles: SQLite's values pay no microtask. */
export function after<V, U>(value: Awaitable<V>, f: (value: V) => U): Awaitable<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/** A run step with its parts checked and turned into columns. */
export interface StepColumns {
  messages: NewMessage[];
  events: T.RunEventInput[];
  checkpoint: StepCheckpoint | undefined;
  finish: FinishColumns | undefined;
  readTodos: boolean;
}

/** A limit as given (`undefined`: none), as a whole number of rows. */
export function rowLimit(limit: number | undefined): number | undefined {
  return limit === undefined ? undefined : Math.max(0, Math.floor(limit));
}

/**
 * The compaction rule: refuses a cut after `uptoMessageId` when the next message (`nextRole`) is a tool
 * result, which would lose its call.
 */
export function checkCompactionCut(
  ref: T.SessionRef,
  uptoMessageId: number,
  nextRole: string | undefined,
): void {
  if (nextRole === "tool") throw splitToolResultError(ref, uptoMessageId);
}

export abstract class SessionStoreBase implements T.SessionStore {
  protected readonly now: () => number;
  protected readonly logger: T.StoreLogger;
  protected readonly decode: RowDecoder;
  private readonly estimateTokens: ((message: Message) => number) | undefined;

  /** `where` names the database in reports of unreadable rows (a file, or a label). */
  constructor(where: string, options: SessionStoreOptions) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger ?? defaultStoreLogger;
    this.decode = new RowDecoder(this.logger, where);
    this.estimateTokens = options.estimateTokens;
  }

  // --- what a database does: its statements (the ref is checked, batches are validated) ---

  /** Runs `body` as this database runs a call; a failure becomes a rejected, actionable error. */
  protected abstract call<V>(action: string, body: () => Awaitable<V>): Promise<V>;
  protected abstract open(ref: T.SessionRef, title: string | undefined): Awaitable<T.SessionRecord>;
  protected abstract session(ref: T.SessionRef): Awaitable<T.SessionRecord | undefined>;
  protected abstract sessions(userId: string): Awaitable<T.SessionRecord[]>;
  protected abstract append(
    ref: T.SessionRef,
    runId: string | undefined,
    batch: NewMessage[],
  ): Awaitable<T.StoredMessage[]>;
  /** The session's messages, newest first, at most `limit`. */
  protected abstract newestMessages(
    ref: T.SessionRef,
    includeCompacted: boolean,
    limit: number | undefined,
  ): Awaitable<MessageRow[]>;
  protected abstract markCompactedRows(ref: T.SessionRef, uptoMessageId: number): Awaitable<number>;
  protected abstract writeSummary(ref: T.SessionRef, summary: string | undefined): Awaitable<void>;
  protected abstract summary(ref: T.SessionRef): Awaitable<string | undefined>;
  protected abstract compactRows(ref: T.SessionRef, input: T.CompactInput): Awaitable<number>;
  protected abstract insertRun(ref: T.SessionRef, input: T.StartRunInput): Awaitable<T.RunRecord>;
  protected abstract endRun(ref: T.SessionRef, runId: string, finish: FinishColumns): Awaitable<T.RunRecord>;
  protected abstract run(ref: T.SessionRef, runId: string): Awaitable<T.RunRecord | undefined>;
  protected abstract runOfUser(userId: string, runId: string): Awaitable<T.RunRecord | undefined>;
  protected abstract runs(ref: T.SessionRef, limit: number | undefined): Awaitable<T.RunRecord[]>;
  protected abstract insertEvents(
    ref: T.SessionRef,
    runId: string,
    events: T.RunEventInput[],
  ): Awaitable<void>;
  /** The run's events in order; none when the run is not in the session. */
  protected abstract eventRows(ref: T.SessionRef, runId: string): Awaitable<RunEventRow[]>;
  protected abstract recover(ref: T.SessionRef): Awaitable<T.RecoveryResult>;
  protected abstract writeCheckpoint(
    ref: T.SessionRef,
    runId: string,
    checkpoint: StepCheckpoint,
  ): Awaitable<void>;
  protected abstract checkpointRow(ref: T.SessionRef, runId: string): Awaitable<CheckpointRow | undefined>;
  protected abstract todosJson(ref: T.SessionRef): Awaitable<string | undefined>;
  protected abstract writeTodos(ref: T.SessionRef, json: string): Awaitable<void>;
  protected abstract begin(
    ref: T.SessionRef,
    input: T.BeginTurnInput,
    first: NewMessage,
  ): Awaitable<T.BeginTurnResult>;
  protected abstract step(ref: T.SessionRef, runId: string, step: StepColumns): Awaitable<T.RunStepResult>;

  // --- the SessionStore: checks, then the database ---

  openSession(ref: T.SessionRef, options: { title?: string } = {}): Promise<T.SessionRecord> {
    return this.call("open a session in", () => this.open(checkRef(ref), options.title));
  }

  getSession(ref: T.SessionRef): Promise<T.SessionRecord | undefined> {
    return this.call("read", () => this.session(checkRef(ref)));
  }

  listSessions(userId: string): Promise<T.SessionRecord[]> {
    return this.call("read", () => this.sessions(userId));
  }

  appendMessages(
    ref: T.SessionRef,
    runId: string | undefined,
    messages: Message[],
  ): Promise<T.StoredMessage[]> {
    return this.call("write to", () => {
      checkToolPairs(ref, messages, describeToolPairIssues);
      return this.append(checkRef(ref), runId, this.toNew(messages));
    });
  }

  loadMessages(ref: T.SessionRef, options: T.LoadMessagesOptions = {}): Promise<T.StoredMessage[]> {
    return this.call("read", () =>
      after(
        this.newestMessages(checkRef(ref), options.includeCompacted === true, rowLimit(options.limit)),
        (rows) => this.decode.messages(ref, rows.reverse()),
      ),
    );
  }

  markCompacted(ref: T.SessionRef, uptoMessageId: number): Promise<number> {
    return this.call("write to", () => this.markCompactedRows(checkRef(ref), uptoMessageId));
  }

  setSummary(ref: T.SessionRef, summary: string | undefined): Promise<void> {
    return this.call("write to", () => this.writeSummary(checkRef(ref), summary));
  }

  getSummary(ref: T.SessionRef): Promise<string | undefined> {
    return this.call("read", () => this.summary(checkRef(ref)));
  }

  compact(ref: T.SessionRef, input: T.CompactInput): Promise<number> {
    return this.call("write to", () => this.compactRows(checkRef(ref), input));
  }

  startRun(ref: T.SessionRef, input: T.StartRunInput): Promise<T.RunRecord> {
    return this.call("write to", () => this.insertRun(checkRef(ref), input));
  }

  finishRun(ref: T.SessionRef, runId: string, input: T.FinishRunInput): Promise<T.RunRecord> {
    return this.call("write to", () => this.endRun(checkRef(ref), runId, finishColumns(input)));
  }

  getRun(ref: T.SessionRef, runId: string): Promise<T.RunRecord | undefined> {
    return this.call("read", () => this.run(checkRef(ref), runId));
  }

  findRun(userId: string, runId: string): Promise<T.RunRecord | undefined> {
    return this.call("read", () => this.runOfUser(userId, runId));
  }

  listRuns(ref: T.SessionRef, options: { limit?: number } = {}): Promise<T.RunRecord[]> {
    return this.call("read", () => this.runs(checkRef(ref), rowLimit(options.limit)));
  }

  appendRunEvents(ref: T.SessionRef, runId: string, events: T.RunEventInput[]): Promise<void> {
    return this.call("write to", () => this.insertEvents(checkRef(ref), runId, events));
  }

  getRunEvents(ref: T.SessionRef, runId: string): Promise<T.StoredRunEvent[]> {
    return this.call("read", () =>
      after(this.eventRows(checkRef(ref), runId), (rows) => this.decode.events(runId, rows)),
    );
  }

  recoverInterruptedRuns(ref: T.SessionRef): Promise<T.RecoveryResult> {
    return this.call("write to", () => this.recover(checkRef(ref)));
  }

  saveCheckpoint(
    ref: T.SessionRef,
    runId: string,
    checkpoint: unknown,
    options: { waiting?: boolean } = {},
  ): Promise<void> {
    return this.call("write to", () =>
      this.writeCheckpoint(checkRef(ref), runId, checkpointColumns(checkpoint, options)),
    );
  }

  loadCheckpoint(ref: T.SessionRef, runId: string): Promise<T.StoredCheckpoint | undefined> {
    return this.call("read", () =>
      after(this.checkpointRow(checkRef(ref), runId), (row) => this.decode.checkpoint(runId, row)),
    );
  }

  getTodos(ref: T.SessionRef): Promise<TodoItem[]> {
    return this.call("read", () =>
      after(this.todosJson(checkRef(ref)), (json) => this.decode.todos(ref, json)),
    );
  }

  saveTodos(ref: T.SessionRef, items: TodoItem[]): Promise<void> {
    return this.call("write to", () => this.writeTodos(checkRef(ref), JSON.stringify(items)));
  }

  beginTurn(ref: T.SessionRef, input: T.BeginTurnInput): Promise<T.BeginTurnResult> {
    return this.call("write to", () => {
      checkToolPairs(ref, [input.message], describeToolPairIssues);
      const [first] = this.toNew([input.message]) as [NewMessage];
      return this.begin(checkRef(ref), input, first);
    });
  }

  saveRunStep(ref: T.SessionRef, runId: string, step: T.RunStepInput): Promise<T.RunStepResult> {
    return this.call("write to", () => {
      const messages = step.messages ?? [];
      if (messages.length > 0) checkToolPairs(ref, messages, describeToolPairIssues);
      checkRef(ref);
      if (step.finish && step.checkpoint) {
        throw new DimsumError(
          "internal",
          "A run step either saves a checkpoint or finishes the run, not both.",
        );
      }
      return this.step(ref, runId, {
        messages: this.toNew(messages),
        events: step.events ?? [],
        checkpoint: step.checkpoint
          ? checkpointColumns(step.checkpoint.value, { waiting: step.checkpoint.waiting })
          : undefined,
        finish: step.finish ? finishColumns(step.finish) : undefined,
        readTodos: step.readTodos === true,
      });
    });
  }

  // --- shared by the databases' statements ---

  /** Messages as columns to store, with their token estimates. */
  protected toNew(messages: readonly Message[]): NewMessage[] {
    return messages.map((message) => ({
      message,
      c: messageToColumns(message),
      tokens: this.estimateTokens ? Math.round(this.estimateTokens(message)) : null,
    }));
  }

  /**
   * Recovery's rule, the same on every database: the session's tail (its last assistant message and
   * what follows, oldest first) gets error results for the tool calls it left unanswered, appended by
   * `insert` in the recovery's transaction.
   */
  protected unansweredResults(
    ref: T.SessionRef,
    tail: readonly MessageRow[],
    insert: (runId: string | undefined, batch: NewMessage[]) => Awaitable<T.StoredMessage[]>,
  ): Awaitable<T.StoredMessage[]> {
    const plan = unansweredResults(ref, this.decode.messages(ref, tail), this.logger);
    return plan ? insert(plan.runId, this.toNew(plan.results)) : [];
  }

  /** A message just stored under `key`, as the store returns it. */
  protected stored(
    key: { id: number; seq: number },
    runId: string | undefined,
    createdAt: number,
    { c, tokens, message }: NewMessage,
  ): T.StoredMessage {
    return newStoredMessage(key, runId, createdAt, c, tokens, message);
  }
}
