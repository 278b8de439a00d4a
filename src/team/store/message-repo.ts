/**
 * Channel messages, their search index and read markers, one repository over SQLite and PostgreSQL.
 * The search terms (search-text.ts) are written with the message: on SQLite into the FTS5 table (a
 * trigger removes them), on PostgreSQL as the row's tsvector (searched through a GIN index). Where
 * PostgreSQL does in one statement what SQLite does in a short transaction (insert, edit, unseen),
 * each keeps its own shape: a round trip costs PostgreSQL what a statement costs SQLite.
 */
import { type Dialect, insertId, many, one, run, type SqlDatabase, sql } from "../../store/sql-database.js";
import { searchDocument, searchExpression } from "../search-text.js";
import type { ChannelMessage, MessagePart } from "../types.js";
import { messageLexemes, messageTsQuery } from "./postgres/lexemes.js";
import type { ListOptions, MessageRepository, NewMessage, SearchScope } from "./repositories.js";
import { type MessageRow, textParts, toMessage } from "./rows.js";

// Every column but PostgreSQL's search vector, which no reader needs.
const COLUMNS = `id, channel_id, author_type, author_id, text, run_id, mentions_json, created_at, parts_json,
  reply_to, version_of, edited_at`;

const INSERT_COLUMNS = `INSERT INTO team_messages (channel_id, author_type, author_id, text, run_id, mentions_json,
    created_at, parts_json, reply_to, version_of`;

const SET_MARKER = {
  sqlite: `INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (reader_id, channel_id) DO UPDATE SET message_id = max(message_id, excluded.message_id),
      updated_at = excluded.updated_at`,
  postgres: `INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at) VALUES ($1, $2, $3, $4)
    ON CONFLICT (reader_id, channel_id) DO UPDATE
    SET message_id = greatest(team_read_markers.message_id, excluded.message_id), updated_at = excluded.updated_at`,
};

/** PostgreSQL's insert: the columns and the search vector ($11, an array of lexemes). */
const PG_INSERT = `${INSERT_COLUMNS}, search_terms)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, array_to_tsvector($11::text[]))`;

const SQL = {
  insert: sql({
    sqlite: `${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    postgres: `${PG_INSERT} RETURNING id`,
  }),
  /** PostgreSQL: the insert, with the marker of the reader $12 moved to the new message in the same statement. */
  insertRead: sql(`WITH m AS (${PG_INSERT} RETURNING id), marked AS (
      INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at) SELECT $12, $1, m.id, $7 FROM m
      ON CONFLICT (reader_id, channel_id) DO UPDATE
      SET message_id = greatest(team_read_markers.message_id, excluded.message_id), updated_at = excluded.updated_at
    )
    SELECT id FROM m`),
  /** SQLite: a message's search terms. */
  index: sql("INSERT INTO team_messages_fts (rowid, terms) VALUES (?, ?)"),
  unindex: sql("DELETE FROM team_messages_fts WHERE rowid = ?"),
  edit: sql({
    sqlite: "UPDATE team_messages SET text = $1, parts_json = $2, edited_at = $3 WHERE id = $5",
    postgres: `UPDATE team_messages SET text = $1, parts_json = $2, edited_at = $3,
      search_terms = array_to_tsvector($4::text[]) WHERE id = $5 RETURNING ${COLUMNS}`,
  }),
  get: sql(`SELECT ${COLUMNS} FROM team_messages WHERE id = ?`),
  latest: sql(`SELECT ${COLUMNS} FROM team_messages WHERE channel_id = ? ORDER BY id DESC LIMIT ?`),
  before: sql(
    `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = ? AND id < ? ORDER BY id DESC LIMIT ?`,
  ),
  after: sql(`SELECT ${COLUMNS} FROM team_messages WHERE channel_id = ? AND id > ? ORDER BY id LIMIT ?`),
  between: sql(
    `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = ? AND id > ? AND id < ? ORDER BY id LIMIT ?`,
  ),
  // The newest `limit` messages in (after, upto], newest first: what an agent has not seen yet.
  range: sql(
    `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = ? AND id > ? AND id <= ? ORDER BY id DESC LIMIT ?`,
  ),
  delete: sql("DELETE FROM team_messages WHERE id = ?"),
  replies: sql(`SELECT ${COLUMNS} FROM team_messages WHERE reply_to = ? ORDER BY id`),
  byRun: sql(`SELECT ${COLUMNS} FROM team_messages WHERE run_id = ? ORDER BY id DESC LIMIT 1`),
  search: sql({
    sqlite: `SELECT m.* FROM team_messages_fts f JOIN team_messages m ON m.id = f.rowid
      WHERE team_messages_fts MATCH $1 AND ($2 IS NULL OR m.channel_id = $2)
        AND ($3 IS NULL OR m.channel_id IN (SELECT channel_id FROM team_channel_members
          WHERE member_type = 'user' AND member_id = $3))
      ORDER BY bm25(team_messages_fts), m.id DESC LIMIT $4`,
    postgres: `SELECT ${COLUMNS} FROM team_messages m WHERE search_terms @@ $1::tsquery
        AND ($2::text IS NULL OR m.channel_id = $2)
        AND ($3::text IS NULL OR m.channel_id IN (SELECT channel_id FROM team_channel_members
          WHERE member_type = 'user' AND member_id = $3))
      ORDER BY ts_rank(search_terms, $1::tsquery) DESC, id DESC LIMIT $4`,
  }),
  marker: sql("SELECT message_id FROM team_read_markers WHERE reader_id = ? AND channel_id = ?"),
  setMarker: sql(SET_MARKER),
  /**
   * PostgreSQL: the marker's upsert as a CTE, and the messages after the marker as it was (the
   * statement's snapshot), newest `limit` first, with that marker on every row (or one empty row).
   */
  unseen: sql(`WITH moved AS (${SET_MARKER.postgres}), seen AS (
      SELECT coalesce((SELECT message_id FROM team_read_markers WHERE reader_id = $1 AND channel_id = $2), 0)
        AS previous
    )
    SELECT seen.previous, m.* FROM seen LEFT JOIN LATERAL (
      SELECT ${COLUMNS} FROM team_messages WHERE channel_id = $2 AND id > seen.previous AND id <= $3
      ORDER BY id DESC LIMIT $5
    ) m ON true`),
  // Per channel of the JSON array $2: the messages after the person's marker, not counting their own.
  unread: sql({
    sqlite: `SELECT c.value AS channel_id, (SELECT count(*) FROM team_messages m WHERE m.channel_id = c.value
        AND m.id > coalesce((SELECT message_id FROM team_read_markers WHERE reader_id = $1 AND channel_id = c.value), 0)
        AND NOT (m.author_type = 'user' AND m.author_id = $1)) AS n
      FROM json_each($2) c`,
    postgres: `SELECT c.value AS channel_id, (SELECT count(*)::int FROM team_messages m WHERE m.channel_id = c.value
        AND m.id > coalesce((SELECT message_id FROM team_read_markers WHERE reader_id = $1 AND channel_id = c.value), 0)
        AND NOT (m.author_type = 'user' AND m.author_id = $1)) AS n
      FROM json_array_elements_text($2::json) AS c(value)`,
  }),
} as const;

/** PostgreSQL: the insert, only while the run $12 is open with the fencing token $13 (see `isCurrent`). */
export const INSERT_MESSAGE_IF_CURRENT = `${INSERT_COLUMNS}, search_terms)
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, array_to_tsvector($11::text[])
  WHERE EXISTS (SELECT 1 FROM team_runs WHERE id = $12 AND fence = $13 AND status IN ('queued', 'running'))
  RETURNING id`;

/** The parameters of the inserts: the message's columns, and on PostgreSQL its lexemes ($11). */
export function insertMessageParams(message: NewMessage, parts: MessagePart[], dialect: Dialect): unknown[] {
  const params: unknown[] = [
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
  ];
  if (dialect === "postgres") params.push(messageLexemes(message.text));
  return params;
}

const READ = "read messages from";

/** The message tables. */
export class MessageRepo implements MessageRepository {
  constructor(private readonly db: SqlDatabase) {}

  /** Stores a message and its search terms (and `readBy`'s marker) at once. */
  async insert(message: NewMessage, options: { readBy?: string } = {}): Promise<ChannelMessage> {
    const parts = message.parts ?? textParts(message.text);
    const params = insertMessageParams(message, parts, this.db.dialect);
    const readBy = options.readBy;
    let id: number;
    if (this.db.dialect === "postgres") {
      const row =
        readBy === undefined
          ? await this.db.one<{ id: number }>("save a message in", SQL.insert, params)
          : await this.db.one<{ id: number }>("save a message in", SQL.insertRead, [...params, readBy]);
      id = row?.id ?? 0;
    } else {
      id = await this.db.transaction("save a message in", function* () {
        const messageId = yield* insertId(SQL.insert, params);
        const terms = searchDocument(message.text);
        if (terms !== "") yield* run(SQL.index, [messageId, terms]);
        if (readBy !== undefined) {
          yield* run(SQL.setMarker, [readBy, message.channelId, messageId, message.createdAt]);
        }
        return messageId;
      });
    }
    return { ...message, parts, id };
  }

  async get(id: number): Promise<ChannelMessage | undefined> {
    const row = await this.db.one<MessageRow>("read a message from", SQL.get, [id]);
    return row ? toMessage(row) : undefined;
  }

  /** Replaces a message's text and parts (default: just that text) and its search terms. */
  async edit(
    id: number,
    text: string,
    at: number | null,
    parts?: MessagePart[],
  ): Promise<ChannelMessage | undefined> {
    const action = "edit a message in";
    const postgres = this.db.dialect === "postgres";
    const params = [
      text,
      JSON.stringify(parts ?? textParts(text)),
      at,
      postgres ? messageLexemes(text) : null,
      id,
    ];
    const row = postgres
      ? await this.db.one<MessageRow>(action, SQL.edit, params)
      : await this.db.transaction(action, function* () {
          const changed = yield* run(SQL.edit, params);
          yield* run(SQL.unindex, [id]);
          const terms = searchDocument(text);
          if (terms !== "" && changed > 0) yield* run(SQL.index, [id, terms]);
          return yield* one<MessageRow>(SQL.get, [id]);
        });
    return row ? toMessage(row) : undefined;
  }

  /** The (last) message a run posted. */
  async byRun(runId: string): Promise<ChannelMessage | undefined> {
    const row = await this.db.one<MessageRow>("read a message from", SQL.byRun, [runId]);
    return row ? toMessage(row) : undefined;
  }

  /** The answers that reply to a message (every version), oldest first. */
  async replies(id: number): Promise<ChannelMessage[]> {
    return (await this.db.many<MessageRow>(READ, SQL.replies, [id])).map(toMessage);
  }

  /** A page of a channel's messages, oldest first. */
  async list(channelId: string, options: ListOptions): Promise<ChannelMessage[]> {
    const { after, before, limit } = options;
    if (after !== undefined) {
      const rows =
        before === undefined
          ? await this.db.many<MessageRow>(READ, SQL.after, [channelId, after, limit])
          : await this.db.many<MessageRow>(READ, SQL.between, [channelId, after, before, limit]);
      return rows.map(toMessage);
    }
    const rows =
      before === undefined
        ? await this.db.many<MessageRow>(READ, SQL.latest, [channelId, limit])
        : await this.db.many<MessageRow>(READ, SQL.before, [channelId, before, limit]);
    return rows.reverse().map(toMessage);
  }

  /** Up to `limit` newest messages with `after < id <= upto`, oldest first. */
  async range(channelId: string, after: number, upto: number, limit: number): Promise<ChannelMessage[]> {
    const rows = await this.db.many<MessageRow>(READ, SQL.range, [channelId, after, upto, limit]);
    return rows.reverse().map(toMessage);
  }

  async delete(id: number): Promise<boolean> {
    return (await this.db.run("delete a message from", SQL.delete, [id])) > 0;
  }

  async search(query: string, scope: SearchScope, limit: number): Promise<ChannelMessage[]> {
    const expression = this.db.dialect === "postgres" ? messageTsQuery(query) : searchExpression(query);
    if (expression === undefined) return [];
    const rows = await this.db.many<MessageRow>("search messages in", SQL.search, [
      expression,
      scope.channelId ?? null,
      scope.memberUserId ?? null,
      limit,
    ]);
    return rows.map(toMessage);
  }

  /** The last message id a reader (a person, or `agent:<id>`) has seen in a channel; 0 if none. */
  async marker(readerId: string, channelId: string): Promise<number> {
    const row = await this.db.one<{ message_id: number }>("read a read marker from", SQL.marker, [
      readerId,
      channelId,
    ]);
    return row?.message_id ?? 0;
  }

  /** Moves a reader's marker forward (never back). */
  async setMarker(readerId: string, channelId: string, messageId: number, at: number): Promise<void> {
    await this.db.run("save a read marker in", SQL.setMarker, [readerId, channelId, messageId, at]);
  }

  /** Moves the reader's marker to `upto` and reads the range after the marker as it was, at once. */
  async unseen(
    readerId: string,
    channelId: string,
    upto: number,
    at: number,
    limit: number,
  ): Promise<{ previous: number; messages: ChannelMessage[] }> {
    const action = "save a read marker in";
    if (this.db.dialect === "postgres") {
      const rows = await this.db.many<MessageRow & { previous: number }>(action, SQL.unseen, [
        readerId,
        channelId,
        upto,
        at,
        limit,
      ]);
      const messages = rows.filter((row) => row.id !== null).map(toMessage);
      return { previous: rows[0]?.previous ?? 0, messages: messages.reverse() };
    }
    return this.db.transaction(action, function* () {
      const previous =
        (yield* one<{ message_id: number }>(SQL.marker, [readerId, channelId]))?.message_id ?? 0;
      yield* run(SQL.setMarker, [readerId, channelId, upto, at]);
      const rows = yield* many<MessageRow>(SQL.range, [channelId, previous, upto, limit]);
      return { previous, messages: rows.reverse().map(toMessage) };
    });
  }

  /** Per channel, the messages after the person's marker, not counting their own. */
  async unread(userId: string, channelIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>(channelIds.map((id) => [id, 0]));
    if (channelIds.length === 0) return counts;
    const rows = await this.db.many<{ channel_id: string; n: number }>(
      "count unread messages in",
      SQL.unread,
      [userId, JSON.stringify(channelIds)],
    );
    for (const row of rows) counts.set(row.channel_id, row.n);
    return counts;
  }
}
