/** The team repositories over PostgreSQL. */

import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { MetaRepository, TeamStore } from "../repositories.js";
import { PgAgentRepo } from "./agent-repo.js";
import { PgAppCallRepo } from "./app-call-repo.js";
import { PgAttachmentRepo } from "./attachment-repo.js";
import { PgChannelRepo } from "./channel-repo.js";
import { PgFlowRepo } from "./flow-repo.js";
import { PgGrantRepo } from "./grant-repo.js";
import { PgRunJobRepo } from "./job-repo.js";
import { PgMessageRepo } from "./message-repo.js";
import { PgRunLeaseRepo, PgRunRepo } from "./run-repo.js";

class PgMetaRepo implements MetaRepository {
  constructor(private readonly db: PgDatabase) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.db.one<{ value: string }>("SELECT value FROM team_meta WHERE key = $1", [key]))?.value;
  }

  async set(key: string, value: string): Promise<void> {
    await this.db.run(
      "INSERT INTO team_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [key, value],
    );
  }

  async claim(key: string, value: string): Promise<boolean> {
    const changed = await this.db.run(
      "INSERT INTO team_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
      [key, value],
    );
    return changed > 0;
  }
}

export function createPostgresTeamStore(db: PgDatabase): TeamStore {
  return {
    agents: new PgAgentRepo(db),
    channels: new PgChannelRepo(db),
    messages: new PgMessageRepo(db),
    runs: new PgRunRepo(db),
    flows: new PgFlowRepo(db),
    meta: new PgMetaRepo(db),
    attachments: new PgAttachmentRepo(db),
    grants: new PgGrantRepo(db),
    appCalls: new PgAppCallRepo(db),
    leases: new PgRunLeaseRepo(db),
    jobs: new PgRunJobRepo(db),
  };
}
