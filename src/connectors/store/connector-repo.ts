/**
 * The `connectors` table: configs with their secrets sealed (AES-GCM through the server's secret box)
 * and a short preview of each, so a secret is never returned in full. The repository interface, its
 * row mapping and its one implementation over SQLite and PostgreSQL (store/sql-database.ts).
 */
import { marks, type SqlDatabase, sql } from "../../store/sql-database.js";
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

/** The values of `save`, in column order. */
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

const SQL = {
  list: sql("SELECT * FROM connectors ORDER BY created_at, id"),
  get: sql("SELECT * FROM connectors WHERE id = ?"),
  save: sql(`INSERT INTO connectors (id, type, name, agent_id, settings_json, secrets_enc, secret_previews_json,
      user_mode, user_id, enabled, created_by, created_at, updated_at)
    VALUES (${marks(13)})
    ON CONFLICT (id) DO UPDATE SET name = excluded.name, agent_id = excluded.agent_id,
      settings_json = excluded.settings_json, secrets_enc = excluded.secrets_enc,
      secret_previews_json = excluded.secret_previews_json, user_mode = excluded.user_mode,
      user_id = excluded.user_id, enabled = excluded.enabled, updated_at = excluded.updated_at`),
  setEnabled: sql("UPDATE connectors SET enabled = ?, updated_at = ? WHERE id = ?"),
  delete: sql("DELETE FROM connectors WHERE id = ?"),
} as const;

const READ = "read connectors from";
const SAVE = "save a connector in";

/** The connectors repository, one logic over either database. */
export class ConnectorRepository implements ConnectorRepo {
  constructor(
    private readonly db: SqlDatabase,
    private readonly box: Sealer,
  ) {}

  async list(): Promise<StoredConnector[]> {
    return (await this.db.many<ConnectorRow>(READ, SQL.list)).map((row) => toStored(row, this.box));
  }

  async record(id: string): Promise<ConnectorRecord | undefined> {
    const row = await this.db.one<ConnectorRow>(READ, SQL.get, [id]);
    return row ? toStored({ ...row, secrets_enc: null }, this.box).record : undefined;
  }

  async get(id: string): Promise<StoredConnector | undefined> {
    const row = await this.db.one<ConnectorRow>(READ, SQL.get, [id]);
    return row ? toStored(row, this.box) : undefined;
  }

  async save(record: ConnectorRecord, secrets: ConnectorSecrets): Promise<void> {
    await this.db.run(SAVE, SQL.save, connectorValues(record, secrets, this.box));
  }

  async setEnabled(id: string, enabled: boolean, now: number): Promise<void> {
    await this.db.run(SAVE, SQL.setEnabled, [enabled ? 1 : 0, now, id]);
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run("delete a connector from", SQL.delete, [id])) > 0;
  }
}
