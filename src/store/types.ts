/**
 * Repository interfaces for conversation state. The runtime depends on these, never on SQLite, so
 * another database (PostgreSQL for multi-instance use) can implement them later. Every method is
 * async for that reason, and every method takes the full SessionRef: ids alone never grant access.
 */
import type { Message, Usage } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";

/** A session is owned by one user; `sessionId` is that user's own name for it (e.g. `window1`). */
export interface SessionRef {
  userId: string;
  sessionId: string;
}

export interface SessionRecord {
  userId: string;
  sessionId: string;
  title?: string;
  /** Running summary of the compacted part of the conversation. */
  summary?: string;
  /** Epoch milliseconds, like every timestamp in the store. */
  summaryUpdatedAt?: number;
  createdAt: number;
  updatedAt: number;
  /** Stored messages, compacted ones included. */
  messageCount: number;
}

export interface StoredMessage {
  id: number;
  /** 1-based position of the message within its session. */
  seq: number;
  runId?: string;
  createdAt: number;
  /** True once the message was folded into the summary and left the live context. */
  compacted: boolean;
  tokensEstimate?: number;
  message: Message;
}

export interface LoadMessagesOptions {
  /** Include messages already folded into the summary (default false). */
  includeCompacted?: boolean;
  /** Only the newest `limit` messages, oldest first; for display, as the cut may fall inside a tool round. */
  limit?: number;
}

export type RunStatus = "running" | "done" | "error" | "cancelled" | "interrupted";

export interface RunRecord {
  id: string;
  userId: string;
  sessionId: string;
  status: RunStatus;
  model: string;
  prompt?: string;
  startedAt: number;
  endedAt?: number;
  iterations: number;
  usage?: Usage;
  error?: string;
  /** Why the run ended the way it did when that is not obvious, e.g. how it was interrupted. */
  note?: string;
}

export interface StartRunInput {
  runId: string;
  /** `provider:model` as the user chose it. */
  model: string;
  prompt?: string;
}

export interface FinishRunInput {
  status: Exclude<RunStatus, "running">;
  iterations: number;
  usage?: Usage;
  error?: string;
  note?: string;
}

/** Anything with a `type` can be traced; agent events are the usual payload. */
export interface RunEventInput {
  type: string;
}

export interface StoredRunEvent {
  runId: string;
  /** 1-based order within the run. */
  seq: number;
  type: string;
  /** The event object exactly as appended. */
  payload: unknown;
  at: number;
}

export interface StoredCheckpoint {
  checkpoint: unknown;
  /** When the run started waiting for a person (epoch ms); undefined while it runs. */
  waitingSince?: number;
}

export interface RecoveryResult {
  /** Runs found still `running` (their process died), now `interrupted`. */
  runs: RunRecord[];
  /** Error tool results added for tool calls that never got one. */
  syntheticResults: StoredMessage[];
}

export interface CompactInput {
  /** The new summary, which already folds in the previous one. */
  summary: string;
  /** Messages up to and including this id leave the live context. */
  uptoMessageId: number;
}

/** What `SessionStore.beginTurn` writes as a turn starts. */
export interface BeginTurnInput {
  /** Fills an empty title, as `openSession` does. */
  title?: string;
  /** The turn's input, appended after the messages read, with the run's id. */
  message: Message;
  /** The run to start (a duplicate id is refused and nothing is written). */
  run: StartRunInput;
}

/** What a turn reads as it starts: everything `beginTurn` read before its writes, and what they stored. */
export interface BeginTurnResult {
  /** The session, created when new, as it is once the turn began (its message count includes `appended`). */
  session: SessionRecord;
  /** The live messages before `appended`, as `loadMessages(ref)` returns them. */
  messages: StoredMessage[];
  /** The turn's input as stored. */
  appended: StoredMessage;
  run: RunRecord;
  todos: TodoItem[];
}

/**
 * One step of a run, written in one transaction (one statement on PostgreSQL), in this order: the
 * messages, the trace events, then the checkpoint or the run's end. Nothing is written when the
 * session or the run does not exist.
 */
export interface RunStepInput {
  /** A unit of messages: an assistant message with tool calls comes with all its results. */
  messages?: Message[];
  /** Trace events, numbered after the run's existing events. */
  events?: RunEventInput[];
  /** The run's checkpoint after the step, as `saveCheckpoint` stores it (`value: undefined` clears it). */
  checkpoint?: { value: unknown; waiting?: boolean };
  /** Finishes the run as `finishRun` does (which also clears its checkpoint); not with `checkpoint`. */
  finish?: FinishRunInput;
  /** Also read the session's todos once the step is written. */
  readTodos?: boolean;
}

export interface RunStepResult {
  /** `messages` as stored. */
  messages: StoredMessage[];
  /** The finished run, when the step finished it. */
  run?: RunRecord;
  /** The session's todos after the step, when asked for. */
  todos?: TodoItem[];
}

/** Everything one conversation remembers: messages, summary, runs with their traces, todos. */
export interface SessionStore {
  /** Creates the session or returns the existing one; a given title fills an empty one. */
  openSession(ref: SessionRef, options?: { title?: string }): Promise<SessionRecord>;
  getSession(ref: SessionRef): Promise<SessionRecord | undefined>;
  /** This user's sessions, most recently active first. */
  listSessions(userId: string): Promise<SessionRecord[]>;

  /**
   * Appends all messages in one transaction. An assistant message with tool calls must come in the
   * same call as all its tool results, so a crash can never leave a call without its result.
   */
  appendMessages(ref: SessionRef, runId: string | undefined, messages: Message[]): Promise<StoredMessage[]>;
  loadMessages(ref: SessionRef, options?: LoadMessagesOptions): Promise<StoredMessage[]>;
  /** Marks messages up to and including `uptoMessageId` compacted; returns how many changed. */
  markCompacted(ref: SessionRef, uptoMessageId: number): Promise<number>;
  /** Sets (or with `undefined`, clears) the session summary. */
  setSummary(ref: SessionRef, summary: string | undefined): Promise<void>;
  getSummary(ref: SessionRef): Promise<string | undefined>;
  /** Stores the new summary and marks the summarised messages compacted in one transaction. */
  compact(ref: SessionRef, input: CompactInput): Promise<number>;

  startRun(ref: SessionRef, input: StartRunInput): Promise<RunRecord>;
  finishRun(ref: SessionRef, runId: string, input: FinishRunInput): Promise<RunRecord>;
  getRun(ref: SessionRef, runId: string): Promise<RunRecord | undefined>;
  /** Finds a run among all of one user's sessions (for `dimsum trace <runId>`). */
  findRun(userId: string, runId: string): Promise<RunRecord | undefined>;
  /** The session's runs, newest first. */
  listRuns(ref: SessionRef, options?: { limit?: number }): Promise<RunRecord[]>;
  /** Appends trace events in one transaction, numbered after the run's existing events. */
  appendRunEvents(ref: SessionRef, runId: string, events: RunEventInput[]): Promise<void>;
  getRunEvents(ref: SessionRef, runId: string): Promise<StoredRunEvent[]>;
  /**
   * Closes runs left `running` by a dead process and gives unanswered tool calls at the end of the
   * history an error result, so the conversation can continue with any provider. Call it when a
   * process takes up the session, before its first run: it cannot tell a dead run from one another
   * live process is still executing in the same session.
   */
  recoverInterruptedRuns(ref: SessionRef): Promise<RecoveryResult>;

  /**
   * Saves a running run's checkpoint (its own progress between steps, as JSON-safe data; `undefined`
   * clears it). A run saved with `waiting: true` waits for a person: `recoverInterruptedRuns` leaves it
   * alone, as no process is running it.
   */
  saveCheckpoint(
    ref: SessionRef,
    runId: string,
    checkpoint: unknown,
    options?: { waiting?: boolean },
  ): Promise<void>;
  /** The run's last checkpoint, or undefined when none is stored (or the run is not in the session). */
  loadCheckpoint(ref: SessionRef, runId: string): Promise<StoredCheckpoint | undefined>;

  getTodos(ref: SessionRef): Promise<TodoItem[]>;
  saveTodos(ref: SessionRef, items: TodoItem[]): Promise<void>;

  /**
   * Starts a turn in one transaction: `openSession` (with `title`), `loadMessages`, `appendMessages`
   * of the input, `startRun` and `getTodos`, as if called in that order with nothing in between.
   * Optional: a store without it gets those calls one by one (see `runSessionTurn`).
   */
  beginTurn?(ref: SessionRef, input: BeginTurnInput): Promise<BeginTurnResult>;
  /**
   * Writes one step of a running run in one transaction: `appendMessages`, `appendRunEvents`, then
   * `saveCheckpoint` or `finishRun`, all or nothing. Optional, like `beginTurn`.
   */
  saveRunStep?(ref: SessionRef, runId: string, step: RunStepInput): Promise<RunStepResult>;
}

/** Where the store reports rows it had to skip. */
export interface StoreLogger {
  warn(message: string): void;
}
