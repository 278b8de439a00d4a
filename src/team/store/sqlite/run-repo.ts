/** Team runs: which agent ran for which message, in which session, and how it ended. */
import type { Database, Statement } from "better-sqlite3";
import type { SessionRef } from "../../../store/types.js";
import type { TeamRun } from "../../types.js";
import type { RunRepository, RunUsageFilter, StoredRun } from "../repositories.js";
import { type RunRow, runInsertParams, runUpdateParams, toStoredRun } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The team run table. */
export class SqliteRunRepo implements RunRepository {
  readonly #db: Database;
  readonly #sql: {
    insert: Statement<unknown[]>;
    update: Statement<unknown[]>;
    get: Statement<[string], RunRow>;
    open: Statement<[], RunRow>;
    waiting: Statement<[], RunRow>;
    waitingIn: Statement<[string, string], RunRow>;
    claimWaiting: Statement<[number, string]>;
    deleteChannel: Statement<[string]>;
    usage: Statement<[number, string | null, string | null, string | null, string | null], RunRow>;
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
      waiting: db.prepare("SELECT * FROM team_runs WHERE status = 'waiting' ORDER BY started_at, id"),
      waitingIn: db.prepare(
        `SELECT * FROM team_runs WHERE status = 'waiting' AND session_user_id = ? AND session_id = ?
         ORDER BY started_at, id`,
      ),
      claimWaiting: db.prepare(
        "UPDATE team_runs SET status = 'running', started_at = ? WHERE id = ? AND status = 'waiting'",
      ),
      deleteChannel: db.prepare("DELETE FROM team_runs WHERE channel_id = ?"),
      usage: db.prepare(
        `SELECT * FROM team_runs WHERE started_at >= ? AND usage_json IS NOT NULL
           AND (? IS NULL OR channel_id = ?) AND (? IS NULL OR requested_by = ?)
         ORDER BY started_at, id`,
      ),
    };
  }

  insert(stored: StoredRun): Promise<void> {
    return guard(this.#db, "save a run in", () => {
      this.#sql.insert.run(...runInsertParams(stored));
    });
  }

  /** Saves status, error, usage and times. */
  update(run: TeamRun): Promise<void> {
    return guard(this.#db, "save a run in", () => {
      this.#sql.update.run(...runUpdateParams(run));
    });
  }

  get(id: string): Promise<StoredRun | undefined> {
    return guard(this.#db, "read a run from", () => {
      const row = this.#sql.get.get(id);
      return row ? toStoredRun(row) : undefined;
    });
  }

  /** Runs still queued or running: after a restart, those whose process died. */
  listOpen(): Promise<StoredRun[]> {
    return guard(this.#db, "read runs from", () => this.#sql.open.all().map(toStoredRun));
  }

  /** Runs waiting for approvals, oldest first (optionally only those of one agent session). */
  listWaiting(ref?: SessionRef): Promise<StoredRun[]> {
    return guard(this.#db, "read runs from", () =>
      (ref ? this.#sql.waitingIn.all(ref.userId, ref.sessionId) : this.#sql.waiting.all()).map(toStoredRun),
    );
  }

  /** Moves a waiting run to `running`; true for the one caller that moved it. */
  claimWaiting(runId: string, startedAt: number): Promise<boolean> {
    return guard(this.#db, "save a run in", () => this.#sql.claimWaiting.run(startedAt, runId).changes > 0);
  }

  listUsage(filter: RunUsageFilter): Promise<StoredRun[]> {
    return guard(this.#db, "read runs from", () =>
      this.#sql.usage
        .all(
          filter.since,
          filter.channelId ?? null,
          filter.channelId ?? null,
          filter.requestedBy ?? null,
          filter.requestedBy ?? null,
        )
        .map(toStoredRun),
    );
  }

  deleteByChannel(channelId: string): Promise<void> {
    return guard(this.#db, "delete runs from", () => {
      this.#sql.deleteChannel.run(channelId);
    });
  }
}
