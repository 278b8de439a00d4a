/**
 * The connectors' repositories as one value, on SQLite or PostgreSQL; the composition root picks one
 * and hands it to the `ConnectorManager`.
 */
import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { postgresDatabase, type SqlDatabase, sqliteDatabase } from "../../store/sql-database.js";
import { type ConnectorRepo, ConnectorRepository, type Sealer } from "./connector-repo.js";
import { type LeaseRepo, LeaseRepository } from "./lease-repo.js";
import { type MappingRepo, MappingRepository } from "./mapping-repo.js";
import { type OutboxRepo, OutboxRepository } from "./outbox-repo.js";

export interface ConnectorStore {
  connectors: ConnectorRepo;
  mappings: MappingRepo;
  outbox: OutboxRepo;
  leases: LeaseRepo;
}

/** The connectors' repositories over either database; secrets sealed with `box`. */
export function createConnectorStore(db: SqlDatabase, box: Sealer): ConnectorStore {
  return {
    connectors: new ConnectorRepository(db, box),
    mappings: new MappingRepository(db),
    outbox: new OutboxRepository(db),
    leases: new LeaseRepository(db),
  };
}

/** The connectors' repositories over a migrated Dimsum SQLite database; secrets sealed with `box`. */
export function createSqliteConnectorStore(db: Database, box: Sealer): ConnectorStore {
  return createConnectorStore(sqliteDatabase(db), box);
}

/** The connectors' repositories over a migrated PostgreSQL database; secrets sealed with `box`. */
export function createPostgresConnectorStore(db: PgDatabase, box: Sealer): ConnectorStore {
  return createConnectorStore(postgresDatabase(db), box);
}
