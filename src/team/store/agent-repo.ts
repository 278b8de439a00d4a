/** Agents, one repository over SQLite and PostgreSQL. Personas live elsewhere (SOUL.md, personas table). */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import { networkToJson } from "../agent-network.js";
import type { AgentRecord } from "../types.js";
import type { AgentRepository } from "./repositories.js";
import { type AgentRow, agentParams, agentUpdateParams, agentVisibilityParams, toAgent } from "./rows.js";

export const AGENT_SQL = {
  // Insertion order breaks ties: SQLite's rowid, PostgreSQL's seq column.
  list: sql({
    sqlite: "SELECT * FROM team_agents ORDER BY created_at, rowid",
    postgres: "SELECT * FROM team_agents ORDER BY created_at, seq",
  }),
  get: sql("SELECT * FROM team_agents WHERE id = ?"),
  insert: sql(
    `INSERT INTO team_agents (name, emoji, model, tools_allow_json, tools_deny_json, memory, skills_json,
       knowledge_bases_json, ask_first_json, answer_format_json, updated_at, id, created_at, reasoning,
       owner_id, visibility, allowed_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ),
  update: sql(
    `UPDATE team_agents SET name = ?, emoji = ?, model = ?, tools_allow_json = ?, tools_deny_json = ?,
       memory = ?, skills_json = ?, knowledge_bases_json = ?, ask_first_json = ?, answer_format_json = ?,
       updated_at = ?, reasoning = ?, visibility = ?, allowed_json = ? WHERE id = ?`,
  ),
  delete: sql("DELETE FROM team_agents WHERE id = ?"),
  /** The sandbox network has its own statement: written after the agent's other columns. */
  setNetwork: sql("UPDATE team_agents SET network_json = ? WHERE id = ?"),
} as const;

/** The team_agents table. */
export class AgentRepo implements AgentRepository {
  constructor(private readonly db: SqlDatabase) {}

  /** Every agent, oldest first. */
  async list(): Promise<AgentRecord[]> {
    return (await this.db.many<AgentRow>("read agents from", AGENT_SQL.list)).map(toAgent);
  }

  async get(id: string): Promise<AgentRecord | undefined> {
    const row = await this.db.one<AgentRow>("read an agent from", AGENT_SQL.get, [id]);
    return row ? toAgent(row) : undefined;
  }

  /** Inserts a new agent; a duplicate id is a unique-key error (checked by the caller first). */
  async insert(agent: AgentRecord): Promise<AgentRecord> {
    await this.db.run("save an agent in", AGENT_SQL.insert, [
      ...agentParams(agent),
      agent.createdAt,
      agent.reasoning ?? null,
      ...agentVisibilityParams(agent),
    ]);
    await this.#setNetwork(agent);
    return agent;
  }

  async update(agent: AgentRecord): Promise<AgentRecord> {
    await this.db.run("save an agent in", AGENT_SQL.update, agentUpdateParams(agent));
    await this.#setNetwork(agent);
    return agent;
  }

  async #setNetwork(agent: AgentRecord): Promise<void> {
    await this.db.run("save an agent's network in", AGENT_SQL.setNetwork, [
      networkToJson(agent.network),
      agent.id,
    ]);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run("delete an agent from", AGENT_SQL.delete, [id])) > 0;
  }
}
