/**
 * Channel messages, their full-text index and read markers. The index holds processed terms (see
 * search-text.ts) written in the same transaction as the message; a trigger removes them.
 */
import type { Database, Statement } from "better-sqlite3";
import { searchDocument, searchExpression } from "../../search-text.js";
import type { ChannelMessage, MessagePart } from "../../types.js";
import type { ListOptions, MessageRepository, NewMessage, SearchScope } from "../repositories.js";
import { type MessageRow, textParts, toMessage } from "../rows.js";
import { guard } from "./sql-guard.js";

/** The message tables. */
export class SqliteMessageRepo implements MessageRepository {
  readonly #db: Database;
  readonly #sql: {
    insert: Statement<unknown[]>;
    index: Statement<[number, string]>;
    get: Statement<[number], MessageRow>;
    latest: Statement<[string, number], MessageRow>;
    before: Statement<[string, number, number], MessageRow>;
    after: Statement<[string, number, number], MessageRow>;
    range: Statement<[string, number, number, number], MessageRow>;
    delete: Statement<[number]>;
    edit: Statement<[string, string, number | null, number]>;
    unindex: Statement<[number]>;
    replies: Statement<[number], MessageRow>;
    byRun: Statement<[string], MessageRow>;
    marker: Statement<[string, string], number>;
    setMarker: Statement<[string, string, number, number]>;
    unread: Statement<[{ user: string; channel: string }], number>;
  };
  readonly #insertTx: (message: NewMessage, readBy: string | undefined) => ChannelMessage;
  readonly #editTx: (id: number, text: string, parts: MessagePart[], at: number | null) => void;

  constructor(db: Database) {
    this.#db = db;
    this.#sql = {
      insert: db.prepare(
        `INSERT INTO team_messages (channel_id, author_type, author_id, text, run_id, mentions_json, created_at,
           parts_json, reply_to, version_of)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      index: db.prepare("INSERT INTO team_messages_fts (rowid, terms) VALUES (?, ?)"),
      get: db.prepare("SELECT * FROM team_messages WHERE id = ?"),
      latest: db.prepare("SELECT * FROM team_messages WHERE channel_id = ? ORDER BY id DESC LIMIT ?"),
      before: db.prepare(
        "SELECT * FROM team_messages WHERE channel_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
      ),
      after: db.prepare("SELECT * FROM team_messages WHERE channel_id = ? AND id > ? ORDER BY id LIMIT ?"),
      // The newest `limit` messages in (after, upto]: what an agent has not seen yet.
      range: db.prepare(
        `SELECT * FROM (SELECT * FROM team_messages WHERE channel_id = ? AND id > ? AND id <= ?
         ORDER BY id DESC LIMIT ?) ORDER BY id`,
      ),
      delete: db.prepare("DELETE FROM team_messages WHERE id = ?"),
      edit: db.prepare("UPDATE team_messages SET text = ?, parts_json = ?, edited_at = ? WHERE id = ?"),
      unindex: db.prepare("DELETE FROM team_messages_fts WHERE rowid = ?"),
      replies: db.prepare("SELECT * FROM team_messages WHERE reply_to = ? ORDER BY id"),
      byRun: db.prepare("SELECT * FROM team_messages WHERE run_id = ? ORDER BY id DESC LIMIT 1"),
      marker: db
        .prepare<[string, string], number>(
          "SELECT message_id FROM team_read_markers WHERE reader_id = ? AND channel_id = ?",
        )
        .pluck(),
      setMarker: db.prepare(
        `INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (reader_id, channel_id) DO UPDATE SET message_id = max(message_id, excluded.message_id),
           updated_at = excluded.updated_at`,
      ),
      unread: db
        .prepare<[{ user: string; channel: string }], number>(
          `SELECT count(*) FROM team_messages WHERE channel_id = @channel
             AND id > coalesce((SELECT message_id FROM team_read_markers WHERE reader_id = @user AND channel_id = @channel), 0)
             AND NOT (author_type = 'user' AND author_id = @user)`,
        )
        .pluck(),
    };
    this.#insertTx = db.transaction((message: NewMessage, readBy: string | undefined): ChannelMessage => {
      const parts = message.parts ?? textParts(message.text);
      const info = this.#sql.insert.run(
        message.channelId,
        message.author.type,
        message.author.id,
        message.text,
        message.runId ?? null,
        JSON.stringify(message.mentions),
        message.createdAt,
        JSON.stringify(parts),
        message.replyTo ?? null,
        message.versionOf ?? null,
      );
      const id = Number(info.lastInsertRowid);
      const terms = searchDocument(message.text);
      if (terms !== "") this.#sql.index.run(id, terms);
      if (readBy !== undefined) this.#sql.setMarker.run(readBy, message.channelId, id, message.createdAt);
      return { ...message, parts, id };
    });
    this.#editTx = db.transaction(
      (id: number, text: string, parts: MessagePart[], at: number | null): void => {
        this.#sql.edit.run(text, JSON.stringify(parts), at, id);
        this.#sql.unindex.run(id);
        const terms = searchDocument(text);
        if (terms !== "") this.#sql.index.run(id, terms);
      },
    );
  }

  /** Replaces a message's text and parts (default: just that text) and its search terms. */
  edit(
    id: number,
    text: string,
    at: number | null,
    parts?: MessagePart[],
  ): Promise<ChannelMessage | undefined> {
    return guard(this.#db, "edit a message in", () => {
      this.#editTx(id, text, parts ?? textParts(text), at);
      const row = this.#sql.get.get(id);
      return row ? toMessage(row) : undefined;
    });
  }

  /** The (last) message a run posted. */
  byRun(runId: string): Promise<ChannelMessage | undefined> {
    return guard(this.#db, "read a message from", () => {
      const row = this.#sql.byRun.get(runId);
      return row ? toMessage(row) : undefined;
    });
  }

  /** The answers that reply to a message (every version), oldest first. */
  replies(id: number): Promise<ChannelMessage[]> {
    return guard(this.#db, "read messages from", () => this.#sql.replies.all(id).map(toMessage));
  }

  /** Stores a message and its search terms (and `readBy`'s marker) in one transaction. */
  insert(message: NewMessage, options: { readBy?: string } = {}): Promise<ChannelMessage> {
    return guard(this.#db, "save a message in", () => this.#insertTx(message, options.readBy));
  }

  get(id: number): Promise<ChannelMessage | undefined> {
    return guard(this.#db, "read a message from", () => {
      const row = this.#sql.get.get(id);
      return row ? toMessage(row) : undefined;
    });
  }

  /** A page of a channel's messages, oldest first. */
  list(channelId: string, options: ListOptions): Promise<ChannelMessage[]> {
    return guard(this.#db, "read messages from", () => {
      if (options.after !== undefined) {
        const rows = this.#sql.after.all(channelId, options.after, options.limit);
        return rows.filter((row) => options.before === undefined || row.id < options.before).map(toMessage);
      }
      const rows =
        options.before !== undefined
          ? this.#sql.before.all(channelId, options.before, options.limit)
          : this.#sql.latest.all(channelId, options.limit);
      return rows.reverse().map(toMessage);
    });
  }

  /** Up to `limit` newest messages with `after < id <= upto`, oldest first. */
  range(channelId: string, after: number, upto: number, limit: number): Promise<ChannelMessage[]> {
    return guard(this.#db, "read messages from", () =>
      this.#sql.range.all(channelId, after, upto, limit).map(toMessage),
    );
  }

  delete(id: number): Promise<boolean> {
    return guard(this.#db, "delete a message from", () => this.#sql.delete.run(id).changes > 0);
  }

  search(query: string, scope: SearchScope, limit: number): Promise<ChannelMessage[]> {
    return guard(this.#db, "search messages in", () => {
      const expression = searchExpression(query);
      if (expression === undefined) return [];
      const filters: string[] = [];
      const params: unknown[] = [expression];
      if (scope.channelId !== undefined) {
        filters.push("AND m.channel_id = ?");
        params.push(scope.channelId);
      }
      if (scope.memberUserId !== undefined) {
        filters.push(`AND m.channel_id IN (SELECT channel_id FROM team_channel_members
          WHERE member_type = 'user' AND member_id = ?)`);
        params.push(scope.memberUserId);
      }
      const rows = this.#db
        .prepare<unknown[], MessageRow>(
          `SELECT m.* FROM team_messages_fts f JOIN team_messages m ON m.id = f.rowid
           WHERE team_messages_fts MATCH ? ${filters.join(" ")}
           ORDER BY bm25(team_messages_fts), m.id DESC LIMIT ?`,
        )
        .all(...params, limit);
      return rows.map(toMessage);
    });
  }

  /** The last message id a reader (a person, or `agent:<id>`) has seen in a channel; 0 if none. */
  marker(readerId: string, channelId: string): Promise<number> {
    return guard(this.#db, "read a read marker from", () => this.#sql.marker.get(readerId, channelId) ?? 0);
  }

  /** Moves a reader's marker forward (never back). */
  setMarker(readerId: string, channelId: string, messageId: number, at: number): Promise<void> {
    return guard(this.#db, "save a read marker in", () => {
      this.#sql.setMarker.run(readerId, channelId, messageId, at);
    });
  }

  /** Moves the reader's marker to `upto` and reads the range after the marker as it was, in one transaction. */
  unseen(
    readerId: string,
    channelId: string,
    upto: number,
    at: number,
    limit: number,
  ): Promise<{ previous: number; messages: ChannelMessage[] }> {
    return guard(this.#db, "save a read marker in", () =>
      this.#db.transaction(() => {
        const previous = this.#sql.marker.get(readerId, channelId) ?? 0;
        this.#sql.setMarker.run(readerId, channelId, upto, at);
        const messages = this.#sql.range.all(channelId, previous, upto, limit).map(toMessage);
        return { previous, messages };
      })(),
    );
  }

  /** Messages after the person's marker, not counting their own. */
  unread(userId: string, channelIds: readonly string[]): Promise<Map<string, number>> {
    return guard(this.#db, "count unread messages in", () => {
      const counts = new Map<string, number>();
      for (const id of channelIds) counts.set(id, this.#sql.unread.get({ user: userId, channel: id }) ?? 0);
      return counts;
    });
  }
}
