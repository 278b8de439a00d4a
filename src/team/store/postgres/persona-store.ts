/** Agents' personas in PostgreSQL: the SOUL.md text every instance reads. */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import { type PersonaStore, soulOf } from "../../personas.js";
import type { SoulFile } from "../../types.js";

export class PgPersonaStore implements PersonaStore {
  constructor(
    private readonly db: PgDatabase,
    private readonly now: () => number = Date.now,
  ) {}

  async read(agentId: string): Promise<SoulFile> {
    const row = await this.db.one<{ content: string }>(
      "SELECT content FROM team_personas WHERE agent_id = $1",
      [agentId],
    );
    return soulOf(agentId, row?.content);
  }

  async write(agentId: string, content: string): Promise<SoulFile> {
    await this.db.run(
      `INSERT INTO team_personas (agent_id, content, updated_at) VALUES ($1, $2, $3)
       ON CONFLICT (agent_id) DO UPDATE SET content = excluded.content, updated_at = excluded.updated_at`,
      [agentId, content, this.now()],
    );
    return soulOf(agentId, content);
  }

  async writeIfMissing(agentId: string, content: string): Promise<void> {
    await this.db.run(
      "INSERT INTO team_personas (agent_id, content, updated_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
      [agentId, content, this.now()],
    );
  }

  async remove(agentId: string): Promise<void> {
    await this.db.run("DELETE FROM team_personas WHERE agent_id = $1", [agentId]);
  }
}
