/** API tokens on PostgreSQL; like login sessions, looked up on every use (no cache), so a deleted token stops at once. */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import type { Actor } from "../../team/types.js";
import {
  type ApiTokenRecord,
  type ApiTokenRepository,
  apiTokenOf,
  dueForLastUsed,
  MAX_TOKENS_PER_USER,
  newApiToken,
  type TokenRow,
  type TokenUserRow,
  tokenAuthOf,
  tooManyTokens,
  toTokenRecord,
} from "./api-token-store.js";
import { hashToken } from "./secrets.js";
import type { UserRecord } from "./user-store.js";

export class PgApiTokenStore implements ApiTokenRepository {
  constructor(private readonly db: PgDatabase) {}

  async list(userId: string): Promise<ApiTokenRecord[]> {
    const rows = await this.db.many<TokenRow>(
      "SELECT * FROM api_tokens WHERE user_id = $1 ORDER BY created_at DESC, id",
      [userId],
    );
    return rows.map(toTokenRecord);
  }

  async create(userId: string, name: string): Promise<ApiTokenRecord & { token: string }> {
    const { token, row } = newApiToken(userId, name, Date.now());
    await this.db.transaction(async (tx) => {
      // The account's row lock serialises token creation per person across instances, so the
      // count below cannot be raced past the limit.
      await tx.run("SELECT 1 FROM users WHERE id = $1 FOR UPDATE", [userId]);
      const count =
        (await tx.one<{ n: number }>("SELECT count(*) AS n FROM api_tokens WHERE user_id = $1", [userId]))
          ?.n ?? 0;
      if (count >= MAX_TOKENS_PER_USER) throw tooManyTokens();
      await tx.run(
        "INSERT INTO api_tokens (id, user_id, name, token_hash, preview, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        [row.id, userId, name, hashToken(token), row.preview, row.created_at],
      );
    });
    return { ...toTokenRecord(row), token };
  }

  async delete(userId: string, id: string): Promise<boolean> {
    return (await this.db.run("DELETE FROM api_tokens WHERE id = $1 AND user_id = $2", [id, userId])) > 0;
  }

  async authenticate(bearer: string | undefined): Promise<{ actor: Actor; user: UserRecord } | undefined> {
    const token = apiTokenOf(bearer);
    if (token === undefined) return undefined;
    const row = await this.db.one<TokenUserRow>(
      `SELECT t.id, t.last_used_at, u.id AS user_id, u.username, u.role, u.created_at, u.updated_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1`,
      [hashToken(token)],
    );
    if (!row) return undefined;
    const now = Date.now();
    if (dueForLastUsed(row, now)) {
      await this.db.run("UPDATE api_tokens SET last_used_at = $1 WHERE id = $2", [now, row.id]);
    }
    return tokenAuthOf(row);
  }
}

/** The API tokens repository over a PostgreSQL database. */
export function createPostgresApiTokenStore(db: PgDatabase): PgApiTokenStore {
  return new PgApiTokenStore(db);
}
