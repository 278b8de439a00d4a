/** Maps the store's SQL rows to the records of types.ts. */
import { DimsumError } from "../errors.js";
import type { Message, Usage } from "../llm/types.js";
import type { MessageRow } from "./message-rows.js";
import type { RunRow, SessionRow } from "./sqlite-statements.js";
import type { RunRecord, RunStatus, SessionRecord, SessionRef, StoredMessage } from "./types.js";

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
  if (row.title !== null) record.title = row.title;
  if (row.summary !== null) record.summary = row.summary;
  if (row.summary_updated_at !== null) record.summaryUpdatedAt = row.summary_updated_at;
  return record;
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
  if (row.run_id !== null) stored.runId = row.run_id;
  if (row.tokens_estimate !== null) stored.tokensEstimate = row.tokens_estimate;
  return stored;
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
  if (row.prompt !== null) run.prompt = row.prompt;
  if (row.ended_at !== null) run.endedAt = row.ended_at;
  if (row.error !== null) run.error = row.error;
  if (row.note !== null) run.note = row.note;
  if (usage !== undefined) run.usage = usage;
  return run;
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
