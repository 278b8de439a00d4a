/** Accounts: username, role and scrypt password hash, in the `users` table. */
import { randomUUID } from "node:crypto";
import { conflict } from "../../errors.js";
import type { Database } from "../../store/database.js";
import { sqliteCode } from "../../store/sqlite-errors.js";
import { cachedStatement } from "../../store/statement-cache.js";
import type { Actor } from "../../team/types.js";
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

interface UserRow {
  id: string;
  username: string;
  role: Role;
  password_hash: string;
  created_at: number;
  updated_at: number;
}

function toRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    username: row.username,
    role: row.role,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The `users` repository. Usernames are unique without regard to case. */
export class UserStore {
  private readonly hashParams: ScryptParams;
  readonly #events: AuthEvents | undefined;

  /**
   * `hashParams` sets the scrypt cost of new hashes (old hashes keep theirs); tests lower it.
   * `events` hears role changes, password changes and deletions (the WebSocket hub acts on them).
   */
  constructor(
    private readonly db: Database,
    options: { hashParams?: ScryptParams; events?: AuthEvents } = {},
  ) {
    this.hashParams = options.hashParams ?? DEFAULT_SCRYPT_PARAMS;
    this.#events = options.events;
  }

  /** How many accounts exist (0 means the server still needs its owner). */
  count(): number {
    return (cachedStatement(this.db, "SELECT count(*) AS n FROM users").get() as { n: number }).n;
  }

  /** How many accounts have a role (keeps the last owner from being removed). */
  countRole(role: Role): number {
    return (
      cachedStatement(this.db, "SELECT count(*) AS n FROM users WHERE role = ?").get(role) as { n: number }
    ).n;
  }

  /** Every account, by username. */
  list(): UserRecord[] {
    const rows = cachedStatement(
      this.db,
      "SELECT * FROM users ORDER BY username COLLATE NOCASE",
    ).all() as UserRow[];
    return rows.map(toRecord);
  }

  /** One account by id. */
  get(id: string): UserRecord | undefined {
    const row = cachedStatement(this.db, "SELECT * FROM users WHERE id = ?").get(id) as UserRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Creates an account; 409 when the username is taken. */
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
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_UNIQUE") {
        throw conflict(`the username "${input.username}" is taken; choose another`);
      }
      throw err;
    }
    return { id, username: input.username, role: input.role, createdAt: now, updatedAt: now };
  }

  /**
   * Creates the first account only while none exists, atomically: two racing setup requests
   * cannot both become owner. Undefined when an account already exists.
   */
  async createFirst(input: { username: string; password: string }): Promise<UserRecord | undefined> {
    const hash = await hashPassword(input.password, this.hashParams);
    const now = Date.now();
    const id = randomUUID();
    const result = cachedStatement(
      this.db,
      `INSERT INTO users (id, username, password_hash, role, created_at, updated_at)
         SELECT ?, ?, ?, 'owner', ?, ? WHERE NOT EXISTS (SELECT 1 FROM users)`,
    ).run(id, input.username, hash, now, now);
    if (result.changes === 0) return undefined;
    return { id, username: input.username, role: "owner", createdAt: now, updatedAt: now };
  }

  /** Changes role and/or password. */
  async update(id: string, patch: { role?: Role; password?: string }): Promise<UserRecord | undefined> {
    const hash =
      patch.password === undefined ? undefined : await hashPassword(patch.password, this.hashParams);
    const now = Date.now();
    const before = this.get(id);
    cachedStatement(
      this.db,
      `UPDATE users SET role = coalesce(?, role), password_hash = coalesce(?, password_hash), updated_at = ?
         WHERE id = ?`,
    ).run(patch.role ?? null, hash ?? null, now, id);
    const after = this.get(id);
    if (before && after && after.role !== before.role) {
      this.#events?.emit({ type: "role_changed", userId: id, role: after.role, previousRole: before.role });
    }
    if (after && hash !== undefined) this.#events?.emit({ type: "password_changed", userId: id });
    return after;
  }

  /** Deletes an account; its sessions and API tokens go with it (foreign keys cascade). */
  delete(id: string): boolean {
    const removed = cachedStatement(this.db, "DELETE FROM users WHERE id = ?").run(id).changes > 0;
    if (removed) this.#events?.emit({ type: "user_deleted", userId: id });
    return removed;
  }

  /**
   * Checks a username and password. Unknown usernames cost the same scrypt work as known ones,
   * so timing does not reveal which accounts exist.
   */
  async verifyLogin(username: string, password: string): Promise<UserRecord | undefined> {
    const row = cachedStatement(this.db, "SELECT * FROM users WHERE username = ?").get(username) as
      | UserRow
      | undefined;
    if (!row) {
      await verifyAgainstDummy(password, this.hashParams);
      return undefined;
    }
    return (await verifyPassword(password, row.password_hash)) ? toRecord(row) : undefined;
  }

  /** Checks the password of a known account (password change, re-authentication). */
  async checkPassword(id: string, password: string): Promise<boolean> {
    const row = cachedStatement(this.db, "SELECT password_hash FROM users WHERE id = ?").get(id) as
      | Pick<UserRow, "password_hash">
      | undefined;
    if (!row) return verifyAgainstDummy(password, this.hashParams);
    return verifyPassword(password, row.password_hash);
  }
}
