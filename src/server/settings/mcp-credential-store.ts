/**
 * Each person's MCP sign-ins (OAuth client, tokens, a login in progress), one sealed text per person
 * and server, kept in the database so every server instance sees the same sign-ins. Rows live in
 * `server_settings` under `mcpCredential:<hash of person>:<hash of server>`; the repository only
 * ever holds sealed text: sealing and opening happen above it, with the server's secret box.
 */
import { hashedName } from "../../mcp/oauth/file-store.js";
import type { Database } from "../../store/database.js";
import { cachedStatement } from "../../store/statement-cache.js";

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

/** The records on SQLite. */
export class SqliteMcpCredentials implements McpCredentialRepository {
  constructor(private readonly db: Database) {}

  async read(person: string, server: string): Promise<string | undefined> {
    const row = cachedStatement(this.db, "SELECT value_json FROM server_settings WHERE key = ?").get(
      credentialKey(person, server),
    ) as { value_json: string } | undefined;
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async write(person: string, server: string, sealed: string): Promise<void> {
    cachedStatement(
      this.db,
      `INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
    ).run(credentialKey(person, server), JSON.stringify(sealed), Date.now());
  }

  async remove(person: string, server: string): Promise<void> {
    cachedStatement(this.db, "DELETE FROM server_settings WHERE key = ?").run(credentialKey(person, server));
  }
}
