/**
 * Channel messages, their search vector and read markers, in PostgreSQL. The vector is written with
 * the message (lexemes from search-text.ts) and searched through a GIN index.
 */
import type { PgDatabase } from "../../../store/postgres/pg-database.js";
import type { ChannelMessage, MessagePart } from "../../types.js";
import type { ListOptions, MessageRepository, NewMessage, SearchScope } from "../repositories.js";
import { type MessageRow, textParts, toMessage } from "../rows.js";
import { messageLexemes, messageTsQuery } from "./lexemes.js";

// Every column but the search vector, which no reader needs.
const COLUMNS = `id, channel_id, author_type, author_id, text, run_id, mentions_json, created_at, parts_json,
  reply_to, version_of, edited_at`;

const SET_MARKER = `INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at)
  VALUES ($1, $2, $3, $4) ON CONFLICT (reader_id, channel_id) DO UPDATE
  SET message_id = greatest(team_read_markers.message_id, excluded.message_id), updated_at = excluded.updated_at`;

const INSERT_COLUMNS = `INSERT INTO team_messages (channel_id, author_type, author_id, text, run_id, mentions_json,
    created_at, parts_json, reply_to, version_of, search_terms)`;
const INSERT_MESSAGE = `${INSERT_COLUMNS}
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, array_to_tsvector($11::text[]))`;

/** The insert, with the marker of the reader $12 moved to the new message in the same statement. */
const INSERT_MESSAGE_READ = `WITH m AS (${INSERT_MESSAGE} RETURNING id), marked AS (
    INSERT INTO team_read_markers (reader_id, channel_id, message_id, updated_at) SELECT $12, $1, m.id, $7 FROM m
    ON CONFLICT (reader_id, channel_id) DO UPDATE
    SET message_id = greatest(team_read_markers.message_id, excluded.message_id), updated_at = excluded.updated_at
  )
  SELECT id FROM m`;

/** The insert, only while the run $12 is open with the fencing token $13 (see `isCurrent`). */
export const INSERT_MESSAGE_IF_CURRENT = `${INSERT_COLUMNS}
  SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, array_to_tsvector($11::text[])
  WHERE EXISTS (SELECT 1 FROM team_runs WHERE id = $12 AND fence = $13 AND status IN ('queued', 'running'))
  RETURNING id`;

/** The parameters $1…$11 of the inserts: the message's columns and its search terms. */
export function insertMessageParams(message: NewMessage, parts: MessagePart[]): unknown[] {
  return [
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
    messageLexemes(message.text),
  ];
}

export class PgMessageRepo implements MessageRepository {
  constructor(private readonly db: PgDatabase) {}

  async insert(message: NewMessage, options: { readBy?: string } = {}): Promise<ChannelMessage> {
    const parts = message.parts ?? textParts(message.text);
    const params = insertMessageParams(message, parts);
    const row =
      options.readBy === undefined
        ? await this.db.one<{ id: number }>(`${INSERT_MESSAGE} RETURNING id`, params)
        : await this.db.one<{ id: number }>(INSERT_MESSAGE_READ, [...params, options.readBy]);
    return { ...message, parts, id: row?.id ?? 0 };
  }

  async get(id: number): Promise<ChannelMessage | undefined> {
    const row = await this.db.one<MessageRow>(`SELECT ${COLUMNS} FROM team_messages WHERE id = $1`, [id]);
    return row ? toMessage(row) : undefined;
  }

  async edit(
    id: number,
    text: string,
    at: number | null,
    parts?: MessagePart[],
  ): Promise<ChannelMessage | undefined> {
    const row = await this.db.one<MessageRow>(
      `UPDATE team_messages SET text = $1, parts_json = $2, edited_at = $3, search_terms = array_to_tsvector($4::text[])
       WHERE id = $5 RETURNING ${COLUMNS}`,
      [text, JSON.stringify(parts ?? textParts(text)), at, messageLexemes(text), id],
    );
    return row ? toMessage(row) : undefined;
  }

  async byRun(runId: string): Promise<ChannelMessage | undefined> {
    const row = await this.db.one<MessageRow>(
      `SELECT ${COLUMNS} FROM team_messages WHERE run_id = $1 ORDER BY id DESC LIMIT 1`,
      [runId],
    );
    return row ? toMessage(row) : undefined;
  }

  async replies(id: number): Promise<ChannelMessage[]> {
    const rows = await this.db.many<MessageRow>(
      `SELECT ${COLUMNS} FROM team_messages WHERE reply_to = $1 ORDER BY id`,
      [id],
    );
    return rows.map(toMessage);
  }

  async list(channelId: string, options: ListOptions): Promise<ChannelMessage[]> {
    if (options.after !== undefined) {
      const rows = await this.db.many<MessageRow>(
        `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = $1 AND id > $2 AND ($3::bigint IS NULL OR id < $3)
         ORDER BY id LIMIT $4`,
        [channelId, options.after, options.before ?? null, options.limit],
      );
      return rows.map(toMessage);
    }
    const rows = await this.db.many<MessageRow>(
      `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = $1 AND ($2::bigint IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3`,
      [channelId, options.before ?? null, options.limit],
    );
    return rows.reverse().map(toMessage);
  }

  async range(channelId: string, after: number, upto: number, limit: number): Promise<ChannelMessage[]> {
    const rows = await this.db.many<MessageRow>(
      `SELECT ${COLUMNS} FROM team_messages WHERE channel_id = $1 AND id > $2 AND id <= $3
       ORDER BY id DESC LIMIT $4`,
      [channelId, after, upto, limit],
    );
    return rows.reverse().map(toMessage);
  }

  async delete(id: number): Promise<boolean> {
    return (await this.db.run("DELETE FROM team_messages WHERE id = $1", [id])) > 0;
  }

  async search(query: string, scope: SearchScope, limit: number): Promise<ChannelMessage[]> {
    const tsquery = messageTsQuery(query);
    if (tsquery === undefined) return [];
    const rows = await this.db.many<MessageRow>(
      `SELECT ${COLUMNS} FROM team_messages m WHERE search_terms @@ $1::tsquery
         AND ($2::text IS NULL OR m.channel_id = $2)
         AND ($3::text IS NULL OR m.channel_id IN (SELECT channel_id FROM team_channel_members
           WHERE member_type = 'user' AND member_id = $3))
       ORDER BY ts_rank(search_terms, $1::tsquery) DESC, id DESC LIMIT $4`,
      [tsquery, scope.channelId ?? null, scope.memberUserId ?? null, limit],
    );
    return rows.map(toMessage);
  }

  async marker(readerId: string, channelId: string): Promise<number> {
    const row = await this.db.one<{ message_id: number }>(
      "SELECT message_id FROM team_read_markers WHERE reader_id = $1 AND channel_id = $2",
      [readerId, channelId],
    );
    return row?.message_id ?? 0;
  }

  async setMarker(readerId: string, channelId: string, messageId: number, at: number): Promise<void> {
    await this.db.run(SET_MARKER, [readerId, channelId, messageId, at]);
  }

  /**
   * One statement: the marker's upsert as a CTE, and the messages after the marker as it was (the
   * statement's snapshot), newest `limit` first, with that marker on every row (or one empty row).
   */
  async unseen(
    readerId: string,
    channelId: string,
    upto: number,
    at: number,
    limit: number,
  ): Promise<{ previous: number; messages: ChannelMessage[] }> {
    const rows = await this.db.many<MessageRow & { previous: number }>(
      `WITH moved AS (${SET_MARKER}), seen AS (
         SELECT coalesce((SELECT message_id FROM team_read_markers WHERE reader_id = $1 AND channel_id = $2), 0)
           AS previous
       )
       SELECT seen.previous, m.* FROM seen LEFT JOIN LATERAL (
         SELECT ${COLUMNS} FROM team_messages WHERE channel_id = $2 AND id > seen.previous AND id <= $3
         ORDER BY id DESC LIMIT $5
       ) m ON true`,
      [readerId, channelId, upto, at, limit],
    );
    const messages = rows.filter((row) => row.id !== null).map(toMessage);
    return { previous: rows[0]?.previous ?? 0, messages: messages.reverse() };
  }

  async unread(userId: string, channelIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>(channelIds.map((id) => [id, 0]));
    if (channelIds.length === 0) return counts;
    const rows = await this.db.many<{ channel_id: string; n: number }>(
      `SELECT m.channel_id, count(*)::int AS n FROM team_messages m
       LEFT JOIN team_read_markers r ON r.reader_id = $1 AND r.channel_id = m.channel_id
       WHERE m.channel_id = ANY($2::text[]) AND m.id > coalesce(r.message_id, 0)
         AND NOT (m.author_type = 'user' AND m.author_id = $1)
       GROUP BY m.channel_id`,
      [userId, [...channelIds]],
    );
    for (const row of rows) counts.set(row.channel_id, row.n);
    return counts;
  }
}
