/**
 * Run leases in PostgreSQL (several instances on one database; SQLite has one process and none): who
 * runs a run, and a fencing token that refuses the writes of a superseded owner.
 */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { ChannelMessage, TeamRun } from "../../types.js";
import { INSERT_MESSAGE_IF_CURRENT, insertMessageParams } from "../message-repo.js";
import type { NewMessage, RunLeaseRepository, StoredRun } from "../repositories.js";
import { type RunRow, runInsertParams, runUpdateParams, textParts, toStoredRun } from "../rows.js";
import { INSERT_RUN } from "../run-repo.js";

const RUN_VALUES = "$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13";

export class PgRunLeaseRepo implements RunLeaseRepository {
  constructor(private readonly db: PgDatabase) {}

  async insertLeased(stored: StoredRun, owner: string, until: number): Promise<number> {
    const row = await this.db.one<{ fence: number }>(
      `${INSERT_RUN}, lease_owner, lease_until, fence) VALUES (${RUN_VALUES}, $14, $15, 1) RETURNING fence`,
      [...runInsertParams(stored), owner, until],
    );
    return row?.fence ?? 0;
  }

  async acquire(runId: string, owner: string, until: number): Promise<number> {
    const row = await this.db.one<{ fence: number }>(
      "UPDATE team_runs SET lease_owner = $2, lease_until = $3, fence = fence + 1 WHERE id = $1 RETURNING fence",
      [runId, owner, until],
    );
    return row?.fence ?? 0;
  }

  async renew(owner: string, runIds: readonly string[], until: number): Promise<string[]> {
    if (runIds.length === 0) return [];
    const rows = await this.db.many<{ id: string }>(
      `UPDATE team_runs SET lease_until = $3 WHERE lease_owner = $1 AND id = ANY($2::text[])
         AND status IN ('queued', 'running') RETURNING id`,
      [owner, [...runIds], until],
    );
    return rows.map((r) => r.id);
  }

  async ownersIn(channelId: string): Promise<string[]> {
    const rows = await this.db.many<{ owner: string }>(
      `SELECT DISTINCT lease_owner AS owner FROM team_runs
       WHERE channel_id = $1 AND status IN ('queued', 'running') AND lease_owner IS NOT NULL`,
      [channelId],
    );
    return rows.map((r) => r.owner);
  }

  async isCurrent(runId: string, fence: number): Promise<boolean> {
    const row = await this.db.one(
      "SELECT 1 FROM team_runs WHERE id = $1 AND fence = $2 AND status IN ('queued', 'running')",
      [runId, fence],
    );
    return row !== undefined;
  }

  async insertMessageIfCurrent(
    runId: string,
    fence: number,
    message: NewMessage,
  ): Promise<ChannelMessage | undefined> {
    const parts = message.parts ?? textParts(message.text);
    const row = await this.db.one<{ id: number }>(INSERT_MESSAGE_IF_CURRENT, [
      ...insertMessageParams(message, parts, "postgres"),
      runId,
      fence,
    ]);
    return row ? { ...message, parts, id: row.id } : undefined;
  }

  async updateFenced(run: TeamRun, fence: number): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE team_runs SET status = $1, error = $2, usage_json = $3, started_at = $4, ended_at = $5
       WHERE id = $6 AND fence = $7`,
      [...runUpdateParams(run), fence],
    );
    return changed > 0;
  }

  async takeOver(
    owner: string,
    now: number,
    until: number,
  ): Promise<Array<{ stored: StoredRun; fence: number }>> {
    const rows = await this.db.many<RunRow & { fence: number }>(
      `UPDATE team_runs SET lease_owner = $1, lease_until = $3, fence = fence + 1
       WHERE status IN ('queued', 'running') AND lease_until < $2 RETURNING *`,
      [owner, now, until],
    );
    return rows.map((row) => ({ stored: toStoredRun(row), fence: Number(row.fence) }));
  }

  async expire(now: number, reason: string): Promise<StoredRun[]> {
    const rows = await this.db.many<RunRow>(
      `UPDATE team_runs SET status = 'error', error = $2, ended_at = $1, fence = fence + 1, lease_owner = NULL
       WHERE status IN ('queued', 'running') AND lease_until < $1 RETURNING *`,
      [now, reason],
    );
    return rows.map(toStoredRun);
  }
}
