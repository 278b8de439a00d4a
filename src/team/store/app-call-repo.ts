/** MCP App tool calls waiting for approval: taken once, by whichever request (or instance) answers. */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { AppCallOwner, PendingAppCall, PendingAppCallRepository } from "./repositories.js";
import { type AppCallRow, toAppCall } from "./rows.js";

const SQL = {
  expire: sql("DELETE FROM team_app_calls WHERE expires_at <= ?"),
  put: sql(
    `INSERT INTO team_app_calls (id, actor, channel_id, run_id, call_id, tool, name, args, expires_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ),
  take: sql(
    `DELETE FROM team_app_calls
     WHERE id = ? AND actor = ? AND channel_id = ? AND run_id = ? AND call_id = ? RETURNING *`,
  ),
} as const;

const SAVE = "save an app's call waiting for approval in";

/** The team_app_calls table; a chat's waiting calls go with it (foreign key). */
export class AppCallRepo implements PendingAppCallRepository {
  constructor(private readonly db: SqlDatabase) {}

  async put(id: string, call: PendingAppCall, now: number): Promise<void> {
    await this.db.run(SAVE, SQL.expire, [now]);
    await this.db.run(SAVE, SQL.put, [
      id,
      call.actor,
      call.channelId,
      call.runId,
      call.callId,
      call.tool,
      call.name,
      JSON.stringify(call.args),
      call.expiresAt,
    ]);
  }

  async take(id: string, owner: AppCallOwner, now: number): Promise<PendingAppCall | undefined> {
    const row = await this.db.one<AppCallRow>("read an app's call waiting for approval from", SQL.take, [
      id,
      owner.actor,
      owner.channelId,
      owner.runId,
      owner.callId,
    ]);
    return row && Number(row.expires_at) > now ? toAppCall(row) : undefined;
  }
}
