/**
 * Personal API tokens for the OpenAI-compatible endpoint: `dsk_` + 32 random bytes, shown once at
 * creation, stored as SHA-256, with a short preview and the time of last use.
 */
import { conflict } from "../../errors.js";
import type { Database } from "../../store/database.js";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import {
  one,
  postgresDatabase,
  run,
  type SqlDatabase,
  sql,
  sqliteDatabase,
} from "../../store/sql-database.js";
import type { Actor } from "../../team/types.js";
import { hashToken, randomId, randomToken } from "./secrets.js";
import type { Role, UserRecord } from "./user-store.js";

export const API_TOKEN_PREFIX = "dsk_";
export const MAX_TOKENS_PER_USER = 50;
/** Last use is recorded at most this often per token, so busy clients do not write on every call. */
const LAST_USED_GRANULARITY_MS = 60 * 1000;

export interface ApiTokenRecord {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | undefined;
  preview: string;
}

export interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  preview: string;
  created_at: number;
  last_used_at: number | null;
}

export function toTokenRecord(row: TokenRow): ApiTokenRecord {
  return {
    id: row.id,
    name: row.name,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at ?? undefined,
    preview: row.preview,
  };
}

/** Strips an optional `Bearer ` scheme from an Authorization header value. */
export function bearerValue(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : header.includes(" ") ? undefined : header;
}

/** The API tokens repository (`ApiTokens`, over SQLite or PostgreSQL). */
export interface ApiTokenRepository {
  /** A user's tokens (without secrets), newest first. */
  list(userId: string): Promise<ApiTokenRecord[]>;
  /** Issues a token; the secret is in the result and nowhere else. A `conflict` error past the limit. */
  create(userId: string, name: string): Promise<ApiTokenRecord & { token: string }>;
  /** Deletes one of a user's tokens; false when it is not theirs. */
  delete(userId: string, id: string): Promise<boolean>;
  /** The account behind a token (or `Bearer <token>` header value), recording its use. */
  authenticate(bearer: string | undefined): Promise<{ actor: Actor; user: UserRecord } | undefined>;
}

export function tooManyTokens(): Error {
  return conflict(`you already have ${MAX_TOKENS_PER_USER} API tokens; delete unused ones first`);
}

/** A new token and the row to store for it (`token_hash` is the caller's to write). */
export function newApiToken(userId: string, name: string, now: number): { token: string; row: TokenRow } {
  const token = API_TOKEN_PREFIX + randomToken();
  return {
    token,
    row: {
      id: randomId("tok"),
      user_id: userId,
      name,
      preview: `${API_TOKEN_PREFIX}…${token.slice(-4)}`,
      created_at: now,
      last_used_at: null,
    },
  };
}

/** The token in a header value when it can be one of ours at all. */
export function apiTokenOf(bearer: string | undefined): string | undefined {
  const token = bearerValue(bearer);
  return token?.startsWith(API_TOKEN_PREFIX) && token.length <= 200 ? token : undefined;
}

export interface TokenUserRow {
  id: string;
  last_used_at: number | null;
  user_id: string;
  username: string;
  role: Role;
  created_at: number;
  updated_at: number;
}

/** Whether the use of a token is worth writing down now. */
export function dueForLastUsed(row: TokenUserRow, now: number): boolean {
  return row.last_used_at === null || now - row.last_used_at >= LAST_USED_GRANULARITY_MS;
}

export function tokenAuthOf(row: TokenUserRow): { actor: Actor; user: UserRecord } {
  const user: UserRecord = {
    id: row.user_id,
    username: row.username,
    role: row.role,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  return { actor: { userId: user.id, role: user.role }, user };
}

const SQL = {
  list: sql("SELECT * FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC, id"),
  // PostgreSQL: the account's row lock serialises token creation per person across instances, so the
  // count cannot be raced past the limit (SQLite's transaction already holds the only write lock).
  lockUser: sql({
    sqlite: "SELECT 1 FROM users WHERE id = ?",
    postgres: "SELECT 1 FROM users WHERE id = ? FOR UPDATE",
  }),
  count: sql({
    sqlite: "SELECT count(*) AS n FROM api_tokens WHERE user_id = ?",
    postgres: "SELECT count(*)::int AS n FROM api_tokens WHERE user_id = ?",
  }),
  insert: sql(
    "INSERT INTO api_tokens (id, user_id, name, token_hash, preview, created_at) VALUES (?, ?, ?, ?, ?, ?)",
  ),
  delete: sql("DELETE FROM api_tokens WHERE id = ? AND user_id = ?"),
  byHash: sql(`SELECT t.id, t.last_used_at, u.id AS user_id, u.username, u.role, u.created_at, u.updated_at
      FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?`),
  used: sql("UPDATE api_tokens SET last_used_at = ? WHERE id = ?"),
} as const;

const SAVE = "save an API token in";
const READ = "read API tokens from";

/**
 * The `api_tokens` repository, one logic over either database; like login sessions, looked up on
 * every use (no cache), so a deleted token stops at once.
 */
export class ApiTokens implements ApiTokenRepository {
  constructor(private readonly db: SqlDatabase) {}

  async list(userId: string): Promise<ApiTokenRecord[]> {
    return (await this.db.many<TokenRow>(READ, SQL.list, [userId])).map(toTokenRecord);
  }

  async create(userId: string, name: string): Promise<ApiTokenRecord & { token: string }> {
    const { token, row } = newApiToken(userId, name, Date.now());
    await this.db.transaction(SAVE, function* () {
      yield* run(SQL.lockUser, [userId]);
      const count = (yield* one<{ n: number }>(SQL.count, [userId]))?.n ?? 0;
      if (count >= MAX_TOKENS_PER_USER) throw tooManyTokens();
      yield* run(SQL.insert, [row.id, userId, name, hashToken(token), row.preview, row.created_at]);
    });
    return { ...toTokenRecord(row), token };
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.delete, [id, userId])) > 0;
  }

  async authenticate(bearer: string | undefined): Promise<{ actor: Actor; user: UserRecord } | undefined> {
    const token = apiTokenOf(bearer);
    if (token === undefined) return undefined;
    const row = await this.db.one<TokenUserRow>(READ, SQL.byHash, [hashToken(token)]);
    if (!row) return undefined;
    const now = Date.now();
    if (dueForLastUsed(row, now)) await this.db.run(SAVE, SQL.used, [now, row.id]);
    return tokenAuthOf(row);
  }
}

/** The API tokens in the SQLite file. */
export class ApiTokenStore extends ApiTokens {
  constructor(db: Database) {
    super(sqliteDatabase(db));
  }
}

/** The API tokens in PostgreSQL. */
export class PgApiTokenStore extends ApiTokens {
  constructor(db: PgDatabase) {
    super(postgresDatabase(db));
  }
}

/** The API tokens repository over a PostgreSQL database. */
export function createPostgresApiTokenStore(db: PgDatabase): PgApiTokenStore {
  return new PgApiTokenStore(db);
}
