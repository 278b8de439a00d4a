/** The settings repositories over a PostgreSQL database (one logic with SQLite's: see settings-store.ts). */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { postgresDatabase } from "../../store/sql-database.js";
import { McpCredentials } from "./mcp-credential-store.js";
import { McpServerSettings } from "./mcp-server-settings.js";
import type { SecretBox } from "./secret-box.js";
import { Settings } from "./settings-store.js";

/** The settings repository on PostgreSQL. */
export class PgSettingsStore extends Settings {
  constructor(db: PgDatabase, box: SecretBox) {
    super(postgresDatabase(db), box);
  }
}

/** The MCP servers saved from the UI, on PostgreSQL. */
export class PgMcpServerSettings extends McpServerSettings {
  constructor(db: PgDatabase, box: SecretBox) {
    super(postgresDatabase(db), box);
  }
}

/** Each person's sealed MCP sign-ins on PostgreSQL. */
export class PgMcpCredentials extends McpCredentials {
  constructor(db: PgDatabase) {
    super(postgresDatabase(db));
  }
}

/** The settings repository over a PostgreSQL database; `box` seals provider keys and MCP secrets. */
export function createPostgresSettingsStore(db: PgDatabase, box: SecretBox): PgSettingsStore {
  return new PgSettingsStore(db, box);
}

/** Each person's MCP sign-ins over a PostgreSQL database (sealed above it, see `personalMcpCredentials`). */
export function createPostgresMcpCredentials(db: PgDatabase): PgMcpCredentials {
  return new PgMcpCredentials(db);
}
