/** MCP App tool calls waiting for approval, in SQLite (taken once by whichever request answers). */
import type { Database, Statement } from "better-sqlite3";
import type { AppCallOwner, PendingAppCall, PendingAppCallRepository } from "../repositories.js";
import { type AppCallRow, toAppCall } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The team_app_calls table; a chat's waiting calls go with it (foreign key). */
export class SqliteAppCallRepo implements PendingAppCallRepository {
  readonly #db: Database;
  readonly #sql: {
    expire: Statement<[number]>;
    put: Statement<[string, string, string, string, string, string, string, string, number]>;
    take: Statement<[string, string, string, string, string], AppCallRow>;
  };

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      expire: db.prepare("DELETE FROM team_app_calls WHERE expires_at <= ?"),
      put: db.prepare(
        `INSERT INTO team_app_calls (id, actor, channel_id, run_id, call_id, tool, name, args, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      take: db.prepare(
        `DELETE FROM team_app_calls
         WHERE id = ? AND actor = ? AND channel_id = ? AND run_id = ? AND call_id = ? RETURNING *`,
      ),
    };
  }

  put(id: string, call: PendingAppCall, now: number): Promise<void> {
    return guard(this.#db, "save an app's call waiting for approval in", () => {
      this.#sql.expire.run(now);
      this.#sql.put.run(
        id,
        call.actor,
        call.channelId,
        call.runId,
        call.callId,
        call.tool,
        call.name,
        JSON.stringify(call.args),
        call.expiresAt,
      );
    });
  }

  take(id: string, owner: AppCallOwner, now: number): Promise<PendingAppCall | undefined> {
    return guard(this.#db, "read an app's call waiting for approval from", () => {
      const row = this.#sql.take.get(id, owner.actor, owner.channelId, owner.runId, owner.callId);
      return row && Number(row.expires_at) > now ? toAppCall(row) : undefined;
    });
  }
}
