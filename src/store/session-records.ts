/**
 * The session tables' rows and their mapping to the records of types.ts, shared by the SQLite and
 * PostgreSQL session stores (same columns), with the decoding that skips and reports damaged rows and
 * the plan for recovering a session whose run died mid-turn.
 */
import { DimsumError } from "../errors.js";
import type { Message, ToolResultMessage, Usage } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";
import { type MessageColumns, type MessageRow, rowToMessage } from "./message-rows.js";
import { withPresent } from "./present-fields.js";
import { findToolPairIssues } from "./tool-pairs.js";
import type {
  FinishRunInput,
  RunRecord,
  RunStatus,
  SessionRecord,
  SessionRef,
  StoredCheckpoint,
  StoredMessage,
  StoredRunEvent,
  StoreLogger,
} from "./types.js";

/** The options both session stores take. */
export interface SessionStoreOptions {
  /** Clock in epoch milliseconds (tests pin it). */
  now?: () => number;
  /** Receives a line for every stored row that could not be read and was skipped. */
  logger?: StoreLogger;
  /** Fills `tokens_estimate` for new messages. */
  estimateTokens?: (message: Message) => number;
}

export interface SessionRow {
  id: number;
  user_id: string;
  session_key: string;
  title: string | null;
  summary: string | null;
  summary_updated_at: number | null;
  created_at: number;
  updated_at: number;
  message_count: number;
}

export interface RunRow {
  id: string;
  user_id: string;
  session_key: string;
  status: string;
  model: string;
  prompt: string | null;
  started_at: number;
  ended_at: number | null;
  iterations: number;
  usage_json: string | null;
  error: string | null;
  note: string | null;
}

/** A run's checkpoint columns. */
export interface CheckpointRow {
  checkpoint_json: string | null;
  waiting_since: number | null;
}

/** The checkpoint columns to write: `checkpoint` as JSON (undefined clears it), and whether it waits. */
export function checkpointColumns(checkpoint: unknown, options: { waiting?: boolean } = {}): StepCheckpoint {
  const json = checkpoint === undefined ? undefined : JSON.stringify(checkpoint);
  if (json === undefined) return { json: null, waiting: false };
  return { json, waiting: options.waiting === true };
}

/** A message to store: its columns and token estimate. */
export interface NewMessage {
  readonly message: Message;
  readonly c: MessageColumns;
  readonly tokens: number | null;
}

/** The columns a finished run writes. */
export interface FinishColumns {
  status: string;
  iterations: number;
  usageJson: string | null;
  error: string | null;
  note: string | null;
}

/** A finished run as columns (usage as JSON). */
export function finishColumns(input: FinishRunInput): FinishColumns {
  return {
    status: input.status,
    iterations: input.iterations,
    usageJson: input.usage === undefined ? null : JSON.stringify(input.usage),
    error: input.error ?? null,
    note: input.note ?? null,
  };
}

/** The checkpoint a step saves, as columns. */
export interface StepCheckpoint {
  json: string | null;
  waiting: boolean;
}

export interface RunEventRow {
  run_id: string;
  seq: number;
  type: string;
  payload_json: string;
  at: number;
}

/** The text of the error result given to a tool call whose run died before it returned. */
export const INTERRUPTED_TOOL_RESULT = "interrupted: the run stopped before this tool returned";
export const INTERRUPTED_RUN_NOTE =
  "interrupted: the process stopped before the run finished; closed when the session reopened";

export const defaultStoreLogger: StoreLogger = {
  warn: (message) => process.emitWarning(message, "DimsumStoreWarning"),
};

/** `user:session`, as messages name a session. */
export function label(ref: SessionRef): string {
  return `${ref.userId}:${ref.sessionId}`;
}

/** A sessions row (with its message count) as a SessionRecord. */
export function toSessionRecord(row: SessionRow): SessionRecord {
  const record: SessionRecord = {
    userId: row.user_id,
    sessionId: row.session_key,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    messageCount: row.message_count,
  };
  return withPresent(record, {
    title: row.title,
    summary: row.summary,
    summaryUpdatedAt: row.summary_updated_at,
  });
}

/** A message just appended (not compacted), as the store returns it. */
export function newStoredMessage(
  key: { id: number; seq: number },
  runId: string | undefined,
  createdAt: number,
  c: MessageColumns,
  tokens: number | null,
  message: Message,
): StoredMessage {
  const row: MessageRow = {
    ...key,
    run_id: runId ?? null,
    role: c.role,
    content_json: c.contentJson,
    tool_call_id: c.toolCallId,
    tool_name: c.toolName,
    is_error: c.isError,
    created_at: createdAt,
    tokens_estimate: tokens,
    compacted: 0,
  };
  return toStoredMessage(row, message);
}

/** A messages row plus its decoded message as a StoredMessage. */
export function toStoredMessage(row: MessageRow, message: Message): StoredMessage {
  const stored: StoredMessage = {
    id: row.id,
    seq: row.seq,
    createdAt: row.created_at,
    compacted: row.compacted !== 0,
    message,
  };
  return withPresent(stored, { runId: row.run_id, tokensEstimate: row.tokens_estimate });
}

/** A runs row as a RunRecord; `usage` is parsed by the caller, who reports unreadable JSON. */
export function toRunRecord(row: RunRow, usage: Usage | undefined): RunRecord {
  const run: RunRecord = {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_key,
    status: row.status as RunStatus,
    model: row.model,
    startedAt: row.started_at,
    iterations: row.iterations,
  };
  return withPresent(run, {
    prompt: row.prompt,
    endedAt: row.ended_at,
    error: row.error,
    note: row.note,
    usage,
  });
}

/** Returns the ref after checking both ids are present: an empty id would silently merge sessions. */
export function checkRef(ref: SessionRef): SessionRef {
  if (!ref.userId || !ref.sessionId) {
    throw new DimsumError("config", `A session needs a user id and a session id (got "${label(ref)}").`, {
      hint: "pass both, e.g. --user alice --session window1",
    });
  }
  return ref;
}

/** Decodes rows, skipping (and reporting to the logger) those that cannot be read. */
export class RowDecoder {
  constructor(
    private readonly logger: StoreLogger,
    /** Where the rows come from, for the reports (a file, or a database label). */
    private readonly where: string,
  ) {}

  messages(ref: SessionRef, rows: readonly MessageRow[]): StoredMessage[] {
    const out: StoredMessage[] = [];
    for (const row of rows) {
      try {
        out.push(toStoredMessage(row, rowToMessage(row)));
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        this.logger.warn(
          `Skipped unreadable message ${row.id} of session ${label(ref)} in ${this.where}: ${reason}`,
        );
      }
    }
    return out;
  }

  run(row: RunRow): RunRecord {
    const usage =
      row.usage_json === null ? undefined : this.json(row.usage_json, `the usage of run ${row.id}`);
    return toRunRecord(row, usage?.ok ? (usage.value as Usage) : undefined);
  }

  events(runId: string, rows: readonly RunEventRow[]): StoredRunEvent[] {
    const events: StoredRunEvent[] = [];
    for (const row of rows) {
      const payload = this.json(row.payload_json, `event ${row.seq} of run ${runId}`);
      if (payload.ok)
        events.push({ runId: row.run_id, seq: row.seq, type: row.type, payload: payload.value, at: row.at });
    }
    return events;
  }

  /** A run's stored checkpoint; undefined when it has none (or it cannot be read, which is reported). */
  checkpoint(runId: string, row: CheckpointRow | undefined): StoredCheckpoint | undefined {
    if (!row || row.checkpoint_json === null) return undefined;
    const parsed = this.json(row.checkpoint_json, `the checkpoint of run ${runId}`);
    if (!parsed.ok) return undefined;
    const stored: StoredCheckpoint = { checkpoint: parsed.value };
    if (row.waiting_since !== null) stored.waitingSince = row.waiting_since;
    return stored;
  }

  todos(ref: SessionRef, json: string | undefined): TodoItem[] {
    if (json === undefined) return [];
    const parsed = this.json(json, `the todo list of session ${label(ref)}`);
    return parsed.ok && Array.isArray(parsed.value) ? (parsed.value as TodoItem[]) : [];
  }

  json(json: string, what: string): { ok: true; value: unknown } | { ok: false } {
    try {
      return { ok: true, value: JSON.parse(json) };
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.logger.warn(`Skipped unreadable ${what} in ${this.where}: ${reason}`);
      return { ok: false };
    }
  }
}

/**
 * What recovery appends after the history's tail (the last assistant message and what follows): error
 * results for the tool calls left unanswered, when they can directly follow the call.
 */
export function unansweredResults(
  ref: SessionRef,
  tail: readonly StoredMessage[],
  logger: StoreLogger,
): { runId: string | undefined; results: ToolResultMessage[] } | undefined {
  const { unanswered } = findToolPairIssues(tail.map((s) => s.message));
  const open = unanswered[0];
  const assistant = open && tail[open.index];
  if (!open || !assistant) return undefined;
  if (tail.slice(open.index + 1).some((s) => s.message.role !== "tool")) {
    // Results appended now would not directly follow the call, so they would not help.
    logger.warn(
      `Session ${label(ref)}: message ${assistant.id} has tool calls without results followed by later messages; left as is.`,
    );
    return undefined;
  }
  return {
    runId: assistant.runId,
    results: open.calls.map((call) => ({
      role: "tool",
      toolCallId: call.id,
      toolName: call.name,
      content: INTERRUPTED_TOOL_RESULT,
      isError: true,
    })),
  };
}

/** Refuses a batch that would store a tool call apart from its results. */
export function checkToolPairs(
  ref: SessionRef,
  messages: readonly Message[],
  describe: (m: Message[]) => string | undefined,
): void {
  const problem = describe([...messages]);
  if (problem) {
    throw new DimsumError("internal", `Refusing to store messages for session ${label(ref)}: ${problem}.`, {
      hint: "append an assistant message with tool calls in the same call as all its tool results",
    });
  }
}

export function missingRunError(ref: SessionRef, runId: string): DimsumError {
  return new DimsumError("internal", `Run ${runId} does not exist in session ${label(ref)}.`, {
    hint: "start the run with startRun in the same session first",
  });
}

export function missingSessionError(ref: SessionRef): DimsumError {
  return new DimsumError("internal", `Session ${label(ref)} does not exist.`, {
    hint: "call openSession before writing to a session",
  });
}

export function duplicateRunError(runId: string): DimsumError {
  return new DimsumError("internal", `A run with id ${runId} already exists.`, {
    hint: "give every run a fresh id",
  });
}

export function splitToolResultError(ref: SessionRef, uptoMessageId: number): DimsumError {
  return new DimsumError(
    "internal",
    `Cannot compact session ${label(ref)} up to message ${uptoMessageId}: the next message is a tool result that would lose its call.`,
    { hint: "cut compaction after the last tool result of a turn" },
  );
}
