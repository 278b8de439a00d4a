/**
 * What connectors remember about the outside world: which Dimsum user an external user is, which
 * channel an external chat is, which inbound events were already taken (de-duplication), and small
 * per-connector state such as Telegram's update offset. The repository interface and its one
 * implementation over SQLite and PostgreSQL.
 */
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { DriverState } from "../types.js";

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
  userFor: sql("SELECT user_id FROM connector_users WHERE connector_id = ? AND external_user_id = ?"),
  setUser: sql(`INSERT INTO connector_users (connector_id, external_user_id, user_id) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, external_user_id) DO UPDATE SET user_id = excluded.user_id`),
  channelFor: sql("SELECT channel_id FROM connector_chats WHERE connector_id = ? AND external_chat_id = ?"),
  setChannel: sql(`INSERT INTO connector_chats (connector_id, external_chat_id, channel_id) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, external_chat_id) DO UPDATE SET channel_id = excluded.channel_id`),
  chatOf: sql("SELECT connector_id, external_chat_id FROM connector_chats WHERE channel_id = ? LIMIT 1"),
  claim: sql(
    "INSERT INTO connector_inbound (connector_id, dedupe_key, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
  ),
  prune: sql("DELETE FROM connector_inbound WHERE received_at < ?"),
  release: sql("DELETE FROM connector_inbound WHERE connector_id = ? AND dedupe_key = ?"),
  getState: sql("SELECT value FROM connector_state WHERE connector_id = ? AND key = ?"),
  deleteState: sql("DELETE FROM connector_state WHERE connector_id = ? AND key = ?"),
  // A prefix test rather than LIKE: keys may hold % and _.
  listState: sql({
    sqlite:
      "SELECT key, value FROM connector_state WHERE connector_id = $1 AND substr(key, 1, length($2)) = $2 ORDER BY key",
    postgres:
      "SELECT key, value FROM connector_state WHERE connector_id = $1 AND starts_with(key, $2) ORDER BY key",
  }),
  setState: sql(`INSERT INTO connector_state (connector_id, key, value) VALUES (?, ?, ?)
      ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`),
  // One statement: the lease check and the write are atomic. On PostgreSQL, FOR SHARE holds the lease
  // row until this write commits, so a takeover waits for it, and a takeover committed first fails
  // the token check on the row's newest version.
  setFenced: sql({
    sqlite: `INSERT INTO connector_state (connector_id, key, value)
      SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM connector_leases
        WHERE connector_id = $1 AND token = $4 AND holder IS NOT NULL)
      ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
    postgres: `INSERT INTO connector_state (connector_id, key, value)
      SELECT $1, $2, $3 WHERE EXISTS (SELECT 1 FROM connector_leases
        WHERE connector_id = $1 AND token = $4 AND holder IS NOT NULL FOR SHARE)
      ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
  }),
} as const;

const READ = "read connector mappings from";
const SAVE = "save connector mappings in";

/** The mapping tables, one logic over either database. */
export class MappingRepository implements MappingRepo {
  constructor(private readonly db: SqlDatabase) {}

  async userFor(connectorId: string, externalUserId: string): Promise<string | undefined> {
    return (await this.db.one<{ user_id: string }>(READ, SQL.userFor, [connectorId, externalUserId]))
      ?.user_id;
  }

  async setUser(connectorId: string, externalUserId: string, userId: string): Promise<void> {
    await this.db.run(SAVE, SQL.setUser, [connectorId, externalUserId, userId]);
  }

  async channelFor(connectorId: string, externalChatId: string): Promise<string | undefined> {
    const row = await this.db.one<{ channel_id: string }>(READ, SQL.channelFor, [
      connectorId,
      externalChatId,
    ]);
    return row?.channel_id;
  }

  async setChannel(connectorId: string, externalChatId: string, channelId: string): Promise<void> {
    await this.db.run(SAVE, SQL.setChannel, [connectorId, externalChatId, channelId]);
  }

  async chatOf(channelId: string): Promise<{ connectorId: string; chatId: string } | undefined> {
    const row = await this.db.one<{ connector_id: string; external_chat_id: string }>(READ, SQL.chatOf, [
      channelId,
    ]);
    return row ? { connectorId: row.connector_id, chatId: row.external_chat_id } : undefined;
  }

  async claim(connectorId: string, key: string, now: number): Promise<boolean> {
    if ((await this.db.run(SAVE, SQL.claim, [connectorId, key, now])) === 0) return false;
    await this.db.run(SAVE, SQL.prune, [now - DEDUPE_RETENTION_MS]);
    return true;
  }

  async release(connectorId: string, key: string): Promise<void> {
    await this.db.run(SAVE, SQL.release, [connectorId, key]);
  }

  stateOf(connectorId: string): DriverState {
    const db = this.db;
    return {
      get: async (key) => (await db.one<{ value: string }>(READ, SQL.getState, [connectorId, key]))?.value,
      set: async (key, value, fence) =>
        fence === undefined
          ? (await db.run(SAVE, SQL.setState, [connectorId, key, value])) > 0
          : (await db.run(SAVE, SQL.setFenced, [connectorId, key, value, fence])) > 0,
      delete: async (key) => {
        await db.run(SAVE, SQL.deleteState, [connectorId, key]);
      },
      list: (prefix) => db.many<{ key: string; value: string }>(READ, SQL.listState, [connectorId, prefix]),
    };
  }
}
