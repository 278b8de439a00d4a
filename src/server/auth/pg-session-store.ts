/**
 * Login sessions on PostgreSQL. Nothing is cached in the process: `authenticate` and `isActive` read
 * the row each time (one indexed lookup), so a session revoked on one instance is refused by every
 * other instance on its next request or heartbeat.
 */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import type { AuthEvents, SessionEndReason } from "./auth-events.js";
import { hashToken } from "./secrets.js";
import {
  DEFAULT_SESSION_TTL_MS,
  type JoinedSessionRow,
  type LoginSessionRepository,
  newSession,
  plausibleToken,
  type SessionAuth,
  type SessionRecord,
  type SessionRow,
  type SessionStoreOptions,
  slideSession,
  toSessionRecord,
} from "./session-store.js";

export class PgSessionStore implements LoginSessionRepository {
  readonly ttlMs: number;
  readonly #events: AuthEvents | undefined;

  constructor(
    private readonly db: PgDatabase,
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
    await this.db.run("DELETE FROM auth_sessions WHERE expires_at <= $1", [now]);
    const created = newSession(userId, meta, this.ttlMs, now);
    const { session } = created;
    await this.db.run(
      `INSERT INTO auth_sessions (id, user_id, token_hash, csrf_token, user_agent, ip, created_at, last_seen_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8)`,
      [
        session.id,
        userId,
        hashToken(created.token),
        session.csrfToken,
        session.userAgent ?? null,
        session.ip ?? null,
        now,
        session.expiresAt,
      ],
    );
    return created;
  }

  async authenticate(token: string): Promise<SessionAuth | undefined> {
    if (!plausibleToken(token)) return undefined;
    const row = await this.db.one<JoinedSessionRow>(
      `SELECT s.*, u.username, u.role, u.created_at AS user_created_at, u.updated_at AS user_updated_at
       FROM auth_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`,
      [hashToken(token)],
    );
    const now = Date.now();
    if (!row || row.expires_at <= now) return undefined;
    const auth = slideSession(row, this.ttlMs, now);
    if (auth.refreshed) {
      // Only forward: a concurrent request on another instance may have slid it further already.
      await this.db.run(
        "UPDATE auth_sessions SET last_seen_at = $1, expires_at = $2 WHERE id = $3 AND expires_at < $2",
        [now, row.expires_at, row.id],
      );
    }
    return auth;
  }

  async isActive(id: string): Promise<boolean> {
    const row = await this.db.one<{ expires_at: number }>(
      "SELECT expires_at FROM auth_sessions WHERE id = $1",
      [id],
    );
    return row !== undefined && row.expires_at > Date.now();
  }

  async listForUser(userId: string): Promise<SessionRecord[]> {
    const rows = await this.db.many<SessionRow>(
      "SELECT * FROM auth_sessions WHERE user_id = $1 AND expires_at > $2 ORDER BY last_seen_at DESC, id",
      [userId, Date.now()],
    );
    return rows.map(toSessionRecord);
  }

  async revoke(userId: string, id: string, reason: SessionEndReason = "revoked"): Promise<boolean> {
    const removed =
      (await this.db.run("DELETE FROM auth_sessions WHERE id = $1 AND user_id = $2", [id, userId])) > 0;
    if (removed) this.#events?.emit({ type: "sessions_ended", userId, sessionIds: [id], reason });
    return removed;
  }

  async revokeAll(userId: string, exceptId?: string, reason: SessionEndReason = "revoked"): Promise<number> {
    const rows = await this.db.many<{ id: string }>(
      "DELETE FROM auth_sessions WHERE user_id = $1 AND id <> $2 RETURNING id",
      [userId, exceptId ?? ""],
    );
    if (rows.length > 0) {
      this.#events?.emit({ type: "sessions_ended", userId, sessionIds: rows.map((r) => r.id), reason });
    }
    return rows.length;
  }
}

/** The login sessions repository over a PostgreSQL database. */
export function createPostgresSessionStore(
  db: PgDatabase,
  options: SessionStoreOptions = {},
): PgSessionStore {
  return new PgSessionStore(db, options);
}
