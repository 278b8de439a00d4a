/** "Approve always" answers: tools an agent may run in a chat without asking again. */
import type { Database, Statement } from "better-sqlite3";
import type { ApprovalGrant, ApprovalGrantRepository } from "../repositories.js";
import { type GrantRow, toGrant } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The team_approval_grants table; a chat's grants go with it (foreign key). */
export class SqliteGrantRepo implements ApprovalGrantRepository {
  readonly #db: Database;
  readonly #sql: {
    list: Statement<[string], GrantRow>;
    has: Statement<[string, string, string], number>;
    add: Statement<[string, string, string, string, number]>;
    delete: Statement<[string, string, string]>;
  };

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      list: db.prepare(
        "SELECT * FROM team_approval_grants WHERE channel_id = ? ORDER BY granted_at, agent_id, tool",
      ),
      has: db
        .prepare<[string, string, string], number>(
          "SELECT 1 FROM team_approval_grants WHERE channel_id = ? AND agent_id = ? AND tool = ?",
        )
        .pluck(),
      add: db.prepare(
        `INSERT INTO team_approval_grants (channel_id, agent_id, tool, granted_by, granted_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT DO NOTHING`,
      ),
      delete: db.prepare(
        "DELETE FROM team_approval_grants WHERE channel_id = ? AND agent_id = ? AND tool = ?",
      ),
    };
  }

  /** The chat's grants, oldest first. */
  list(channelId: string): Promise<ApprovalGrant[]> {
    return guard(this.#db, "read approval grants from", () => this.#sql.list.all(channelId).map(toGrant));
  }

  has(channelId: string, agentId: string, tool: string): Promise<boolean> {
    return guard(
      this.#db,
      "read approval grants from",
      () => this.#sql.has.get(channelId, agentId, tool) !== undefined,
    );
  }

  /** Adds the grant (nothing when it exists). */
  add(grant: ApprovalGrant): Promise<void> {
    return guard(this.#db, "save an approval grant in", () => {
      this.#sql.add.run(grant.channelId, grant.agentId, grant.tool, grant.grantedBy, grant.grantedAt);
    });
  }

  /** Revokes it; false when there was none. */
  delete(channelId: string, agentId: string, tool: string): Promise<boolean> {
    return guard(
      this.#db,
      "delete an approval grant from",
      () => this.#sql.delete.run(channelId, agentId, tool).changes > 0,
    );
  }
}
