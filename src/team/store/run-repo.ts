/** Team runs: which agent ran for which message, in which session, and how it ended. */
import type { Database, Statement } from "better-sqlite3";
import type { Usage } from "../../llm/types.js";
import type { SessionRef } from "../../store/types.js";
import type { RunStatus, TeamRun } from "../types.js";
import { guard, parseJson } from "./sql-guard.js";

/** A run with what the facade needs besides the public record. */
export interface StoredRun {
  run: TeamRun;
  /** The agent session the run's turn was stored in (for its trace). */
  ref: SessionRef;
  /** The person whose message or request started it. */
  requestedBy: string;
}

interface RunRow {
  id: string;
  channel_id: string;
  agent_id: string;
  trigger_message_id: number;
  status: RunStatus;
  flow_id: string | null;
  step_index: number | null;
  depth: number;
  parent_run_id: string | null;
  requested_by: string;
  session_user_id: string;
  session_id: string;
  error: string | null;
  usage_json: string | null;
  started_at: number;
  ended_at: number | null;
}

function toStored(row: RunRow): StoredRun {
  const run: TeamRun = {
    id: row.id,
    channelId: row.channel_id,
    agentId: row.agent_id,
    triggerMessageId: row.trigger_message_id,
    status: row.status,
    depth: row.depth,
    startedAt: row.started_at,
  };
  if (row.flow_id !== null) run.flowId = row.flow_id;
  if (row.step_index !== null) run.stepIndex = row.step_index;
  if (row.parent_run_id !== null) run.parentRunId = row.parent_run_id;
  if (row.error !== null) run.error = row.error;
  const usage = parseJson<Usage | undefined>(row.usage_json, undefined);
  if (usage) run.usage = usage;
  if (row.ended_at !== null) run.endedAt = row.ended_at;
  return {
    run,
    ref: { userId: row.session_user_id, sessionId: row.session_id },
    requestedBy: row.requested_by,
  };
}

/** The team run table. */
export class RunRepo {
  readonly #db: Database;
  readonly #sql: {
    insert: Statement<unknown[]>;
    update: Statement<unknown[]>;
    get: Statement<[string], RunRow>;
    open: Statement<[], RunRow>;
    deleteChannel: Statement<[string]>;
  };

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id, step_index, depth,
           parent_run_id, requested_by, session_user_id, session_id, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      update: db.prepare(
        "UPDATE team_runs SET status = ?, error = ?, usage_json = ?, started_at = ?, ended_at = ? WHERE id = ?",
      ),
      get: db.prepare("SELECT * FROM team_runs WHERE id = ?"),
      open: db.prepare("SELECT * FROM team_runs WHERE status IN ('queued', 'running')"),
      deleteChannel: db.prepare("DELETE FROM team_runs WHERE channel_id = ?"),
    };
  }

  insert(stored: StoredRun): Promise<void> {
    const { run, ref } = stored;
    return guard(this.#db, "save a run in", () => {
      this.#sql.insert.run(
        run.id,
        run.channelId,
        run.agentId,
        run.triggerMessageId,
        run.status,
        run.flowId ?? null,
        run.stepIndex ?? null,
        run.depth,
        run.parentRunId ?? null,
        stored.requestedBy,
        ref.userId,
        ref.sessionId,
        run.startedAt,
      );
    });
  }

  /** Saves status, error, usage and times. */
  update(run: TeamRun): Promise<void> {
    return guard(this.#db, "save a run in", () => {
      this.#sql.update.run(
        run.status,
        run.error ?? null,
        run.usage ? JSON.stringify(run.usage) : null,
        run.startedAt,
        run.endedAt ?? null,
        run.id,
      );
    });
  }

  get(id: string): Promise<StoredRun | undefined> {
    return guard(this.#db, "read a run from", () => {
      const row = this.#sql.get.get(id);
      return row ? toStored(row) : undefined;
    });
  }

  /** Runs still queued or running: after a restart, those whose process died. */
  listOpen(): Promise<StoredRun[]> {
    return guard(this.#db, "read runs from", () => this.#sql.open.all().map(toStored));
  }

  deleteByChannel(channelId: string): Promise<void> {
    return guard(this.#db, "delete runs from", () => {
      this.#sql.deleteChannel.run(channelId);
    });
  }
}
