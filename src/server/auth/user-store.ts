/** Accounts: username, role and scrypt password hash, in the `users` table. */
import { randomUUID } from "node:crypto";
import { conflict } from "../../errors.js";
import type { Database } from "../../store/database.js";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import {
  isUniqueViolation,
  one,
  postgresDatabase,
  run,
  type SqlDatabase,
  sql,
  sqliteDatabase,
} from "../../store/sql-database.js";
import type { Actor } from "../../team/types.js";
import { personCredentialPrefix } from "../settings/mcp-credential-store.js";
import type { AuthEvents } from "./auth-events.js";
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  type ScryptParams,
  verifyAgainstDummy,
  verifyPassword,
} from "./passwords.js";

export type Role = Actor["role"];
export const ROLES: readonly Role[] = ["owner", "admin", "member", "guest"];

export interface UserRecord {
  id: string;
  username: string;
  role: Role;
  createdAt: number;
  updatedAt: number;
}

/** The accounts repository (`Users`, over SQLite or PostgreSQL). */
export interface UserRepository {
  /** How many accounts exist (0 means the server still needs its owner). */
  count(): Promise<number>;
  /** How many accounts have a role (keeps the last owner from being removed). */
  countRole(role: Role): Promise<number>;
  /** Every account, by username without regard to case. */
  list(): Promise<UserRecord[]>;
  /** One account by id. */
  get(id: string): Promise<UserRecord | undefined>;
  /** Creates an account; a `conflict` error when the username is taken (in any case). */
  create(input: { username: string; password: string; role: Role }): Promise<UserRecord>;
  /**
   * Creates the first account (an owner) only while none exists, atomically: two racing setup
   * requests, even on two instances, cannot both become owner. Undefined when an account exists.
   */
  createFirst(
    input: { username: string; password: string },
    options?: { oneTimePassword?: boolean },
  ): Promise<UserRecord | undefined>;
  /**
   * Whether the account still signs in with the password the server generated and printed once
   * (the web UI then sends its owner to Settings → Account); any password change clears it.
   */
  hasOneTimePassword(id: string): Promise<boolean>;
  /** Changes role and/or password (a new password is no longer a one-time one). */
  update(id: string, patch: { role?: Role; password?: string }): Promise<UserRecord | undefined>;
  /** Deletes an account; its sessions, API tokens and MCP sign-ins go with it. */
  delete(id: string): Promise<boolean>;
  /**
   * Checks a username (any case) and password. Unknown usernames cost the same scrypt work as
   * known ones, so timing does not reveal which accounts exist.
   */
  verifyLogin(username: string, password: string): Promise<UserRecord | undefined>;
  /** Checks the password of a known account (password change, re-authentication). */
  checkPassword(id: string, password: string): Promise<boolean>;
  /** The language the person chose for the web UI (`en`, `zh-CN`), if they chose one. */
  getLocale(id: string): Promise<string | undefined>;
  /** Keeps the person's language, so it follows them to every browser and device. */
  setLocale(id: string, locale: string): Promise<void>;
  /** Whether an admin disabled the account (it cannot sign in). */
  isDisabled(id: string): Promise<boolean>;
  /** Disables or enables the account; the caller ends its sessions and tokens. */
  setDisabled(id: string, disabled: boolean): Promise<void>;
}

export interface UserStoreOptions {
  /** The scrypt cost of new hashes (old hashes keep theirs); tests lower it. */
  hashParams?: ScryptParams;
  /** Hears role changes, password changes and deletions (the WebSocket hub acts on them). */
  events?: AuthEvents;
}

/** The `server_settings` key of the language an account chose for the web UI. */
export function localeKey(id: string): string {
  return `locale:${id}`;
}

/** The `server_settings` key marking an account an admin disabled. */
export function disabledKey(id: string): string {
  return `disabled:${id}`;
}

/** The `server_settings` key marking an account whose password was generated and printed once. */
export function oneTimeKey(id: string): string {
  return `oneTimePassword:${id}`;
}

export interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

export function toUserRecord(row: Omit<UserRow, "password_hash">): UserRecord {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function usernameTaken(username: string): Error {
  return conflict(`the username "${username}" is taken; choose another`);
}

/** Tells the listeners what an update changed (after the change is stored). */
export function emitUserUpdate(
  events: AuthEvents | undefined,
  before: UserRecord | undefined,
  after: UserRecord | undefined,
  passwordChanged: boolean,
): void {
  if (before && after && after.role !== before.role) {
    events?.emit({ type: "role_changed", userId: after.id, role: after.role, previousRole: before.role });
  }
  if (after && passwordChanged) events?.emit({ type: "password_changed", userId: after.id });
}

/** The result of a login check against a stored row (or none, at the same cost). */
export async function checkLogin(
  row: UserRow | undefined,
  password: string,
  hashParams: ScryptParams,
): Promise<UserRecord | undefined> {
  if (!row) {
    await verifyAgainstDummy(password, hashParams);
    return undefined;
  }
  return (await verifyPassword(password, row.password_hash)) ? toUserRecord(row) : undefined;
}

// Any fixed 64-bit number: held while the first account is created, so only one instance creates it.
const FIRST_ACCOUNT_LOCK = 7_412_226_002;

const SQL = {
  count: sql("SELECT count(*) AS n FROM users"),
  countRole: sql("SELECT count(*) AS n FROM users WHERE role = ?"),
  list: sql({
    sqlite: "SELECT * FROM users ORDER BY username COLLATE NOCASE",
    postgres: "SELECT * FROM users ORDER BY lower(username), username",
  }),
  get: sql("SELECT * FROM users WHERE id = ?"),
  insert: sql(
    "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
  ),
  // NOT EXISTS alone is no guard under PostgreSQL's READ COMMITTED: two instances would both see no
  // account, so the first account is created under an advisory lock (SQLite's write lock suffices).
  lockFirst: sql({ sqlite: "SELECT ?", postgres: "SELECT pg_advisory_xact_lock(?)" }),
  insertFirst: sql(`INSERT INTO users (id, username, password_hash, role, created_at, updated_at)
      SELECT $1, $2, $3, 'owner', $4, $4 WHERE NOT EXISTS (SELECT 1 FROM users)`),
  // An account's marks and choices in `server_settings` (one-time password, language, disabled).
  hasSetting: sql("SELECT 1 AS one FROM server_settings WHERE key = ?"),
  getSetting: sql("SELECT value_json FROM server_settings WHERE key = ?"),
  putSetting: sql(`INSERT INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`),
  deleteSetting: sql("DELETE FROM server_settings WHERE key = ?"),
  // Locked, so the role reported as the previous one is the one this update replaced.
  getForUpdate: sql({
    sqlite: "SELECT * FROM users WHERE id = ?",
    postgres: "SELECT * FROM users WHERE id = ? FOR UPDATE",
  }),
  update:
    sql(`UPDATE users SET role = coalesce(?, role), password_hash = coalesce(?, password_hash), updated_at = ?
      WHERE id = ? RETURNING *`),
  clearPerson: sql({
    sqlite: "DELETE FROM server_settings WHERE key = $1 OR key LIKE $2 || '%'",
    postgres: "DELETE FROM server_settings WHERE key = $1 OR starts_with(key, $2)",
  }),
  delete: sql("DELETE FROM users WHERE id = ?"),
  // SQLite's username column compares without regard to case; PostgreSQL's does not.
  byName: sql({
    sqlite: "SELECT * FROM users WHERE username = ?",
    postgres: "SELECT * FROM users WHERE lower(username) = lower(?)",
  }),
  hash: sql("SELECT password_hash FROM users WHERE id = ?"),
} as const;

const SAVE = "save an account in";
const READ = "read accounts from";

/** The `users` repository, one logic over either database. Usernames are unique without regard to case. */
export class Users implements UserRepository {
  private readonly hashParams: ScryptParams;
  readonly #events: AuthEvents | undefined;

  constructor(
    private readonly db: SqlDatabase,
    options: UserStoreOptions = {},
  ) {
    this.hashParams = options.hashParams ?? DEFAULT_SCRYPT_PARAMS;
    this.#events = options.events;
  }

  async count(): Promise<number> {
    return (await this.db.one<{ n: number }>(READ, SQL.count))?.n ?? 0;
  }

  async countRole(role: Role): Promise<number> {
    return (await this.db.one<{ n: number }>(READ, SQL.countRole, [role]))?.n ?? 0;
  }

  async list(): Promise<UserRecord[]> {
    return (await this.db.many<UserRow>(READ, SQL.list)).map(toUserRecord);
  }

  async get(id: string): Promise<UserRecord | undefined> {
    const row = await this.db.one<UserRow>(READ, SQL.get, [id]);
    return row ? toUserRecord(row) : undefined;
  }

  async create(input: { username: string; password: string; role: Role }): Promise<UserRecord> {
    const hash = await hashPassword(input.password, this.hashParams);
    const now = Date.now();
    const id = randomUUID();
    try {
      await this.db.run(SAVE, SQL.insert, [id, input.username, hash, input.role, now]);
    } catch (err) {
      if (isUniqueViolation(err)) throw usernameTaken(input.username);
      throw err;
    }
    return { id, username: input.username, role: input.role, createdAt: now, updatedAt: now };
  }

  async createFirst(
    input: { username: string; password: string },
    options: { oneTimePassword?: boolean } = {},
  ): Promise<UserRecord | undefined> {
    const hash = await hashPassword(input.password, this.hashParams);
    const now = Date.now();
    const id = randomUUID();
    const created = await this.db.transaction(SAVE, function* () {
      yield* run(SQL.lockFirst, [FIRST_ACCOUNT_LOCK]);
      if ((yield* run(SQL.insertFirst, [id, input.username, hash, now])) === 0) return false;
      if (options.oneTimePassword) yield* run(SQL.putSetting, [oneTimeKey(id), "true", now]);
      return true;
    });
    if (!created) return undefined;
    return { id, username: input.username, role: "owner", createdAt: now, updatedAt: now };
  }

  async hasOneTimePassword(id: string): Promise<boolean> {
    return (await this.db.one(READ, SQL.hasSetting, [oneTimeKey(id)])) !== undefined;
  }

  async update(id: string, patch: { role?: Role; password?: string }): Promise<UserRecord | undefined> {
    const hash =
      patch.password === undefined ? undefined : await hashPassword(patch.password, this.hashParams);
    const now = Date.now();
    const [before, after] = await this.db.transaction(SAVE, function* () {
      const previous = yield* one<UserRow>(SQL.getForUpdate, [id]);
      if (!previous) return [undefined, undefined] as const;
      const updated = yield* one<UserRow>(SQL.update, [patch.role ?? null, hash ?? null, now, id]);
      if (hash !== undefined) yield* run(SQL.deleteSetting, [oneTimeKey(id)]);
      return [toUserRecord(previous), updated ? toUserRecord(updated) : undefined] as const;
    });
    emitUserUpdate(this.#events, before, after, hash !== undefined);
    return after;
  }

  async delete(id: string): Promise<boolean> {
    const removed = await this.db.transaction(SAVE, function* () {
      yield* run(SQL.clearPerson, [oneTimeKey(id), personCredentialPrefix(id)]);
      yield* run(SQL.deleteSetting, [localeKey(id)]);
      yield* run(SQL.deleteSetting, [disabledKey(id)]);
      return (yield* run(SQL.delete, [id])) > 0;
    });
    if (removed) this.#events?.emit({ type: "user_deleted", userId: id });
    return removed;
  }

  async verifyLogin(username: string, password: string): Promise<UserRecord | undefined> {
    return checkLogin(await this.db.one<UserRow>(READ, SQL.byName, [username]), password, this.hashParams);
  }

  async checkPassword(id: string, password: string): Promise<boolean> {
    const row = await this.db.one<Pick<UserRow, "password_hash">>(READ, SQL.hash, [id]);
    if (!row) return verifyAgainstDummy(password, this.hashParams);
    return verifyPassword(password, row.password_hash);
  }

  async getLocale(id: string): Promise<string | undefined> {
    const row = await this.db.one<{ value_json: string }>(READ, SQL.getSetting, [localeKey(id)]);
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async setLocale(id: string, locale: string): Promise<void> {
    await this.db.run(SAVE, SQL.putSetting, [localeKey(id), JSON.stringify(locale), Date.now()]);
  }

  async isDisabled(id: string): Promise<boolean> {
    return (await this.db.one(READ, SQL.hasSetting, [disabledKey(id)])) !== undefined;
  }

  async setDisabled(id: string, disabled: boolean): Promise<void> {
    if (disabled) await this.db.run(SAVE, SQL.putSetting, [disabledKey(id), "true", Date.now()]);
    else await this.db.run(SAVE, SQL.deleteSetting, [disabledKey(id)]);
  }
}

/** The accounts in the SQLite file. */
export class UserStore extends Users {
  constructor(db: Database, options: UserStoreOptions = {}) {
    super(sqliteDatabase(db), options);
  }
}

/** The accounts in PostgreSQL, shared by every instance on that database. */
export class PgUserStore extends Users {
  constructor(db: PgDatabase, options: UserStoreOptions = {}) {
    super(postgresDatabase(db), options);
  }
}

/** The accounts repository over a PostgreSQL database. */
export function createPostgresUserStore(db: PgDatabase, options: UserStoreOptions = {}): PgUserStore {
  return new PgUserStore(db, options);
}
