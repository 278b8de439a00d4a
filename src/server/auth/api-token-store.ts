/**
 * Personal API tokens for the OpenAI-compatible endpoint: `dsk_` + 32 random bytes, shown once at
 * creation, stored as SHA-256, with a short preview and the time of last use.
 */

import { conflict } from "../../errors.js";
import type { Database } from "../../store/database.js";
import { cachedStatement } from "../../store/statement-cache.js";
import type { Actor } from "../../team/types.js";
import { hashToken, randomId, randomToken } from "./secrets.js";
import type { Role, UserRecord } from "./user-store.js";

export const API_TOKEN_PREFIX = "dsk_";
const MAX_TOKENS_PER_USER = 50;
/** Last use is recorded at most this often per token, so busy clients do not write on every call. */
const LAST_USED_GRANULARITY_MS = 60 * 1000;

export interface ApiTokenRecord {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | undefined;
  preview: string;
}

interface TokenRow {
  id: string;
  user_id: string;
  name: string;
  preview: string;
  created_at: number;
  last_used_at: number | null;
}

function toRecord(row: TokenRow): ApiTokenRecord {
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

/** The `api_tokens` repository. */
export class ApiTokenStore {
  constructor(private readonly db: Database) {}

  /** A user's tokens (without secrets), newest first. */
  list(userId: string): ApiTokenRecord[] {
    const rows = cachedStatement(
      this.db,
      "SELECT * FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC, id",
    ).all(userId) as TokenRow[];
    return rows.map(toRecord);
  }

  /** Issues a token; the secret is in the result and nowhere else. */
  create(userId: string, name: string): ApiTokenRecord & { token: string } {
    const count = (
      cachedStatement(this.db, "SELECT count(*) AS n FROM api_tokens WHERE user_id = ?").get(userId) as {
        n: number;
      }
    ).n;
    if (count >= MAX_TOKENS_PER_USER) {
      throw conflict(`you already have ${MAX_TOKENS_PER_USER} API tokens; delete unused ones first`);
    }
    const token = API_TOKEN_PREFIX + randomToken();
    const row: TokenRow = {
      id: randomId("tok"),
      user_id: userId,
      name,
      preview: `${API_TOKEN_PREFIX}…${token.slice(-4)}`,
      created_at: Date.now(),
      last_used_at: null,
    };
    cachedStatement(
      this.db,

      "INSERT INTO api_tokens (id, user_id, name, token_hash, preview, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).run(row.id, userId, name, hashToken(token), row.preview, row.created_at);
    return { ...toRecord(row), token };
  }

  /** Deletes one of a user's tokens; false when it is not theirs. */
  delete(userId: string, id: string): boolean {
    return (
      cachedStatement(this.db, "DELETE FROM api_tokens WHERE id = ? AND user_id = ?").run(id, userId)
        .changes > 0
    );
  }

  /** The account behind a token (or `Bearer <token>` header value), recording its use. */
  authenticate(bearer: string | undefined): { actor: Actor; user: UserRecord } | undefined {
    const token = bearerValue(bearer);
    if (!token?.startsWith(API_TOKEN_PREFIX) || token.length > 200) return undefined;
    const row = cachedStatement(
      this.db,

      `SELECT t.id, t.last_used_at, u.id AS user_id, u.username, u.role, u.created_at, u.updated_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?`,
    ).get(hashToken(token)) as
      | {
          id: string;
          last_used_at: number | null;
          user_id: string;
          username: string;
          role: Role;
          created_at: number;
          updated_at: number;
        }
      | undefined;
    if (!row) return undefined;
    const now = Date.now();
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_GRANULARITY_MS) {
      cachedStatement(this.db, "UPDATE api_tokens SET last_used_at = ? WHERE id = ?").run(now, row.id);
    }
    const user: UserRecord = {
      id: row.user_id,
      username: row.username,
      role: row.role,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
    return { actor: { userId: user.id, role: user.role }, user };
  }
}
