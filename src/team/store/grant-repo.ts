/** "Approve always" answers: tools an agent may run in a chat without asking again. */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { ApprovalGrant, ApprovalGrantRepository } from "./repositories.js";
import { type GrantRow, toGrant } from "./rows.js";

const SQL = {
  list: sql("SELECT * FROM team_approval_grants WHERE channel_id = ? ORDER BY granted_at, agent_id, tool"),
  has: sql("SELECT 1 FROM team_approval_grants WHERE channel_id = ? AND agent_id = ? AND tool = ?"),
  add: sql(
    `INSERT INTO team_approval_grants (channel_id, agent_id, tool, granted_by, granted_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
  ),
  delete: sql("DELETE FROM team_approval_grants WHERE channel_id = ? AND agent_id = ? AND tool = ?"),
} as const;

const READ = "read approval grants from";

/** The team_approval_grants table; a chat's grants go with it (foreign key). */
export class GrantRepo implements ApprovalGrantRepository {
  constructor(private readonly db: SqlDatabase) {}

  /** The chat's grants, oldest first. */
  async list(channelId: string): Promise<ApprovalGrant[]> {
    return (await this.db.many<GrantRow>(READ, SQL.list, [channelId])).map(toGrant);
  }

  async has(channelId: string, agentId: string, tool: string): Promise<boolean> {
    return (await this.db.one(READ, SQL.has, [channelId, agentId, tool])) !== undefined;
  }

  /** Adds the grant (nothing when it exists). */
  async add(grant: ApprovalGrant): Promise<void> {
    await this.db.run("save an approval grant in", SQL.add, [
      grant.channelId,
      grant.agentId,
      grant.tool,
      grant.grantedBy,
      grant.grantedAt,
    ]);
  }

  /** Revokes it; false when there was none. */
  async delete(channelId: string, agentId: string, tool: string): Promise<boolean> {
    return (await this.db.run("delete an approval grant from", SQL.delete, [channelId, agentId, tool])) > 0;
  }
}
