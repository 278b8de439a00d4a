/** "Approve always" answers in PostgreSQL: tools an agent may run in a chat without asking again. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { ApprovalGrant, ApprovalGrantRepository } from "../repositories.js";
import { type GrantRow, toGrant } from "../rows.js";

export class PgGrantRepo implements ApprovalGrantRepository {
  constructor(private readonly db: PgDatabase) {}

  async list(channelId: string): Promise<ApprovalGrant[]> {
    const rows = await this.db.many<GrantRow>(
      "SELECT * FROM team_approval_grants WHERE channel_id = $1 ORDER BY granted_at, agent_id, tool",
      [channelId],
    );
    return rows.map(toGrant);
  }

  async has(channelId: string, agentId: string, tool: string): Promise<boolean> {
    const row = await this.db.one(
      "SELECT 1 FROM team_approval_grants WHERE channel_id = $1 AND agent_id = $2 AND tool = $3",
      [channelId, agentId, tool],
    );
    return row !== undefined;
  }

  async add(grant: ApprovalGrant): Promise<void> {
    await this.db.run(
      `INSERT INTO team_approval_grants (channel_id, agent_id, tool, granted_by, granted_at)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
      [grant.channelId, grant.agentId, grant.tool, grant.grantedBy, grant.grantedAt],
    );
  }

  async delete(channelId: string, agentId: string, tool: string): Promise<boolean> {
    const changed = await this.db.run(
      "DELETE FROM team_approval_grants WHERE channel_id = $1 AND agent_id = $2 AND tool = $3",
      [channelId, agentId, tool],
    );
    return changed > 0;
  }
}
