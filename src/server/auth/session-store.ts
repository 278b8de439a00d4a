/**
 * Login sessions: the client holds a random token, we store only its SHA-256. Sessions expire after a
 * sliding idle window (default 14 days since last use) and can be revoked one by one or all at once.
 */
import type { Database } from "../../store/database.js";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { postgresDatabase, type SqlDatabase, sql, sqliteDatabase } from "../../store/sql-database.js";
import type { AuthEvents, SessionEndReason } from "./auth-events.js";
import { hashToken, randomId, randomToken } from "./secrets.js";
import type { Role, UserRecord } from "./user-store.js";

export const DEFAULT_SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
/** Sliding expiry is written at most this often per session, not on every request. */
export const TOUCH_INTERVAL_MS = 60 * 1000;

export interface SessionRecord {
  id: string;
  userId: string;
  csrfToken: string;
  userAgent: string | undefined;
  ip: string | undefined;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
}

export interface SessionRow {
  id: string;
  user_id: string;
  csrf_token: string;
  user_agent: string | null;
  ip: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export interface JoinedSessionRow extends SessionRow {
  username: string;
  role: Role;
  user_created_at: number;
  user_updated_at: number;
}

export function toSessionRecord(row: SessionRow): SessionRecord {
  return {
    id: row.id,
    userId: row.user_id,
    csrfToken: row.csrf_token,
    userAgent: row.user_agent ?? undefined,
    ip: row.ip ?? undefined,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    expiresAt: row.expires_at,
  };
}

export interface SessionAuth {
  session: SessionRecord;
  user: UserRecord;
  /** The expiry moved forward on this request (time to refresh the cookie's Max-Age). */
  refreshed: boolean;
}

/**
 * The login sessions repository, implemented over SQLite (`SessionStore`) and PostgreSQL
 * (`PgSessionStore`). Every authenticated request and WebSocket handshake calls `authenticate`, and
 * every heartbeat `isActive`: neither caches, so a revocation on any instance applies at once.
 */
export interface LoginSessionRepository {
  /** The idle window after which an unused session expires. */
  readonly ttlMs: number;
  /** Starts a session (and sweeps expired ones); the token is returned once and never stored. */
  create(
    userId: string,
    meta?: { userAgent?: string; ip?: string },
  ): Promise<{ token: string; session: SessionRecord }>;
  /** The live session and account for a token, sliding its expiry; undefined if unknown or expired. */
  authenticate(token: string): Promise<SessionAuth | undefined>;
  /** Whether a session still exists and has not expired (long-lived WebSockets re-check this). */
  isActive(id: string): Promise<boolean>;
  /** A user's unexpired sessions, most recently used first. */
  listForUser(userId: string): Promise<SessionRecord[]>;
  /** Revokes one of a user's sessions; false when it is not theirs or does not exist. */
  revoke(userId: string, id: string, reason?: SessionEndReason): Promise<boolean>;
  /** Revokes every session of a user, optionally keeping one (the caller's own); how many ended. */
  revokeAll(userId: string, exceptId?: string, reason?: SessionEndReason): Promise<number>;
}

export interface SessionStoreOptions {
  ttlMs?: number;
  /** Hears every revocation (the WebSocket hub closes the sockets of ended sessions). */
  events?: AuthEvents;
}

/** A new session's record and token (the caller stores it). */
export function newSession(
  userId: string,
  meta: { userAgent?: string; ip?: string },
  ttlMs: number,
  now: number,
): { token: string; session: SessionRecord } {
  return {
    token: randomToken(),
    session: {
      id: randomId("ses"),
      userId,
      csrfToken: randomToken(),
      userAgent: meta.userAgent?.slice(0, 300),
      ip: meta.ip,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + ttlMs,
    },
  };
}

/** The row's session and account; slides `row`'s expiry in place when it is time (`refreshed`). */
export function slideSession(row: JoinedSessionRow, ttlMs: number, now: number): SessionAuth {
  let refreshed = false;
  if (now - row.last_seen_at >= TOUCH_INTERVAL_MS) {
    row.last_seen_at = now;
    row.expires_at = now + ttlMs;
    refreshed = true;
  }
  const user: UserRecord = {
    id: row.user_id,
    username: row.username,
    role: row.role,
    createdAt: row.user_created_at,
    updatedAt: row.user_updated_at,
  };
  return { session: toSessionRecord(row), user, refreshed };
}

/** Whether a token could be one of ours at all (not worth hashing otherwise). */
export function plausibleToken(token: string): boolean {
  return token.length > 0 && token.length <= 200;
}

const SQL = {
  sweep: sql("DELETE FROM auth_sessions WHERE expires_at <= ?"),
  insert:
    sql(`INSERT INTO auth_sessions (id, user_id, token_hash, csrf_token, user_agent, ip, created_at, last_seen_at, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`),
  byToken:
    sql(`SELECT s.*, u.username, u.role, u.created_at AS user_created_at, u.updated_at AS user_updated_at
      FROM auth_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`),
  // Only forward: a concurrent request on another instance may have slid it further already.
  slide: sql("UPDATE auth_sessions SET last_seen_at = $1, expires_at = $2 WHERE id = $3 AND expires_at < $2"),
  expiry: sql("SELECT expires_at FROM auth_sessions WHERE id = ?"),
  listForUser: sql(
    "SELECT * FROM auth_sessions WHERE user_id = ? AND expires_at > ? ORDER BY last_seen_at DESC, id",
  ),
  revoke: sql("DELETE FROM auth_sessions WHERE id = ? AND user_id = ?"),
  revokeAll: sql("DELETE FROM auth_sessions WHERE user_id = ? AND id <> ? RETURNING id"),
} as const;

const SAVE = "save a login session in";
const READ = "read login sessions from";

/**
 * The `auth_sessions` repository, one logic over either database. Nothing is cached in the process:
 * `authenticate` and `isActive` read the row each time (one indexed lookup), so a session revoked
 * on one instance is refused by every other instance on its next request or heartbeat.
 */
export class LoginSessions implements LoginSessionRepository {
  readonly ttlMs: number;
  readonly #events: AuthEvents | undefined;

  constructor(
    private readonly db: SqlDatabase,
    options: SessionStoreOptions = {},
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.#events = options.events;
  }

  async create(
    userId: string,
    meta: { userAgent?: string; ip?: string } = {},
  ): Promise<{ token: string; session: SessionRecord }> {
    const now = Date.now();
    await this.db.run(SAVE, SQL.sweep, [now]);
    const created = newSession(userId, meta, this.ttlMs, now);
    const { session } = created;
    await this.db.run(SAVE, SQL.insert, [
      session.id,
      userId,
      hashToken(created.token),
      session.csrfToken,
      session.userAgent ?? null,
      session.ip ?? null,
      now,
      session.expiresAt,
    ]);
    return created;
  }

  async authenticate(token: string): Promise<SessionAuth | undefined> {
    if (!plausibleToken(token)) return undefined;
    const row = await this.db.one<JoinedSessionRow>(READ, SQL.byToken, [hashToken(token)]);
    const now = Date.now();
    if (!row || row.expires_at <= now) return undefined;
    const auth = slideSession(row, this.ttlMs, now);
    if (auth.refreshed) await this.db.run(SAVE, SQL.slide, [now, row.expires_at, row.id]);
    return auth;
  }

  async isActive(id: string): Promise<boolean> {
    const row = await this.db.one<{ expires_at: number }>(READ, SQL.expiry, [id]);
    return row !== undefined && row.expires_at > Date.now();
  }

  async listForUser(userId: string): Promise<SessionRecord[]> {
    return (await this.db.many<SessionRow>(READ, SQL.listForUser, [userId, Date.now()])).map(toSessionRecord);
  }

  async revoke(userId: string, id: string, reason: SessionEndReason = "revoked"): Promise<boolean> {
    const removed = (await this.db.run(SAVE, SQL.revoke, [id, userId])) > 0;
    if (removed) this.#events?.emit({ type: "sessions_ended", userId, sessionIds: [id], reason });
    return removed;
  }

  async revokeAll(userId: string, exceptId?: string, reason: SessionEndReason = "revoked"): Promise<number> {
    const rows = await this.db.many<{ id: string }>(SAVE, SQL.revokeAll, [userId, exceptId ?? ""]);
    if (rows.length > 0) {
      this.#events?.emit({ type: "sessions_ended", userId, sessionIds: rows.map((r) => r.id), reason });
    }
    return rows.length;
  }
}

/** The login sessions in the SQLite file. */
export class SessionStore extends LoginSessions {
  constructor(db: Database, options: SessionStoreOptions = {}) {
    super(sqliteDatabase(db), options);
  }
}

/** The login sessions in PostgreSQL, shared by every instance on that database. */
export class PgSessionStore extends LoginSessions {
  constructor(db: PgDatabase, options: SessionStoreOptions = {}) {
    super(postgresDatabase(db), options);
  }
}

/** The login sessions repository over a PostgreSQL database. */
export function createPostgresSessionStore(
  db: PgDatabase,
  options: SessionStoreOptions = {},
): PgSessionStore {
  return new PgSessionStore(db, options);
}
