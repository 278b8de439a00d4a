/**
 * The connectors' repositories as one value, on SQLite or PostgreSQL; the composition root picks one
 * and hands it to the `ConnectorManager`.
 */
import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { type ConnectorRepo, type Sealer, SqliteConnectorRepo } from "./connector-repo.js";
import { type LeaseRepo, SqliteLeaseRepo } from "./lease-repo.js";
import { type MappingRepo, SqliteMappingRepo } from "./mapping-repo.js";
import { type OutboxRepo, SqliteOutboxRepo } from "./outbox-repo.js";
import {
  PostgresConnectorRepo,
  PostgresLeaseRepo,
  PostgresMappingRepo,
  PostgresOutboxRepo,
} from "./pg-connector-store.js";

export interface ConnectorStore {
  connectors: ConnectorRepo;
  mappings: MappingRepo;
  outbox: OutboxRepo;
  leases: LeaseRepo;
}

/** The connectors' repositories over a migrated Dimsum SQLite database; secrets sealed with `box`. */
export function createSqliteConnectorStore(db: Database, box: Sealer): ConnectorStore {
  return {
    connectors: new SqliteConnectorRepo(db, box),
    mappings: new SqliteMappingRepo(db),
    outbox: new SqliteOutboxRepo(db),
    leases: new SqliteLeaseRepo(db),
  };
}

/** The connectors' repositories over a migrated PostgreSQL database; secrets sealed with `box`. */
export function createPostgresConnectorStore(db: PgDatabase, box: Sealer): ConnectorStore {
  return {
    connectors: new PostgresConnectorRepo(db, box),
    mappings: new PostgresMappingRepo(db),
    outbox: new PostgresOutboxRepo(db),
    leases: new PostgresLeaseRepo(db),
  };
}
