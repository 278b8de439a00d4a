/** Team runs in PostgreSQL. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { TeamRun } from "../../types.js";
import type { RunRepository, StoredRun } from "../repositories.js";
import { type RunRow, runInsertParams, runUpdateParams, toStoredRun } from "../rows.js";

export class PgRunRepo implements RunRepository {
  constructor(private readonly db: PgDatabase) {}

  async insert(stored: StoredRun): Promise<void> {
    await this.db.run(
      `INSERT INTO team_runs (id, channel_id, agent_id, trigger_message_id, status, flow_id, step_index, depth,
         parent_run_id, requested_by, session_user_id, session_id, started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
      runInsertParams(stored),
    );
  }

  async update(run: TeamRun): Promise<void> {
    await this.db.run(
      "UPDATE team_runs SET status = $1, error = $2, usage_json = $3, started_at = $4, ended_at = $5 WHERE id = $6",
      runUpdateParams(run),
    );
  }

  async get(id: string): Promise<StoredRun | undefined> {
    const row = await this.db.one<RunRow>("SELECT * FROM team_runs WHERE id = $1", [id]);
    return row ? toStoredRun(row) : undefined;
  }

  async listOpen(): Promise<StoredRun[]> {
    const rows = await this.db.many<RunRow>(
      "SELECT * FROM team_runs WHERE status IN ('queued', 'running') ORDER BY started_at, id",
    );
    return rows.map(toStoredRun);
  }

  async deleteByChannel(channelId: string): Promise<void> {
    await this.db.run("DELETE FROM team_runs WHERE channel_id = $1", [channelId]);
  }
}
