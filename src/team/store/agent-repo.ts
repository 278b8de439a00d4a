/** Agents in SQLite. Personas live in SOUL.md files, not here. */
import type { Database, Statement } from "better-sqlite3";
import type { AgentRecord } from "../types.js";
import { guard, parseJson } from "./sql-guard.js";

interface AgentRow {
  id: string;
  name: string;
  emoji: string;
  model: string | null;
  tools_allow_json: string | null;
  tools_deny_json: string;
  memory: number;
  skills_json: string;
  knowledge_bases_json: string | null;
  created_at: number;
  updated_at: number;
}

function toAgent(row: AgentRow): AgentRecord {
  const agent: AgentRecord = {
    id: row.id,
    name: row.name,
    emoji: row.emoji,
    toolsDeny: parseJson<string[]>(row.tools_deny_json, []),
    memory: row.memory === 1,
    skills: parseJson<string[]>(row.skills_json, []),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.model !== null) agent.model = row.model;
  if (row.tools_allow_json !== null) agent.toolsAllow = parseJson<string[]>(row.tools_allow_json, []);
  if (row.knowledge_bases_json !== null) {
    agent.knowledgeBases = parseJson<string[]>(row.knowledge_bases_json, []);
  }
  return agent;
}

function toParams(agent: AgentRecord): unknown[] {
  return [
    agent.name,
    agent.emoji,
    agent.model ?? null,
    agent.toolsAllow === undefined ? null : JSON.stringify(agent.toolsAllow),
    JSON.stringify(agent.toolsDeny),
    agent.memory ? 1 : 0,
    JSON.stringify(agent.skills),
    agent.knowledgeBases === undefined ? null : JSON.stringify(agent.knowledgeBases),
    agent.updatedAt,
    agent.id,
  ];
}

/** The agent table. */
export class AgentRepo {
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
         knowledge_bases_json, updated_at, id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#update = db.prepare(
      `UPDATE team_agents SET name = ?, emoji = ?, model = ?, tools_allow_json = ?, tools_deny_json = ?,
         memory = ?, skills_json = ?, knowledge_bases_json = ?, updated_at = ? WHERE id = ?`,
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
      this.#insert.run(...toParams(agent), agent.createdAt);
      return agent;
    });
  }

  update(agent: AgentRecord): Promise<AgentRecord> {
    return guard(this.#db, "save an agent in", () => {
      this.#update.run(...toParams(agent));
      return agent;
    });
  }

  delete(id: string): Promise<boolean> {
    return guard(this.#db, "delete an agent from", () => this.#delete.run(id).changes > 0);
  }
}
