/**
 * The `connectors` table: configs with their secrets sealed (AES-GCM through the server's secret box)
 * and a short preview of each, so a secret is never returned in full. Synchronous, like the other
 * server-side stores over better-sqlite3.
 */
import type { Database } from "better-sqlite3";
import type { ConnectorRecord, ConnectorSecrets, ConnectorSettings, ConnectorType } from "../types.js";

/** Seals and opens secrets (the server's SecretBox fits). */
export interface Sealer {
  seal(plain: string): string;
  /** Undefined when the value cannot be decrypted (key file replaced or value corrupted). */
  open(sealed: string): string | undefined;
}

interface ConnectorRow {
  id: string;
  type: ConnectorType;
  name: string;
  agent_id: string;
  settings_json: string;
  secrets_enc: string | null;
  secret_previews_json: string;
  user_mode: "guest" | "user";
  user_id: string | null;
  enabled: number;
  created_by: string;
  created_at: number;
  updated_at: number;
}

/** A record with its secrets, as the repository stores it. */
export interface StoredConnector {
  record: ConnectorRecord;
  /** Undefined when the sealed secrets cannot be opened (the key file changed). */
  secrets: ConnectorSecrets | undefined;
  previews: Record<string, string>;
}

/** `123456:AA…wxyz`-style preview: enough to tell secrets apart, too little to use one. */
export function secretPreview(value: string): string {
  return value.length >= 12 ? `${value.slice(0, 3)}…${value.slice(-4)}` : "…";
}

function parseObject<T>(text: string, fallback: T): T {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

/** The connectors repository. */
export class ConnectorRepo {
  readonly #db: Database;
  readonly #box: Sealer;

  constructor(db: Database, box: Sealer) {
    this.#db = db;
    this.#box = box;
  }

  #toStored(row: ConnectorRow): StoredConnector {
    const record: ConnectorRecord = {
      id: row.id,
      type: row.type,
      name: row.name,
      agentId: row.agent_id,
      settings: parseObject<ConnectorSettings>(row.settings_json, {}),
      userMode: row.user_mode,
      enabled: row.enabled === 1,
      createdBy: row.created_by,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    if (row.user_id !== null) record.userId = row.user_id;
    let secrets: ConnectorSecrets | undefined = {};
    if (row.secrets_enc !== null) {
      const opened = this.#box.open(row.secrets_enc);
      secrets = opened === undefined ? undefined : parseObject<ConnectorSecrets>(opened, {});
    }
    return { record, secrets, previews: parseObject(row.secret_previews_json, {}) };
  }

  /** Every connector, oldest first. */
  list(): StoredConnector[] {
    const rows = this.#db.prepare("SELECT * FROM connectors ORDER BY created_at, id").all() as ConnectorRow[];
    return rows.map((row) => this.#toStored(row));
  }

  /** One connector's record, without opening its secrets (hot paths: answers, previews). */
  record(id: string): ConnectorRecord | undefined {
    const row = this.#db.prepare("SELECT * FROM connectors WHERE id = ?").get(id) as ConnectorRow | undefined;
    return row ? this.#toStored({ ...row, secrets_enc: null }).record : undefined;
  }

  /** One connector, or undefined. */
  get(id: string): StoredConnector | undefined {
    const row = this.#db.prepare("SELECT * FROM connectors WHERE id = ?").get(id) as ConnectorRow | undefined;
    return row ? this.#toStored(row) : undefined;
  }

  /** Inserts or replaces the connector with exactly these secrets. */
  save(record: ConnectorRecord, secrets: ConnectorSecrets): void {
    const previews = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, secretPreview(v)]));
    const sealed = Object.keys(secrets).length > 0 ? this.#box.seal(JSON.stringify(secrets)) : null;
    this.#db
      .prepare(
        `INSERT INTO connectors (id, type, name, agent_id, settings_json, secrets_enc, secret_previews_json,
           user_mode, user_id, enabled, created_by, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (id) DO UPDATE SET name = excluded.name, agent_id = excluded.agent_id,
           settings_json = excluded.settings_json, secrets_enc = excluded.secrets_enc,
           secret_previews_json = excluded.secret_previews_json, user_mode = excluded.user_mode,
           user_id = excluded.user_id, enabled = excluded.enabled, updated_at = excluded.updated_at`,
      )
      .run(
        record.id,
        record.type,
        record.name,
        record.agentId,
        JSON.stringify(record.settings),
        sealed,
        JSON.stringify(previews),
        record.userMode,
        record.userId ?? null,
        record.enabled ? 1 : 0,
        record.createdBy,
        record.createdAt,
        record.updatedAt,
      );
  }

  /** Records whether the connector should run with the server. */
  setEnabled(id: string, enabled: boolean, now: number): void {
    this.#db
      .prepare("UPDATE connectors SET enabled = ?, updated_at = ? WHERE id = ?")
      .run(enabled ? 1 : 0, now, id);
  }

  /** Deletes the connector with its mappings, outbox and state (foreign keys cascade). */
  delete(id: string): boolean {
    return this.#db.prepare("DELETE FROM connectors WHERE id = ?").run(id).changes > 0;
  }
}
