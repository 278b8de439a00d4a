/**
 * JSON values in the `server_settings` table, over SQLite and PostgreSQL. A change that reads first
 * (a list kept as one value) runs in one transaction; on PostgreSQL under one advisory lock held by
 * every settings write, so two instances saving at once apply one after the other instead of losing
 * a write (SQLite's transaction already holds the only write lock).
 */
import { one, type Plan, run, type SqlDatabase, sql } from "../../store/sql-database.js";
import type { SecretBox } from "./secret-box.js";

// Any fixed 64-bit number: held by every settings write (they are rare; losing one is not).
const SETTINGS_LOCK = 7_412_226_003;

export const SETTING_SQL = {
  get: sql("SELECT value_json FROM server_settings WHERE key = ?"),
  upsert: sql(
    `INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
  ),
  delete: sql("DELETE FROM server_settings WHERE key = ?"),
  lock: sql({ sqlite: "SELECT ?", postgres: "SELECT pg_advisory_xact_lock(?)" }),
} as const;

export const READ_SETTINGS = "read settings from";
export const SAVE_SETTINGS = "save settings in";

/** In a transaction plan: takes the settings lock (PostgreSQL; a no-op read on SQLite). */
export function* lockSettings(): Plan<void> {
  yield* one(SETTING_SQL.lock, [SETTINGS_LOCK]);
}

/** In a plan: the value stored under `key`, parsed, or undefined. */
export function* settingIn<T>(key: string): Plan<T | undefined> {
  const row = yield* one<{ value_json: string }>(SETTING_SQL.get, [key]);
  return row ? (JSON.parse(row.value_json) as T) : undefined;
}

/** In a plan: stores `value` under `key`. */
export function* putSetting(key: string, value: unknown, now = Date.now()): Plan<void> {
  yield* run(SETTING_SQL.upsert, [key, JSON.stringify(value), now]);
}

/** The value stored under `key`, parsed, or undefined. */
export async function readSetting<T>(db: SqlDatabase, key: string): Promise<T | undefined> {
  const row = await db.one<{ value_json: string }>(READ_SETTINGS, SETTING_SQL.get, [key]);
  return row ? (JSON.parse(row.value_json) as T) : undefined;
}

/**
 * One list kept as one JSON value under `key` (the MCP servers, remote agents and HTTP tools saved
 * from the UI extend it), with the secret box that seals what the list keeps secret.
 */
export class SettingList<T> {
  constructor(
    private readonly db: SqlDatabase,
    protected readonly box: SecretBox,
    private readonly key: string,
  ) {}

  protected async saved(): Promise<T[]> {
    return (await readSetting<T[]>(this.db, this.key)) ?? [];
  }

  /**
   * Reads the list, lets `change` decide, and stores `next` when it gives one, in one transaction
   * under the settings lock; resolves to `change`'s result.
   */
  protected modify<R>(change: (list: T[]) => { result: R; next?: T[] }): Promise<R> {
    const key = this.key;
    return this.db.transaction(SAVE_SETTINGS, function* () {
      yield* lockSettings();
      const { result, next } = change((yield* settingIn<T[]>(key)) ?? []);
      if (next) yield* putSetting(key, next);
      return result;
    });
  }
}
