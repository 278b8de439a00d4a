/**
 * The team's repositories (see store/repositories.ts) and their two implementations: SQLite in the
 * Dimsum database file, and PostgreSQL for several instances sharing one database.
 */

import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../store/postgres/pg-database.js";
import { sqliteDatabase } from "../store/sql-database.js";
import { createPostgresTeamStore as createPostgres } from "./store/postgres/team-store.js";
import type { TeamStore } from "./store/repositories.js";
import { teamRepositories } from "./store/team-repositories.js";

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
  return teamRepositories(sqliteDatabase(db, { groupCommit: true }));
}

/** The team repositories over a migrated PostgreSQL database (see `openPostgres`). */
export function createPostgresTeamStore(db: PgDatabase): TeamStore {
  return createPostgres(db);
}
