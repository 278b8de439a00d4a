/** Agents in PostgreSQL. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { AgentRecord } from "../../types.js";
import type { AgentRepository } from "../repositories.js";
import { type AgentRow, agentParams, agentUpdateParams, toAgent } from "../rows.js";

export class PgAgentRepo implements AgentRepository {
  constructor(private readonly db: PgDatabase) {}

  async list(): Promise<AgentRecord[]> {
    return (await this.db.many<AgentRow>("SELECT * FROM team_agents ORDER BY created_at, seq")).map(toAgent);
  }

  async get(id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.one<AgentRow>("SELECT * FROM team_agents WHERE id = $1", [id]);
    return row ? toAgent(row) : undefined;
  }

  async insert(agent: AgentRecord): Promise<AgentRecord> {
    await this.db.run(
      `INSERT INTO team_agents (name, emoji, model, tools_allow_json, tools_deny_json, memory, skills_json,
         knowledge_bases_json, ask_first_json, answer_format_json, updated_at, id, created_at, reasoning)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [...agentParams(agent), agent.createdAt, agent.reasoning ?? null],
    );
    return agent;
  }

  async update(agent: AgentRecord): Promise<AgentRecord> {
    await this.db.run(
      `UPDATE team_agents SET name = $1, emoji = $2, model = $3, tools_allow_json = $4, tools_deny_json = $5,
         memory = $6, skills_json = $7, knowledge_bases_json = $8, ask_first_json = $9,
         answer_format_json = $10, updated_at = $11, reasoning = $12
       WHERE id = $13`,
      agentUpdateParams(agent),
    );
    return agent;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run("DELETE FROM team_agents WHERE id = $1", [id])) > 0;
  }
}
