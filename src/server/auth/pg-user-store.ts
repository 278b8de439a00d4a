/** The `users` repository on PostgreSQL (several server instances share it). */
import { randomUUID } from "node:crypto";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { personCredentialPrefix } from "../settings/mcp-credential-store.js";
import type { AuthEvents } from "./auth-events.js";
import {
  DEFAULT_SCRYPT_PARAMS,
  hashPassword,
  type ScryptParams,
  verifyAgainstDummy,
  verifyPassword,
} from "./passwords.js";
import {
  checkLogin,
  emitUserUpdate,
  localeKey,
  oneTimeKey,
  type Role,
  toUserRecord,
  type UserRecord,
  type UserRepository,
  type UserRow,
  type UserStoreOptions,
  usernameTaken,
} from "./user-store.js";

// Any fixed 64-bit number: held while the first account is created, so only one instance creates it.
const FIRST_ACCOUNT_LOCK = 7_412_226_002;

/** Whether a (wrapped) driver error is a unique-constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if ("code" in e && e.code === "23505") return true;
  }
  return false;
}

export class PgUserStore implements UserRepository {
  private readonly hashParams: ScryptParams;
  readonly #events: AuthEvents | undefined;

  constructor(
    private readonly db: PgDatabase,
    options: UserStoreOptions = {},
  ) {
    this.hashParams = options.hashParams ?? DEFAULT_SCRYPT_PARAMS;
    this.#events = options.events;
  }

  async count(): Promise<number> {
    return (await this.db.one<{ n: number }>("SELECT count(*) AS n FROM users"))?.n ?? 0;
  }

  async countRole(role: Role): Promise<number> {
    return (
      (await this.db.one<{ n: number }>("SELECT count(*) AS n FROM users WHERE role = $1", [role]))?.n ?? 0
    );
  }

  async list(): Promise<UserRecord[]> {
    const rows = await this.db.many<UserRow>("SELECT * FROM users ORDER BY lower(username), username");
    return rows.map(toUserRecord);
  }

  async get(id: string): Promise<UserRecord | undefined> {
    const row = await this.db.one<UserRow>("SELECT * FROM users WHERE id = $1", [id]);
    return row ? toUserRecord(row) : undefined;
  }

  async create(input: { username: string; password: string; role: Role }): Promise<UserRecord> {
    const hash = await hashPassword(input.password, this.hashParams);
    const now = Date.now();
    const id = randomUUID();
    try {
      await this.db.run(
        "INSERT INTO users (id, username, password_hash, role, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)",
        [id, input.username, hash, input.role, now],
      );
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
    // NOT EXISTS alone is no guard under READ COMMITTED: two instances would both see no account.
    const created = await this.db.transaction(async (tx) => {
      await tx.run("SELECT pg_advisory_xact_lock($1)", [FIRST_ACCOUNT_LOCK]);
      const inserted = await tx.run(
        `INSERT INTO users (id, username, password_hash, role, created_at, updated_at)
           SELECT $1, $2, $3, 'owner', $4, $4 WHERE NOT EXISTS (SELECT 1 FROM users)`,
        [id, input.username, hash, now],
      );
      if (inserted === 0) return false;
      if (options.oneTimePassword) {
        await tx.run(
          `INSERT INTO server_settings (key, value_json, updated_at) VALUES ($1, 'true', $2)
             ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
          [oneTimeKey(id), now],
        );
      }
      return true;
    });
    if (!created) return undefined;
    return { id, username: input.username, role: "owner", createdAt: now, updatedAt: now };
  }

  async hasOneTimePassword(id: string): Promise<boolean> {
    return (
      (await this.db.one("SELECT 1 AS one FROM server_settings WHERE key = $1", [oneTimeKey(id)])) !==
      undefined
    );
  }

  async update(id: string, patch: { role?: Role; password?: string }): Promise<UserRecord | undefined> {
    const hash =
      patch.password === undefined ? undefined : await hashPassword(patch.password, this.hashParams);
    const now = Date.now();
    const [before, after] = await this.db.transaction(async (tx) => {
      // Locked, so the role reported as the previous one is the one this update replaced.
      const previous = await tx.one<UserRow>("SELECT * FROM users WHERE id = $1 FOR UPDATE", [id]);
      if (!previous) return [undefined, undefined] as const;
      const updated = await tx.one<UserRow>(
        `UPDATE users SET role = coalesce($1, role), password_hash = coalesce($2, password_hash), updated_at = $3
           WHERE id = $4 RETURNING *`,
        [patch.role ?? null, hash ?? null, now, id],
      );
      if (hash !== undefined) await tx.run("DELETE FROM server_settings WHERE key = $1", [oneTimeKey(id)]);
      return [toUserRecord(previous), updated ? toUserRecord(updated) : undefined] as const;
    });
    emitUserUpdate(this.#events, before, after, hash !== undefined);
    return after;
  }

  async delete(id: string): Promise<boolean> {
    const removed = await this.db.transaction(async (tx) => {
      await tx.run("DELETE FROM server_settings WHERE key = $1 OR key = $2 OR starts_with(key, $3)", [
        oneTimeKey(id),
        localeKey(id),
        personCredentialPrefix(id),
      ]);
      return (await tx.run("DELETE FROM users WHERE id = $1", [id])) > 0;
    });
    if (removed) this.#events?.emit({ type: "user_deleted", userId: id });
    return removed;
  }

  async verifyLogin(username: string, password: string): Promise<UserRecord | undefined> {
    const row = await this.db.one<UserRow>("SELECT * FROM users WHERE lower(username) = lower($1)", [
      username,
    ]);
    return checkLogin(row, password, this.hashParams);
  }

  async checkPassword(id: string, password: string): Promise<boolean> {
    const row = await this.db.one<Pick<UserRow, "password_hash">>(
      "SELECT password_hash FROM users WHERE id = $1",
      [id],
    );
    if (!row) return verifyAgainstDummy(password, this.hashParams);
    return verifyPassword(password, row.password_hash);
  }

  async getLocale(id: string): Promise<string | undefined> {
    const row = await this.db.one<{ value_json: string }>(
      "SELECT value_json FROM server_settings WHERE key = $1",
      [localeKey(id)],
    );
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async setLocale(id: string, locale: string): Promise<void> {
    await this.db.run(
      `INSERT INTO server_settings (key, value_json, updated_at) VALUES ($1, $2, $3)
         ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
      [localeKey(id), JSON.stringify(locale), Date.now()],
    );
  }
}

/** The accounts repository over a PostgreSQL database. */
export function createPostgresUserStore(db: PgDatabase, options: UserStoreOptions = {}): PgUserStore {
  return new PgUserStore(db, options);
}
