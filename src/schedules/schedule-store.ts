/**
 * Schedules and their runs (tables `schedules` and `schedule_runs`): the repository, written once over
 * SQLite and PostgreSQL (store/sql-database.ts). The server's schedulers and the `dimsum schedule` CLI
 * share the database, so the database, not memory, is the truth about what exists and when it is
 * due; several server instances may poll the same database, so a firing is taken with a
 * compare-and-set (`claimDue`, `takeRunRequest`) that exactly one of them wins.
 */
import type { Database } from "better-sqlite3";
import type { PgDatabase } from "../store/postgres/pg-database.js";
import {
  marks,
  postgresDatabase,
  run,
  type SqlDatabase,
  sql,
  sqliteDatabase,
} from "../store/sql-database.js";
import {
  RUN_COLUMNS,
  type RunRow,
  runValues,
  SCHEDULE_COLUMNS,
  type ScheduleRow,
  scheduleValues,
  toRun,
  toSchedule,
} from "./schedule-rows.js";
import type { ScheduleRecord, ScheduleRunRecord } from "./types.js";

/** Runs kept per schedule; older ones are pruned when a new one is recorded. */
export const RUNS_KEPT_PER_SCHEDULE = 100;

/** The schedules repository. */
export interface ScheduleStore {
  /** Stores a new schedule (a duplicate id is an error). */
  insert(schedule: ScheduleRecord): Promise<void>;
  /**
   * Saves a schedule's own fields (name, owner, enabled, timing, target, missed policy, times of
   * creation and change); false when it no longer exists. `next_run_at` is written only when
   * `retimed` (its timing or enabled state changed), so an edit never moves back a firing a
   * scheduler claimed meanwhile; `last_run_at` and `run_requested_at` are never written here.
   */
  update(schedule: ScheduleRecord, retimed: boolean): Promise<boolean>;
  /** One schedule by id. */
  get(id: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule, or one owner's, oldest first (ties by id). */
  list(ownerId?: string): Promise<ScheduleRecord[]>;
  /** How many schedules a user owns. */
  countByOwner(ownerId: string): Promise<number>;
  /** Deletes a schedule and its runs; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Enabled schedules whose next run has come, and any schedule with a requested run, soonest first. */
  listDue(now: number): Promise<ScheduleRecord[]>;
  /** The earliest time anything is due (a requested run counts at its request time), or undefined. */
  nextWake(): Promise<number | undefined>;
  /**
   * Takes the firing of an enabled schedule due at `due` by moving it to `next` (undefined: no more
   * runs), only if it is still at `due`. Of several instances claiming the same due time, exactly
   * one gets true; the others (and a claim racing an edit or a disable) get false.
   */
  claimDue(id: string, due: number, next: number | undefined): Promise<boolean>;
  /** Sets (or clears) when the schedule next fires, unconditionally (pausing a broken schedule). */
  setNextRun(id: string, nextRunAt: number | undefined): Promise<void>;
  /** Notes that a run started. */
  setLastRun(id: string, at: number): Promise<void>;
  /** Asks a scheduler to run the schedule on its next look; false when it does not exist. */
  requestRun(id: string, at: number): Promise<boolean>;
  /**
   * Takes the run request made at `requestedAt`, clearing it: true for exactly one caller; false
   * when another instance took it or a newer request replaced it.
   */
  takeRunRequest(id: string, requestedAt: number): Promise<boolean>;
  /** Records a run (started, or skipped) and prunes the schedule's oldest finished runs. */
  insertRun(run: ScheduleRunRecord): Promise<void>;
  /** Saves a run's new state; false when it (or its schedule) was deleted meanwhile. */
  updateRun(run: ScheduleRunRecord): Promise<boolean>;
  /** One run by id. */
  getRun(id: string): Promise<ScheduleRunRecord | undefined>;
  /** A schedule's runs, newest first (ties: the later recorded first). */
  listRuns(scheduleId: string, limit?: number): Promise<ScheduleRunRecord[]>;
  /**
   * Ends runs still marked running (left by a stop or crash) as an error; returns how many. With
   * `staleBefore`, only those whose heartbeat (or start) is older: runs of a live instance stay.
   */
  interruptRunning(now: number, message: string, staleBefore?: number): Promise<number>;
  /** Notes that these runs are still going (their instance is alive). */
  heartbeat(runIds: readonly string[], now: number): Promise<void>;
  /** A run of the schedule still going somewhere, its heartbeat at or after `freshSince`; the newest. */
  runningRun(scheduleId: string, freshSince: number): Promise<ScheduleRunRecord | undefined>;
}

const SQL = {
  insert: sql(`INSERT INTO schedules (${SCHEDULE_COLUMNS}) VALUES (${marks(12)})`),
  updateKeepNext:
    sql(`UPDATE schedules SET name = ?, owner_id = ?, enabled = ?, timing_json = ?, target_json = ?,
      missed_policy = ?, created_at = ?, updated_at = ? WHERE id = ?`),
  updateRetimed:
    sql(`UPDATE schedules SET name = ?, owner_id = ?, enabled = ?, timing_json = ?, target_json = ?,
      missed_policy = ?, created_at = ?, updated_at = ?, next_run_at = ? WHERE id = ?`),
  get: sql("SELECT * FROM schedules WHERE id = ?"),
  listAll: sql("SELECT * FROM schedules ORDER BY created_at, id"),
  listOwner: sql("SELECT * FROM schedules WHERE owner_id = ? ORDER BY created_at, id"),
  count: sql({
    sqlite: "SELECT count(*) AS n FROM schedules WHERE owner_id = ?",
    postgres: "SELECT count(*)::int AS n FROM schedules WHERE owner_id = ?",
  }),
  delete: sql("DELETE FROM schedules WHERE id = ?"),
  listDue: sql(`SELECT * FROM schedules
      WHERE (enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?) OR run_requested_at IS NOT NULL
      ORDER BY coalesce(next_run_at, run_requested_at), id`),
  nextWake: sql({
    sqlite: `SELECT min(t) AS t FROM (
      SELECT min(next_run_at) AS t FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL
      UNION ALL SELECT min(run_requested_at) FROM schedules WHERE run_requested_at IS NOT NULL)`,
    postgres: `SELECT least(
      (SELECT min(next_run_at) FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL),
      (SELECT min(run_requested_at) FROM schedules WHERE run_requested_at IS NOT NULL)) AS t`,
  }),
  claimDue: sql("UPDATE schedules SET next_run_at = ? WHERE id = ? AND enabled = 1 AND next_run_at = ?"),
  setNext: sql("UPDATE schedules SET next_run_at = ? WHERE id = ?"),
  setLast: sql("UPDATE schedules SET last_run_at = ? WHERE id = ?"),
  request: sql("UPDATE schedules SET run_requested_at = ? WHERE id = ?"),
  takeRequest: sql("UPDATE schedules SET run_requested_at = NULL WHERE id = ? AND run_requested_at = ?"),
  insertRun: sql(`INSERT INTO schedule_runs (${RUN_COLUMNS}, heartbeat_at) VALUES (${marks(13)})`),
  // The order of insertion: SQLite's rowid, PostgreSQL's seq column.
  pruneRuns: sql({
    sqlite: `DELETE FROM schedule_runs WHERE schedule_id = ? AND status <> 'running' AND rowid NOT IN (
      SELECT rowid FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?)`,
    postgres: `DELETE FROM schedule_runs WHERE schedule_id = ? AND status <> 'running' AND seq NOT IN (
      SELECT seq FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, seq DESC LIMIT ?)`,
  }),
  updateRun: sql(`UPDATE schedule_runs SET ended_at = ?, status = ?, output = ?, error = ?, team_run_id = ?,
      flow_id = ?, message_id = ? WHERE id = ?`),
  getRun: sql("SELECT * FROM schedule_runs WHERE id = ?"),
  listRuns: sql({
    sqlite: "SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
    postgres: "SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, seq DESC LIMIT ?",
  }),
  interrupt: sql(
    "UPDATE schedule_runs SET status = 'error', ended_at = ?, error = ? WHERE status = 'running'",
  ),
  interruptStale: sql(`UPDATE schedule_runs SET status = 'error', ended_at = ?, error = ?
      WHERE status = 'running' AND coalesce(heartbeat_at, started_at) < ?`),
  heartbeat: sql("UPDATE schedule_runs SET heartbeat_at = ? WHERE id = ? AND status = 'running'"),
  heartbeatMany: sql(
    "UPDATE schedule_runs SET heartbeat_at = ? WHERE id = ANY(?::text[]) AND status = 'running'",
  ),
  runningRun: sql({
    sqlite: `SELECT * FROM schedule_runs WHERE schedule_id = ? AND status = 'running'
      AND coalesce(heartbeat_at, started_at) >= ? ORDER BY started_at DESC, rowid DESC LIMIT 1`,
    postgres: `SELECT * FROM schedule_runs WHERE schedule_id = ? AND status = 'running'
      AND coalesce(heartbeat_at, started_at) >= ? ORDER BY started_at DESC, seq DESC LIMIT 1`,
  }),
} as const;

/** The values of the editable columns (name … updated_at), in the order of the update statements. */
function editableValues(s: ScheduleRecord): unknown[] {
  return scheduleValues(s).slice(1, 9);
}

/** The values of `updateRun`'s statement: the run's columns from ended_at on, id last. */
function runUpdateValues(r: ScheduleRunRecord): unknown[] {
  return [...runValues(r).slice(5), r.id];
}

const SAVE = "save a schedule in";
const READ = "read schedules from";
const RECORD_RUN = "record a schedule run in";
const READ_RUNS = "read schedule runs from";

/** The schedules repository, one logic over either database. */
export class ScheduleRepository implements ScheduleStore {
  constructor(private readonly db: SqlDatabase) {}

  async insert(schedule: ScheduleRecord): Promise<void> {
    await this.db.run(SAVE, SQL.insert, scheduleValues(schedule));
  }

  async update(schedule: ScheduleRecord, retimed: boolean): Promise<boolean> {
    const changed = retimed
      ? await this.db.run(SAVE, SQL.updateRetimed, [
          ...editableValues(schedule),
          schedule.nextRunAt ?? null,
          schedule.id,
        ])
      : await this.db.run(SAVE, SQL.updateKeepNext, [...editableValues(schedule), schedule.id]);
    return changed > 0;
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const row = await this.db.one<ScheduleRow>(READ, SQL.get, [id]);
    return row ? toSchedule(row) : undefined;
  }

  async list(ownerId?: string): Promise<ScheduleRecord[]> {
    const rows =
      ownerId === undefined
        ? await this.db.many<ScheduleRow>(READ, SQL.listAll)
        : await this.db.many<ScheduleRow>(READ, SQL.listOwner, [ownerId]);
    return rows.map(toSchedule);
  }

  async countByOwner(ownerId: string): Promise<number> {
    return (await this.db.one<{ n: number }>(READ, SQL.count, [ownerId]))?.n ?? 0;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.db.run("delete a schedule from", SQL.delete, [id])) > 0;
  }

  async listDue(now: number): Promise<ScheduleRecord[]> {
    return (await this.db.many<ScheduleRow>(READ, SQL.listDue, [now])).map(toSchedule);
  }

  async nextWake(): Promise<number | undefined> {
    return (await this.db.one<{ t: number | null }>(READ, SQL.nextWake))?.t ?? undefined;
  }

  async claimDue(id: string, due: number, next: number | undefined): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.claimDue, [next ?? null, id, due])) > 0;
  }

  async setNextRun(id: string, nextRunAt: number | undefined): Promise<void> {
    await this.db.run(SAVE, SQL.setNext, [nextRunAt ?? null, id]);
  }

  async setLastRun(id: string, at: number): Promise<void> {
    await this.db.run(SAVE, SQL.setLast, [at, id]);
  }

  async requestRun(id: string, at: number): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.request, [at, id])) > 0;
  }

  async takeRunRequest(id: string, requestedAt: number): Promise<boolean> {
    return (await this.db.run(SAVE, SQL.takeRequest, [id, requestedAt])) > 0;
  }

  insertRun(scheduleRun: ScheduleRunRecord): Promise<void> {
    return this.db.transaction(RECORD_RUN, function* () {
      yield* run(SQL.insertRun, [...runValues(scheduleRun), scheduleRun.startedAt]);
      const id = scheduleRun.scheduleId;
      yield* run(SQL.pruneRuns, [id, id, RUNS_KEPT_PER_SCHEDULE]);
    });
  }

  async updateRun(scheduleRun: ScheduleRunRecord): Promise<boolean> {
    return (await this.db.run(RECORD_RUN, SQL.updateRun, runUpdateValues(scheduleRun))) > 0;
  }

  async getRun(id: string): Promise<ScheduleRunRecord | undefined> {
    const row = await this.db.one<RunRow>(READ_RUNS, SQL.getRun, [id]);
    return row ? toRun(row) : undefined;
  }

  async listRuns(scheduleId: string, limit = 50): Promise<ScheduleRunRecord[]> {
    return (await this.db.many<RunRow>(READ_RUNS, SQL.listRuns, [scheduleId, limit])).map(toRun);
  }

  interruptRunning(now: number, message: string, staleBefore?: number): Promise<number> {
    return staleBefore === undefined
      ? this.db.run(RECORD_RUN, SQL.interrupt, [now, message])
      : this.db.run(RECORD_RUN, SQL.interruptStale, [now, message, staleBefore]);
  }

  async heartbeat(runIds: readonly string[], now: number): Promise<void> {
    if (runIds.length === 0) return;
    // PostgreSQL takes the ids as one array in one round trip; SQLite loops in one transaction.
    if (this.db.dialect === "postgres") {
      await this.db.run(RECORD_RUN, SQL.heartbeatMany, [now, [...runIds]]);
      return;
    }
    await this.db.transaction(RECORD_RUN, function* () {
      for (const id of runIds) yield* run(SQL.heartbeat, [now, id]);
    });
  }

  async runningRun(scheduleId: string, freshSince: number): Promise<ScheduleRunRecord | undefined> {
    const row = await this.db.one<RunRow>(READ_RUNS, SQL.runningRun, [scheduleId, freshSince]);
    return row ? toRun(row) : undefined;
  }
}

/** The schedules repository on a SQLite connection (the CLI and tests construct it by name). */
export class SqliteScheduleStore extends ScheduleRepository {
  constructor(db: Database) {
    super(sqliteDatabase(db));
  }
}

/** The schedules repository on a PostgreSQL pool. */
export class PostgresScheduleStore extends ScheduleRepository {
  constructor(db: PgDatabase) {
    super(postgresDatabase(db));
  }
}

/** The schedules repository over a migrated Dimsum SQLite database. */
export function createSqliteScheduleStore(db: Database): ScheduleStore {
  return new SqliteScheduleStore(db);
}

/** The schedules repository over a migrated PostgreSQL database (see `openPostgres`). */
export function createPostgresScheduleStore(db: PgDatabase): ScheduleStore {
  return new PostgresScheduleStore(db);
}
