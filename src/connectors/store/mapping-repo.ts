/**
 * What connectors remember about the outside world: which Dimsum user an external user is, which
 * channel an external chat is, which inbound events were already taken (de-duplication), and small
 * per-connector state such as Telegram's update offset.
 */
import type { Database } from "better-sqlite3";
import type { DriverState } from "../types.js";

/** How long an inbound de-dup key is remembered (platforms retry for hours, not weeks). */
export const DEDUPE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** The mapping tables of the connectors. */
export class MappingRepo {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /** The Dimsum user of an external user, if mapped. */
  userFor(connectorId: string, externalUserId: string): string | undefined {
    const row = this.#db
      .prepare("SELECT user_id FROM connector_users WHERE connector_id = ? AND external_user_id = ?")
      .get(connectorId, externalUserId) as { user_id: string } | undefined;
    return row?.user_id;
  }

  setUser(connectorId: string, externalUserId: string, userId: string): void {
    this.#db
      .prepare(
        `INSERT INTO connector_users (connector_id, external_user_id, user_id) VALUES (?, ?, ?)
         ON CONFLICT (connector_id, external_user_id) DO UPDATE SET user_id = excluded.user_id`,
      )
      .run(connectorId, externalUserId, userId);
  }

  /** The channel of an external chat, if mapped. */
  channelFor(connectorId: string, externalChatId: string): string | undefined {
    const row = this.#db
      .prepare("SELECT channel_id FROM connector_chats WHERE connector_id = ? AND external_chat_id = ?")
      .get(connectorId, externalChatId) as { channel_id: string } | undefined;
    return row?.channel_id;
  }

  setChannel(connectorId: string, externalChatId: string, channelId: string): void {
    this.#db
      .prepare(
        `INSERT INTO connector_chats (connector_id, external_chat_id, channel_id) VALUES (?, ?, ?)
         ON CONFLICT (connector_id, external_chat_id) DO UPDATE SET channel_id = excluded.channel_id`,
      )
      .run(connectorId, externalChatId, channelId);
  }

  /** The connector and external chat behind a channel, if it is a connector's. */
  chatOf(channelId: string): { connectorId: string; chatId: string } | undefined {
    const row = this.#db
      .prepare("SELECT connector_id, external_chat_id FROM connector_chats WHERE channel_id = ? LIMIT 1")
      .get(channelId) as { connector_id: string; external_chat_id: string } | undefined;
    return row ? { connectorId: row.connector_id, chatId: row.external_chat_id } : undefined;
  }

  /** Claims an inbound key; false when it was already taken (a duplicate). Old keys are pruned. */
  claim(connectorId: string, key: string, now: number): boolean {
    const taken = this.#db
      .prepare(
        "INSERT INTO connector_inbound (connector_id, dedupe_key, received_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      )
      .run(connectorId, key, now);
    if (taken.changes === 0) return false;
    this.#db.prepare("DELETE FROM connector_inbound WHERE received_at < ?").run(now - DEDUPE_RETENTION_MS);
    return true;
  }

  /** Gives a key back when taking the message failed, so the platform's retry is not dropped. */
  release(connectorId: string, key: string): void {
    this.#db
      .prepare("DELETE FROM connector_inbound WHERE connector_id = ? AND dedupe_key = ?")
      .run(connectorId, key);
  }

  /** Persistent key/value state of one connector. */
  stateOf(connectorId: string): DriverState {
    const db = this.#db;
    return {
      get(key) {
        const row = db
          .prepare("SELECT value FROM connector_state WHERE connector_id = ? AND key = ?")
          .get(connectorId, key) as { value: string } | undefined;
        return row?.value;
      },
      set(key, value) {
        db.prepare(
          `INSERT INTO connector_state (connector_id, key, value) VALUES (?, ?, ?)
           ON CONFLICT (connector_id, key) DO UPDATE SET value = excluded.value`,
        ).run(connectorId, key, value);
      },
    };
  }
}
