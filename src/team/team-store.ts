/**
 * The team's repositories (see store/repositories.ts) and their two implementations: SQLite in the
 * Dimsum database file, and PostgreSQL for several instances sharing one database.
 */

import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../store/postgres/pg-database.js";
import { createPostgresTeamStore as createPostgres } from "./store/postgres/team-store.js";
import type { TeamStore } from "./store/repositories.js";
import { SqliteAgentRepo } from "./store/sqlite/agent-repo.js";
import { SqliteAppCallRepo } from "./store/sqlite/app-call-repo.js";
import { SqliteAttachmentRepo } from "./store/sqlite/attachment-repo.js";
import { SqliteChannelRepo } from "./store/sqlite/channel-repo.js";
import { SqliteFlowRepo } from "./store/sqlite/flow-repo.js";
import { SqliteGrantRepo } from "./store/sqlite/grant-repo.js";
import { SqliteMessageRepo } from "./store/sqlite/message-repo.js";
import { SqliteMetaRepo } from "./store/sqlite/meta-repo.js";
import { SqliteRunRepo } from "./store/sqlite/run-repo.js";

export type {
  AgentRepository,
  ApprovalGrant,
  ApprovalGrantRepository,
  AttachmentMeta,
  AttachmentRepository,
  ChannelRepository,
  FlowRepository,
  ListOptions,
  MessageRepository,
  MetaRepository,
  NewMessage,
  RunJob,
  RunJobRepository,
  RunLeaseRepository,
  RunRepository,
  SearchScope,
  StoredRun,
  TeamStore,
} from "./store/repositories.js";
export { textParts } from "./store/rows.js";

/** The team repositories over a migrated Dimsum database (see `openDatabase`). */
export function createSqliteTeamStore(db: Database): TeamStore {
  return {
    attachments: new SqliteAttachmentRepo(db),
    agents: new SqliteAgentRepo(db),
    channels: new SqliteChannelRepo(db),
    messages: new SqliteMessageRepo(db),
    runs: new SqliteRunRepo(db),
    flows: new SqliteFlowRepo(db),
    meta: new SqliteMetaRepo(db),
    grants: new SqliteGrantRepo(db),
    appCalls: new SqliteAppCallRepo(db),
  };
}

/** The team repositories over a migrated PostgreSQL database (see `openPostgres`). */
export function createPostgresTeamStore(db: PgDatabase): TeamStore {
  return createPostgres(db);
}
