/** MCP App tool calls waiting for approval, in PostgreSQL: any instance may take the answer, once. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { AppCallOwner, PendingAppCall, PendingAppCallRepository } from "../repositories.js";
import { type AppCallRow, toAppCall } from "../rows.js";

export class PgAppCallRepo implements PendingAppCallRepository {
  constructor(private readonly db: PgDatabase) {}

  async put(id: string, call: PendingAppCall, now: number): Promise<void> {
    await this.db.run("DELETE FROM team_app_calls WHERE expires_at <= $1", [now]);
    await this.db.run(
      `INSERT INTO team_app_calls (id, actor, channel_id, run_id, call_id, tool, name, args, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        id,
        call.actor,
        call.channelId,
        call.runId,
        call.callId,
        call.tool,
        call.name,
        JSON.stringify(call.args),
        call.expiresAt,
      ],
    );
  }

  async take(id: string, owner: AppCallOwner, now: number): Promise<PendingAppCall | undefined> {
    const row = await this.db.one<AppCallRow>(
      `DELETE FROM team_app_calls
       WHERE id = $1 AND actor = $2 AND channel_id = $3 AND run_id = $4 AND call_id = $5 RETURNING *`,
      [id, owner.actor, owner.channelId, owner.runId, owner.callId],
    );
    return row && Number(row.expires_at) > now ? toAppCall(row) : undefined;
  }
}
