/** Team runs: which agent ran for which message, in which session, and how it ended. */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { SessionRef } from "../../store/types.js";
import type { TeamRun } from "../types.js";
import type { RunRepository, RunUsageFilter, StoredRun } from "./repositories.js";
import { type RunRow, runInsertParams, runUpdateParams, toStoredRun } from "./rows.js";

/** The columns `runInsertParams` fills, for the inserts of both databases. */
export const INSERT_RUN = `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id,
  step_index, depth, parent_run_id, requested_by, session_user_id, session_id, started_at`;

const SQL = {
  insert: sql(`${INSERT_RUN}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
  update: sql(
    "UPDATE team_runs SET status = ?, error = ?, usage_json = ?, started_at = ?, ended_at = ? WHERE id = ?",
  ),
  get: sql("SELECT * FROM team_runs WHERE id = ?"),
  open: sql("SELECT * FROM team_runs WHERE status IN ('queued', 'running') ORDER BY started_at, id"),
  waiting: sql("SELECT * FROM team_runs WHERE status = 'waiting' ORDER BY started_at, id"),
  waitingIn: sql(
    `SELECT * FROM team_runs WHERE status = 'waiting' AND session_user_id = ? AND session_id = ?
     ORDER BY started_at, id`,
  ),
  claimWaiting: sql(
    "UPDATE team_runs SET status = 'running', started_at = ? WHERE id = ? AND status = 'waiting'",
  ),
  deleteChannel: sql("DELETE FROM team_runs WHERE channel_id = ?"),
  usage: sql(
    `SELECT * FROM team_runs WHERE started_at >= $1 AND usage_json IS NOT NULL
       AND (CAST($2 AS TEXT) IS NULL OR channel_id = $2) AND (CAST($3 AS TEXT) IS NULL OR requested_by = $3)
     ORDER BY started_at, id`,
  ),
} as const;

const SAVE = "save a run in";
const READ = "read runs from";

/** The team_runs table. */
export class RunRepo implements RunRepository {
  constructor(private readonly db: SqlDatabase) {}

  async insert(stored: StoredRun): Promise<void> {
    await this.db.run(SAVE, SQL.insert, runInsertParams(stored));
  }

  /** Saves status, error, usage and times. */
  async update(run: TeamRun): Promise<void> {
    await this.db.run(SAVE, SQL.update, runUpdateParams(run));
  }

  async get(id: string): Promise<StoredRun | undefined> {
    const row = await this.db.one<RunRow>("read a run from", SQL.get, [id]);
    return row ? toStoredRun(row) : undefined;
  }

  /** Runs still queued or running: after a restart, those whose process died. */
  async listOpen(): Promise<StoredRun[]> {
    return (await this.db.many<RunRow>(READ, SQL.open)).map(toStoredRun);
  }

  /** Runs waiting for approvals, oldest first (optionally only those of one agent session). */
  async listWaiting(ref?: SessionRef): Promise<StoredRun[]> {
    const rows = ref
      ? await this.db.many<RunRow>(READ, SQL.waitingIn, [ref.userId, ref.sessionId])
      : await this.db.many<RunRow>(READ, SQL.waiting);
    return rows.map(toStoredRun);
  }

  /** Moves a waiting run to `running`; true for the one caller that moved it. */
  async claimWaiting(runId: string, startedAt: number): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.claimWaiting, [startedAt, runId])) > 0;
  }

  async listUsage(filter: RunUsageFilter): Promise<StoredRun[]> {
    const rows = await this.db.many<RunRow>(READ, SQL.usage, [
      filter.since,
      filter.channelId ?? null,
      filter.requestedBy ?? null,
    ]);
    return rows.map(toStoredRun);
  }

  async deleteByChannel(channelId: string): Promise<void> {
    await this.db.run("delete runs from", SQL.deleteChannel, [channelId]);
  }
}
