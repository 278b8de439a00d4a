/**
 * Meetings, saved whole after every statement: one repository over SQLite and PostgreSQL alike
 * (the same SQL with `?` placeholders; the PostgreSQL runner numbers them).
 */
import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { meetingSearchText } from "../meeting-minutes.js";
import type { MeetingRecord, MeetingStatus } from "../meeting-types.js";
import { guard } from "./sqlite/sql-guard.js";

/** The few statements the repository needs, on either database. */
export interface SqlRunner {
  run(sql: string, params: readonly unknown[]): Promise<void>;
  many<T>(sql: string, params: readonly unknown[]): Promise<T[]>;
}

export interface MeetingRepository {
  save(meeting: MeetingRecord): Promise<void>;
  get(id: string): Promise<MeetingRecord | undefined>;
  listByStatus(statuses: readonly MeetingStatus[]): Promise<MeetingRecord[]>;
  /** A group's meetings, newest first; with `query`, those whose topic or minutes hold every word. */
  listByChannel(channelId: string, options: { query?: string; limit: number }): Promise<MeetingRecord[]>;
}

interface MeetingRow {
  data: string;
}

export class MeetingRepo implements MeetingRepository {
  readonly #db: SqlRunner;

  constructor(db: SqlRunner) {
    this.#db = db;
  }

  async save(meeting: MeetingRecord): Promise<void> {
    await this.#db.run(
      `INSERT INTO team_meetings (id, channel_id, status, search_text, data, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET status = excluded.status, search_text = excluded.search_text,
         data = excluded.data, updated_at = excluded.updated_at`,
      [
        meeting.id,
        meeting.channelId,
        meeting.status,
        meetingSearchText(meeting),
        JSON.stringify(meeting),
        meeting.createdAt,
        meeting.updatedAt,
      ],
    );
  }

  async get(id: string): Promise<MeetingRecord | undefined> {
    const rows = await this.#db.many<MeetingRow>("SELECT data FROM team_meetings WHERE id = ?", [id]);
    return rows[0] ? parse(rows[0]) : undefined;
  }

  async listByStatus(statuses: readonly MeetingStatus[]): Promise<MeetingRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.#db.many<MeetingRow>(
      `SELECT data FROM team_meetings WHERE status IN (${statuses.map(() => "?").join(", ")}) ORDER BY created_at, id`,
      statuses,
    );
    return rows.map(parse);
  }

  async listByChannel(
    channelId: string,
    options: { query?: string; limit: number },
  ): Promise<MeetingRecord[]> {
    const words = (options.query ?? "").normalize("NFKC").toLowerCase().split(/\s+/).filter(Boolean);
    const where = words.map(() => " AND search_text LIKE ? ESCAPE '\\'").join("");
    const patterns = words.map((w) => `%${w.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    const rows = await this.#db.many<MeetingRow>(
      `SELECT data FROM team_meetings WHERE channel_id = ?${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
      [channelId, ...patterns, options.limit],
    );
    return rows.map(parse);
  }
}

function parse(row: MeetingRow): MeetingRecord {
  return JSON.parse(row.data) as MeetingRecord;
}

/** The meetings of a Dimsum SQLite database. */
export function sqliteMeetings(db: Database): MeetingRepository {
  return new MeetingRepo({
    run: (sql, params) =>
      guard(db, "save a meeting in", () => {
        db.prepare(sql).run(...params);
      }),
    many: <T>(sql: string, params: readonly unknown[]) =>
      guard(db, "read meetings from", () => db.prepare(sql).all(...params) as T[]),
  });
}

/** The meetings of a PostgreSQL database. */
export function postgresMeetings(db: PgDatabase): MeetingRepository {
  const numbered = (sql: string) => {
    let n = 0;
    return sql.replace(/\?/g, () => `$${++n}`);
  };
  return new MeetingRepo({
    run: async (sql, params) => {
      await db.run(numbered(sql), params);
    },
    many: async <T>(sql: string, params: readonly unknown[]) => (await db.many(numbered(sql), params)) as T[],
  });
}
