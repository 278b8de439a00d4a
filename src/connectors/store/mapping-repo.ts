/**
 * What connectors remember about the outside world: which Dimsum user an external user is, which
 * channel an external chat is, which inbound events were already taken (de-duplication), and small
 * per-connector state such as Telegram's update offset. The repository interface and its SQLite
 * implementation (PostgreSQL: `pg-connector-store.ts`).
 */
import type { Database } from "better-sqlite3";
import { cachedStatement } from "../../store/statement-cache.js";
import type { DriverState } from "../types.js";
import { sqliteCall } from "./connector-repo.js";

/** How long an inbound de-dup key is remembered (platforms retry for hours, not weeks). */
export const DEDUPE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The mapping tables of the connectors. */
export interface MappingRepo {
  /** The Dimsum user of an external user, if mapped. */
  userFor(connectorId: string, externalUserId: string): Promise<string | undefined>;
  /** Maps (or re-maps) an external user to a Dimsum user. */
  setUser(connectorId: string, externalUserId: string, userId: string): Promise<void>;
  /** The channel of an external chat, if mapped. */
  channelFor(connectorId: string, externalChatId: string): Promise<string | undefined>;
  /** Maps (or re-maps) an external chat to a channel. */
  setChannel(connectorId: string, externalChatId: string, channelId: string): Promise<void>;
  /** The connector and external chat behind a channel, if it is a connector's. */
  chatOf(channelId: string): Promise<{ connectorId: string; chatId: string } | undefined>;
  /**
   * Claims an inbound key; false when it was already taken (a duplicate). Atomic across instances
   * (a unique key): of several taking the same key at once exactly one gets true. Old keys are pruned.
   */
  claim(connectorId: string, key: string, now: number): Promise<boolean>;
  /** Gives a key back when taking the message failed, so the platform's retry is not dropped. */
  release(connectorId: string, key: string): Promise<void>;
  /** Persistent key/value state of one connector. */
  stateOf(connectorId: string): DriverState;
}

const SQL = {
  userFor: "SELECT user_id FROM connector_users WHERE connector_id = ? AND external_user_id = ?",
  setUser: `INSERT INTO connector_users (connector_id, external_user_id, user_id) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, external_user_id) DO UPDATE SET user_id = excluded.user_id`,
  channelFor: "SELECT channel_id FROM connector_chats WHERE connector_id = ? AND external_chat_id = ?",
  setChannel: `INSERT INTO connector_chats (connector_id, external_chat_id, channel_id) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, external_chat_id) DO UPDATE SET channel_id = excluded.channel_id`,
  chatOf: "SELECT connector_id, external_chat_id FROM connector_chats WHERE channel_id = ? LIMIT 1",
  claim:
    "INSERT INTO connector_inbound (connector_id, dedupe_key, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
  prune: "DELETE FROM connector_inbound WHERE received_at < ?",
  release: "DELETE FROM connector_inbound WHERE connector_id = ? AND dedupe_key = ?",
  getState: "SELECT value FROM connector_state WHERE connector_id = ? AND key = ?",
  deleteState: "DELETE FROM connector_state WHERE connector_id = ? AND key = ?",
  // substr rather than LIKE: keys may hold % and _.
  listState:
    "SELECT key, value FROM connector_state WHERE connector_id = ? AND substr(key, 1, length(?)) = ? ORDER BY key",
  setState: `INSERT INTO connector_state (connector_id, key, value) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
  // One statement: the lease check and the write are atomic.
  setFenced: `INSERT INTO connector_state (connector_id, key, value)
      SELECT ?, ?, ? WHERE EXISTS (SELECT 1 FROM connector_leases
        WHERE connector_id = ? AND token = ? AND holder IS NOT NULL)
      ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
} as const;

/** The mapping tables on SQLite. */
export class SqliteMappingRepo implements MappingRepo {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  #read<T>(sql: string, ...params: unknown[]): Promise<T | undefined> {
    return sqliteCall(
      this.#db,
      "read connector mappings from",
      () => cachedStatement(this.#db, sql).get(...params) as T | undefined,
    );
  }

  #write(sql: string, ...params: unknown[]): Promise<number> {
    return sqliteCall(
      this.#db,
      "save connector mappings in",
      () => cachedStatement(this.#db, sql).run(...params).changes,
    );
  }

  async userFor(connectorId: string, externalUserId: string): Promise<string | undefined> {
    return (await this.#read<{ user_id: string }>(SQL.userFor, connectorId, externalUserId))?.user_id;
  }

  async setUser(connectorId: string, externalUserId: string, userId: string): Promise<void> {
    await this.#write(SQL.setUser, connectorId, externalUserId, userId);
  }

  async channelFor(connectorId: string, externalChatId: string): Promise<string | undefined> {
    return (await this.#read<{ channel_id: string }>(SQL.channelFor, connectorId, externalChatId))
      ?.channel_id;
  }

  async setChannel(connectorId: string, externalChatId: string, channelId: string): Promise<void> {
    await this.#write(SQL.setChannel, connectorId, externalChatId, channelId);
  }

  async chatOf(channelId: string): Promise<{ connectorId: string; chatId: string } | undefined> {
    const row = await this.#read<{ connector_id: string; external_chat_id: string }>(SQL.chatOf, channelId);
    return row ? { connectorId: row.connector_id, chatId: row.external_chat_id } : undefined;
  }

  claim(connectorId: string, key: string, now: number): Promise<boolean> {
    return sqliteCall(this.#db, "save connector mappings in", () => {
      if (cachedStatement(this.#db, SQL.claim).run(connectorId, key, now).changes === 0) return false;
      cachedStatement(this.#db, SQL.prune).run(now - DEDUPE_RETENTION_MS);
      return true;
    });
  }

  async release(connectorId: string, key: string): Promise<void> {
    await this.#write(SQL.release, connectorId, key);
  }

  stateOf(connectorId: string): DriverState {
    return {
      get: async (key) => (await this.#read<{ value: string }>(SQL.getState, connectorId, key))?.value,
      set: async (key, value, fence) =>
        fence === undefined
          ? (await this.#write(SQL.setState, connectorId, key, value)) > 0
          : (await this.#write(SQL.setFenced, connectorId, key, value, connectorId, fence)) > 0,
      delete: async (key) => {
        await this.#write(SQL.deleteState, connectorId, key);
      },
      list: (prefix) =>
        sqliteCall(
          this.#db,
          "read connector mappings from",
          () =>
            cachedStatement(this.#db, SQL.listState).all(connectorId, prefix, prefix) as Array<{
              key: string;
              value: string;
            }>,
        ),
    };
  }
}
