/** Agents in SQLite. Personas live in SOUL.md files, not here. */
import type { Database, Statement } from "better-sqlite3";
import type { AgentRecord } from "../../types.js";
import type { AgentRepository } from "../repositories.js";
import { type AgentRow, agentParams, agentUpdateParams, toAgent } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The agent table. */
export class SqliteAgentRepo implements AgentRepository {
  readonly #db: Database;
  readonly #list: Statement<[], AgentRow>;
  readonly #get: Statement<[string], AgentRow>;
  readonly #insert: Statement<unknown[]>;
  readonly #update: Statement<unknown[]>;
  readonly #delete: Statement<[string]>;

  constructor(db: Database) {
    this.#db = db;
    this.#list = db.prepare("SELECT * FROM team_agents ORDER BY created_at, rowid");
    this.#get = db.prepare("SELECT * FROM team_agents WHERE id = ?");
    this.#insert = db.prepare(
      `INSERT INTO team_agents (name, emoji, model, tools_allow_json, tools_deny_json, memory, skills_json,
         knowledge_bases_json, ask_first_json, answer_format_json, updated_at, id, created_at, reasoning)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#update = db.prepare(
      `UPDATE team_agents SET name = ?, emoji = ?, model = ?, tools_allow_json = ?, tools_deny_json = ?,
         memory = ?, skills_json = ?, knowledge_bases_json = ?, ask_first_json = ?, answer_format_json = ?,
         updated_at = ?, reasoning = ? WHERE id = ?`,
    );
    this.#delete = db.prepare("DELETE FROM team_agents WHERE id = ?");
  }

  /** Every agent, oldest first. */
  list(): Promise<AgentRecord[]> {
    return guard(this.#db, "read agents from", () => this.#list.all().map(toAgent));
  }

  get(id: string): Promise<AgentRecord | undefined> {
    return guard(this.#db, "read an agent from", () => {
      const row = this.#get.get(id);
      return row ? toAgent(row) : undefined;
    });
  }

  /** Inserts a new agent; a duplicate id raises SQLITE_CONSTRAINT (checked by the caller first). */
  insert(agent: AgentRecord): Promise<AgentRecord> {
    return guard(this.#db, "save an agent in", () => {
      this.#insert.run(...agentParams(agent), agent.createdAt, agent.reasoning ?? null);
      return agent;
    });
  }

  update(agent: AgentRecord): Promise<AgentRecord> {
    return guard(this.#db, "save an agent in", () => {
      this.#update.run(...agentUpdateParams(agent));
      return agent;
    });
  }

  delete(id: string): Promise<boolean> {
    return guard(this.#db, "delete an agent from", () => this.#delete.run(id).changes > 0);
  }
}
