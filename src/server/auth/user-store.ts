/** Accounts: username, role and scrypt password hash, in the `users` table. */
import { randomUUID } from "node:crypto";
import { conflict } from "../../errors.js";
import type { Database } from "../../store/database.js";
import { sqliteCode } from "../../store/sqlite-errors.js";
import { cachedStatement } from "../../store/statement-cache.js";
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

/** The accounts repository, implemented over SQLite (`UserStore`) and PostgreSQL (`PgUserStore`). */
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

/** The `users` repository on SQLite. Usernames are unique without regard to case. */
export class UserStore implements UserRepository {
  private readonly hashParams: ScryptParams;
  readonly #events: AuthEvents | undefined;

  constructor(
    private readonly db: Database,
    options: UserStoreOptions = {},
  ) {
    this.hashParams = options.hashParams ?? DEFAULT_SCRYPT_PARAMS;
    this.#events = options.events;
  }

  async count(): Promise<number> {
    return (cachedStatement(this.db, "SELECT count(*) AS n FROM users").get() as { n: number }).n;
  }

  async countRole(role: Role): Promise<number> {
    return (
      cachedStatement(this.db, "SELECT count(*) AS n FROM users WHERE role = ?").get(role) as { n: number }
    ).n;
  }

  async list(): Promise<UserRecord[]> {
    const rows = cachedStatement(
      this.db,
      "SELECT * FROM users ORDER BY username COLLATE NOCASE",
    ).all() as UserRow[];
    return rows.map(toUserRecord);
  }

  async get(id: string): Promise<UserRecord | undefined> {
    return this.#get(id);
  }

  #get(id: string): UserRecord | undefined {
    const row = cachedStatement(this.db, "SELECT * FROM users WHERE id = ?").get(id) as UserRow | undefined;
    return row ? toUserRecord(row) : undefined;
  }

  async create(input: { username: string; password: string; role: Role }): Promise<UserRecord> {
    const hash = await hashPassword(input.password, this.hashParams);
    const now = Date.now();
    const id = randomUUID();
    try {
      cachedStatement(
        this.db,
        "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
      ).run(id, input.username, hash, input.role, now, now);
    } catch (err) {
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_UNIQUE") throw usernameTaken(input.username);
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
    const created = this.db.transaction(() => {
      const result = cachedStatement(
        this.db,
        `INSERT INTO users (id, username, password_hash, role, created_at, updated_at)
           SELECT ?, ?, ?, 'owner', ?, ? WHERE NOT EXISTS (SELECT 1 FROM users)`,
      ).run(id, input.username, hash, now, now);
      if (result.changes === 0) return false;
      if (options.oneTimePassword) {
        cachedStatement(
          this.db,
          "INSERT OR REPLACE INTO server_settings (key, value_json, updated_at) VALUES (?, 'true', ?)",
        ).run(oneTimeKey(id), now);
      }
      return true;
    })();
    if (!created) return undefined;
    return { id, username: input.username, role: "owner", createdAt: now, updatedAt: now };
  }

  async hasOneTimePassword(id: string): Promise<boolean> {
    return (
      cachedStatement(this.db, "SELECT 1 FROM server_settings WHERE key = ?").get(oneTimeKey(id)) !==
      undefined
    );
  }

  async update(id: string, patch: { role?: Role; password?: string }): Promise<UserRecord | undefined> {
    const hash =
      patch.password === undefined ? undefined : await hashPassword(patch.password, this.hashParams);
    const now = Date.now();
    const [before, after] = this.db.transaction(() => {
      const previous = this.#get(id);
      cachedStatement(
        this.db,
        `UPDATE users SET role = coalesce(?, role), password_hash = coalesce(?, password_hash), updated_at = ?
           WHERE id = ?`,
      ).run(patch.role ?? null, hash ?? null, now, id);
      if (hash !== undefined)
        cachedStatement(this.db, "DELETE FROM server_settings WHERE key = ?").run(oneTimeKey(id));
      return [previous, this.#get(id)] as const;
    })();
    emitUserUpdate(this.#events, before, after, hash !== undefined);
    return after;
  }

  async delete(id: string): Promise<boolean> {
    const removed = this.db.transaction(() => {
      cachedStatement(this.db, "DELETE FROM server_settings WHERE key = ?").run(oneTimeKey(id));
      cachedStatement(this.db, "DELETE FROM server_settings WHERE key = ?").run(localeKey(id));
      cachedStatement(this.db, "DELETE FROM server_settings WHERE key LIKE ?").run(
        `${personCredentialPrefix(id)}%`,
      );
      return cachedStatement(this.db, "DELETE FROM users WHERE id = ?").run(id).changes > 0;
    })();
    if (removed) this.#events?.emit({ type: "user_deleted", userId: id });
    return removed;
  }

  async verifyLogin(username: string, password: string): Promise<UserRecord | undefined> {
    const row = cachedStatement(this.db, "SELECT * FROM users WHERE username = ?").get(username) as
      | UserRow
      | undefined;
    return checkLogin(row, password, this.hashParams);
  }

  async checkPassword(id: string, password: string): Promise<boolean> {
    const row = cachedStatement(this.db, "SELECT password_hash FROM users WHERE id = ?").get(id) as
      | Pick<UserRow, "password_hash">
      | undefined;
    if (!row) return verifyAgainstDummy(password, this.hashParams);
    return verifyPassword(password, row.password_hash);
  }

  async getLocale(id: string): Promise<string | undefined> {
    const row = cachedStatement(this.db, "SELECT value_json FROM server_settings WHERE key = ?").get(
      localeKey(id),
    ) as { value_json: string } | undefined;
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async setLocale(id: string, locale: string): Promise<void> {
    cachedStatement(
      this.db,
      "INSERT OR REPLACE INTO server_settings (key, value_json, updated_at) VALUES (?, ?, ?)",
    ).run(localeKey(id), JSON.stringify(locale), Date.now());
  }
}
