/**
 * The `connectors` table: configs with their secrets sealed (AES-GCM through the server's secret box)
 * and a short preview of each, so a secret is never returned in full. The repository interface, the
 * row mapping both backends share, and the SQLite implementation (PostgreSQL: `pg-connector-store.ts`).
 */
import type { Database } from "better-sqlite3";
import { storeError } from "../../store/sqlite-errors.js";
import { cachedStatement } from "../../store/statement-cache.js";
import type { ConnectorRecord, ConnectorSecrets, ConnectorSettings, ConnectorType } from "../types.js";

/** Seals and opens secrets (the server's SecretBox fits). */
export interface Sealer {
  seal(plain: string): string;
  /** Undefined when the value cannot be decrypted (key file replaced or value corrupted). */
  open(sealed: string): string | undefined;
}

export interface ConnectorRow {
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
export interface ConnectorRepo {
  /** Every connector, oldest first (ties by id). */
  list(): Promise<StoredConnector[]>;
  /** One connector's record, without opening its secrets (hot paths: answers, previews). */
  record(id: string): Promise<ConnectorRecord | undefined>;
  /** One connector, or undefined. */
  get(id: string): Promise<StoredConnector | undefined>;
  /** Inserts or replaces the connector with exactly these secrets (type, creator and creation time stay). */
  save(record: ConnectorRecord, secrets: ConnectorSecrets): Promise<void>;
  /** Records whether the connector should run with the server. */
  setEnabled(id: string, enabled: boolean, now: number): Promise<void>;
  /** Deletes the connector with its mappings, outbox, state and lease; false when there was none. */
  delete(id: string): Promise<boolean>;
}

/** A row as the repository returns it, its secrets opened with `box`. */
export function toStored(row: ConnectorRow, box: Sealer): StoredConnector {
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
    const opened = box.open(row.secrets_enc);
    secrets = opened === undefined ? undefined : parseObject<ConnectorSecrets>(opened, {});
  }
  return { record, secrets, previews: parseObject(row.secret_previews_json, {}) };
}

/** The values of `save`, in column order (both backends). */
export function connectorValues(record: ConnectorRecord, secrets: ConnectorSecrets, box: Sealer): unknown[] {
  const previews = Object.fromEntries(Object.entries(secrets).map(([k, v]) => [k, secretPreview(v)]));
  const sealed = Object.keys(secrets).length > 0 ? box.seal(JSON.stringify(secrets)) : null;
  return [
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
  ];
}

/** The upsert of `save`, with `?` (SQLite) or `$n` (PostgreSQL) placeholders. */
export function saveConnectorSql(placeholders: string): string {
  return `INSERT INTO connectors (id, type, name, agent_id, settings_json, secrets_enc, secret_previews_json,
      user_mode, user_id, enabled, created_by, created_at, updated_at)
    VALUES (${placeholders})
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, agent_id = excluded.agent_id,
      settings_json = excluded.settings_json, secrets_enc = excluded.secrets_enc,
      secret_previews_json = excluded.secret_previews_json, user_mode = excluded.user_mode,
      user_id = excluded.user_id, enabled = excluded.enabled, updated_at = excluded.updated_at`;
}

/** Runs a synchronous better-sqlite3 body as a settled promise, its failure named after the file. */
export function sqliteCall<T>(db: Database, action: string, body: () => T): Promise<T> {
  try {
    return Promise.resolve(body());
  } catch (err) {
    return Promise.reject(storeError(err, db.name, action));
  }
}

const SQL = {
  list: "SELECT * FROM connectors ORDER BY created_at, id",
  get: "SELECT * FROM connectors WHERE id = ?",
  save: saveConnectorSql(Array(13).fill("?").join(", ")),
  setEnabled: "UPDATE connectors SET enabled = ?, updated_at = ? WHERE id = ?",
  delete: "DELETE FROM connectors WHERE id = ?",
} as const;

/** The connectors repository on SQLite. */
export class SqliteConnectorRepo implements ConnectorRepo {
  readonly #db: Database;
  readonly #box: Sealer;

  constructor(db: Database, box: Sealer) {
    this.#db = db;
    this.#box = box;
  }

  list(): Promise<StoredConnector[]> {
    return sqliteCall(this.#db, "read connectors from", () =>
      (cachedStatement(this.#db, SQL.list).all() as ConnectorRow[]).map((row) => toStored(row, this.#box)),
    );
  }

  record(id: string): Promise<ConnectorRecord | undefined> {
    return sqliteCall(this.#db, "read connectors from", () => {
      const row = cachedStatement(this.#db, SQL.get).get(id) as ConnectorRow | undefined;
      return row ? toStored({ ...row, secrets_enc: null }, this.#box).record : undefined;
    });
  }

  get(id: string): Promise<StoredConnector | undefined> {
    return sqliteCall(this.#db, "read connectors from", () => {
      const row = cachedStatement(this.#db, SQL.get).get(id) as ConnectorRow | undefined;
      return row ? toStored(row, this.#box) : undefined;
    });
  }

  save(record: ConnectorRecord, secrets: ConnectorSecrets): Promise<void> {
    return sqliteCall(this.#db, "save a connector in", () => {
      cachedStatement(this.#db, SQL.save).run(...connectorValues(record, secrets, this.#box));
    });
  }

  setEnabled(id: string, enabled: boolean, now: number): Promise<void> {
    return sqliteCall(this.#db, "save a connector in", () => {
      cachedStatement(this.#db, SQL.setEnabled).run(enabled ? 1 : 0, now, id);
    });
  }

  delete(id: string): Promise<boolean> {
    return sqliteCall(
      this.#db,
      "delete a connector from",
      () => cachedStatement(this.#db, SQL.delete).run(id).changes > 0,
    );
  }
}
