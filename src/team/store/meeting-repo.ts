/** Meetings, saved whole after every statement: one repository over SQLite and PostgreSQL alike. */
import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { marks, postgresDatabase, type SqlDatabase, sql, sqliteDatabase } from "../../store/sql-database.js";
import { meetingSearchText } from "../meeting-minutes.js";
import type { MeetingRecord, MeetingStatus } from "../meeting-types.js";

export interface MeetingRepository {
  save(meeting: MeetingRecord): Promise<void>;
  get(id: string): Promise<MeetingRecord | undefined>;
  listByStatus(statuses: readonly MeetingStatus[]): Promise<MeetingRecord[]>;
  /** A group's meetings, newest first; with `query`, those whose topic or minutes hold every word. */
  listByChannel(channelId: string, options: { query?: string; limit: number }): Promise<MeetingRecord[]>;
}

const SAVE = sql(
  `INSERT INTO team_meetings (id, channel_id, status, search_text, data, created_at, updated_at)
   VALUES (?, ?, ?, ?, ?, ?, ?)
   ON CONFLICT (id) DO UPDATE SET status = excluded.status, search_text = excluded.search_text,
     data = excluded.data, updated_at = excluded.updated_at`,
);
const GET = sql("SELECT data FROM team_meetings WHERE id = ?");
const READ = "read meetings from";

interface MeetingRow {
  data: string;
}

export class MeetingRepo implements MeetingRepository {
  constructor(private readonly db: SqlDatabase) {}

  async save(meeting: MeetingRecord): Promise<void> {
    await this.db.run("save a meeting in", SAVE, [
      meeting.id,
      meeting.channelId,
      meeting.status,
      meetingSearchText(meeting),
      JSON.stringify(meeting),
      meeting.createdAt,
      meeting.updatedAt,
    ]);
  }

  async get(id: string): Promise<MeetingRecord | undefined> {
    const row = await this.db.one<MeetingRow>(READ, GET, [id]);
    return row ? parse(row) : undefined;
  }

  async listByStatus(statuses: readonly MeetingStatus[]): Promise<MeetingRecord[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db.many<MeetingRow>(
      READ,
      sql(
        `SELECT data FROM team_meetings WHERE status IN (${marks(statuses.length)}) ORDER BY created_at, id`,
      ),
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
    const rows = await this.db.many<MeetingRow>(
      READ,
      sql(
        `SELECT data FROM team_meetings WHERE channel_id = ?${where} ORDER BY created_at DESC, id DESC LIMIT ?`,
      ),
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
  return new MeetingRepo(sqliteDatabase(db, { groupCommit: true }));
}

/** The meetings of a PostgreSQL database. */
export function postgresMeetings(db: PgDatabase): MeetingRepository {
  return new MeetingRepo(postgresDatabase(db));
}
