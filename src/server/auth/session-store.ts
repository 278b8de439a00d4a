/**
 * Login sessions: the client holds a random token, we store only its SHA-256. Sessions expire after a
 * sliding idle window (default 14 days since last use) and can be revoked one by one or all at once.
 */
import type { Database } from "../../store/database.js";
import { cachedStatement } from "../../store/statement-cache.js";

type Statement = ReturnType<Database["prepare"]>;

import type { AuthEvents, SessionEndReason } from "./auth-events.js";
import { hashToken, randomId, randomToken } from "./secrets.js";
import type { Role, UserRecord } from "./user-store.js";

export const DEFAULT_SESSION_TTL_MS = 14 * 24 * 60 * 60 * 1000;
/** Sliding expiry is written at most this often per session, not on every request. */
const TOUCH_INTERVAL_MS = 60 * 1000;

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

interface SessionRow {
  id: string;
  user_id: string;
  csrf_token: string;
  user_agent: string | null;
  ip: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

interface JoinedRow extends SessionRow {
  username: string;
  role: Role;
  user_created_at: number;
  user_updated_at: number;
}

function toRecord(row: SessionRow): SessionRecord {
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

/** The `auth_sessions` repository. */
export class SessionStore {
  readonly ttlMs: number;
  #byToken: Statement | undefined;
  readonly #events: AuthEvents | undefined;

  /** `events` hears every revocation (the WebSocket hub closes the sockets of ended sessions). */
  constructor(
    private readonly db: Database,
    options: { ttlMs?: number; events?: AuthEvents } = {},
  ) {
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.#events = options.events;
  }

  /** Starts a session; the token is returned once and never stored. */
  create(
    userId: string,
    meta: { userAgent?: string; ip?: string } = {},
  ): { token: string; session: SessionRecord } {
    const now = Date.now();
    cachedStatement(this.db, "DELETE FROM auth_sessions WHERE expires_at <= ?").run(now);
    const token = randomToken();
    const session: SessionRecord = {
      id: randomId("ses"),
      userId,
      csrfToken: randomToken(),
      userAgent: meta.userAgent?.slice(0, 300),
      ip: meta.ip,
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + this.ttlMs,
    };
    cachedStatement(
      this.db,
      `INSERT INTO auth_sessions (id, user_id, token_hash, csrf_token, user_agent, ip, created_at, last_seen_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      session.id,
      userId,
      hashToken(token),
      session.csrfToken,
      session.userAgent ?? null,
      session.ip ?? null,
      now,
      now,
      session.expiresAt,
    );
    return { token, session };
  }

  /** The live session and account for a token, sliding its expiry; undefined if unknown or expired. */
  authenticate(token: string): SessionAuth | undefined {
    if (!token || token.length > 200) return undefined;
    // Every authenticated request runs this: prepare the statement once per store.
    this.#byToken ??= cachedStatement(
      this.db,
      `SELECT s.*, u.username, u.role, u.created_at AS user_created_at, u.updated_at AS user_updated_at
       FROM auth_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`,
    );
    const row = this.#byToken.get(hashToken(token)) as JoinedRow | undefined;
    const now = Date.now();
    if (!row || row.expires_at <= now) return undefined;
    let refreshed = false;
    if (now - row.last_seen_at >= TOUCH_INTERVAL_MS) {
      row.last_seen_at = now;
      row.expires_at = now + this.ttlMs;
      cachedStatement(this.db, "UPDATE auth_sessions SET last_seen_at = ?, expires_at = ? WHERE id = ?").run(
        now,
        row.expires_at,
        row.id,
      );
      refreshed = true;
    }
    const user: UserRecord = {
      id: row.user_id,
      username: row.username,
      role: row.role,
      createdAt: row.user_created_at,
      updatedAt: row.user_updated_at,
    };
    return { session: toRecord(row), user, refreshed };
  }

  /** Whether a session still exists and has not expired (long-lived WebSockets re-check this). */
  isActive(id: string): boolean {
    const row = cachedStatement(this.db, "SELECT expires_at FROM auth_sessions WHERE id = ?").get(id) as
      | { expires_at: number }
      | undefined;
    return row !== undefined && row.expires_at > Date.now();
  }

  /** A user's unexpired sessions, most recently used first. */
  listForUser(userId: string): SessionRecord[] {
    const rows = cachedStatement(
      this.db,
      "SELECT * FROM auth_sessions WHERE user_id = ? AND expires_at > ? ORDER BY last_seen_at DESC",
    ).all(userId, Date.now()) as SessionRow[];
    return rows.map(toRecord);
  }

  /** Revokes one of a user's sessions; false when it is not theirs or does not exist. */
  revoke(userId: string, id: string, reason: SessionEndReason = "revoked"): boolean {
    const removed =
      cachedStatement(this.db, "DELETE FROM auth_sessions WHERE id = ? AND user_id = ?").run(id, userId)
        .changes > 0;
    if (removed) this.#events?.emit({ type: "sessions_ended", userId, sessionIds: [id], reason });
    return removed;
  }

  /** Revokes every session of a user, optionally keeping one (the caller's own). */
  revokeAll(userId: string, exceptId?: string, reason: SessionEndReason = "revoked"): number {
    const rows = cachedStatement(
      this.db,
      "DELETE FROM auth_sessions WHERE user_id = ? AND id <> ? RETURNING id",
    ).all(userId, exceptId ?? "") as Array<{ id: string }>;
    if (rows.length > 0) {
      this.#events?.emit({ type: "sessions_ended", userId, sessionIds: rows.map((r) => r.id), reason });
    }
    return rows.length;
  }
}
