/**
 * Each person's MCP sign-ins (OAuth client, tokens, a login in progress), one sealed text per person
 * and server, kept in the database so every server instance sees the same sign-ins. Rows live in
 * `server_settings` under `mcpCredential:<hash of person>:<hash of server>`; the repository only
 * ever holds sealed text: sealing and opening happen above it, with the server's secret box.
 */
import { readdir, readFile, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { hashedName } from "../../mcp/oauth/file-store.js";
import type { Database } from "../../store/database.js";
import { type SqlDatabase, sqliteDatabase } from "../../store/sql-database.js";
import { cachedStatement } from "../../store/statement-cache.js";
import { readSetting, SAVE_SETTINGS, SETTING_SQL } from "./setting-values.js";

/** Sealed sign-in records by person and server, implemented over SQLite and PostgreSQL. */
export interface McpCredentialRepository {
  /** The sealed record of `person` for `server`, if any. */
  read(person: string, server: string): Promise<string | undefined>;
  /** Stores (or replaces) the sealed record. */
  write(person: string, server: string, sealed: string): Promise<void>;
  /** Forgets the record (sign-out); nothing happens when there is none. */
  remove(person: string, server: string): Promise<void>;
}

/** The start of every key of one person's records (deleting an account removes them all). */
export function personCredentialPrefix(person: string): string {
  return `mcpCredential:${hashedName(person)}:`;
}

/** The `server_settings` key of one record: hashed, so any person or server name fits. */
export function credentialKey(person: string, server: string): string {
  return `${personCredentialPrefix(person)}${hashedName(server)}`;
}

/** Where an older version kept the server's sign-ins: `<home>/mcp-credentials/people/<person>/<server>.sealed`. */
export function legacySignInFolder(home: string): string {
  return join(home, "mcp-credentials", "people");
}

const HASHED = /^[0-9a-f]{32}$/;

/**
 * Moves the sign-in files an older version kept under `home` into the SQLite database, sealed text
 * as it is (the folders are already named by the hashes the keys use); a record the database holds
 * already wins. Runs when the server starts and before `dimsum migrate` copies the database, so
 * sign-ins follow a team to PostgreSQL. Returns how many files moved.
 */
export async function importLegacySignIns(db: Database, home: string): Promise<number> {
  const root = legacySignInFolder(home);
  const people = await readdir(root).catch(() => [] as string[]);
  const insert = cachedStatement(
    db,
    "INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING",
  );
  let moved = 0;
  for (const person of people.filter((name) => HASHED.test(name))) {
    const files = await readdir(join(root, person)).catch(() => [] as string[]);
    for (const file of files) {
      const server = file.endsWith(".sealed") ? file.slice(0, -".sealed".length) : "";
      if (!HASHED.test(server)) continue;
      const sealed = await readFile(join(root, person, file), "utf8");
      insert.run(`mcpCredential:${person}:${server}`, JSON.stringify(sealed), Date.now());
      await rm(join(root, person, file), { force: true });
      moved++;
    }
    await rmdir(join(root, person)).catch(() => undefined);
  }
  return moved;
}

/** The records, over SQLite or PostgreSQL. */
export class McpCredentials implements McpCredentialRepository {
  constructor(private readonly db: SqlDatabase) {}

  read(person: string, server: string): Promise<string | undefined> {
    return readSetting<string>(this.db, credentialKey(person, server));
  }

  async write(person: string, server: string, sealed: string): Promise<void> {
    await this.db.run(SAVE_SETTINGS, SETTING_SQL.upsert, [
      credentialKey(person, server),
      JSON.stringify(sealed),
      Date.now(),
    ]);
  }

  async remove(person: string, server: string): Promise<void> {
    await this.db.run(SAVE_SETTINGS, SETTING_SQL.delete, [credentialKey(person, server)]);
  }
}

/** The records on SQLite. */
export class SqliteMcpCredentials extends McpCredentials {
  constructor(db: Database) {
    super(sqliteDatabase(db));
  }
}
