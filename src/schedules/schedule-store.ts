/**
 * Schedules and their runs (tables `schedules` and `schedule_runs`): the repository interface and its
 * SQLite implementation (the PostgreSQL one is `pg-schedule-store.ts`). The server's schedulers and
 * the `dimsum schedule` CLI share the database, so the database, not memory, is the truth about what
 * exists and when it is due; several server instances may poll the same database, so a firing is
 * taken with a compare-and-set (`claimDue`, `takeRunRequest`) that exactly one of them wins.
 */
import type { Database } from "better-sqlite3";
import { storeError } from "../store/sqlite-errors.js";
import { cachedStatement } from "../store/statement-cache.js";
import {
  placeholders,
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
  insert: `INSERT INTO schedules (${SCHEDULE_COLUMNS}) VALUES (${placeholders(12, "sqlite")})`,
  updateKeepNext: `UPDATE schedules SET name = ?, owner_id = ?, enabled = ?, timing_json = ?, target_json = ?,
      missed_policy = ?, created_at = ?, updated_at = ? WHERE id = ?`,
  updateRetimed: `UPDATE schedules SET name = ?, owner_id = ?, enabled = ?, timing_json = ?, target_json = ?,
      missed_policy = ?, created_at = ?, updated_at = ?, next_run_at = ? WHERE id = ?`,
  get: "SELECT * FROM schedules WHERE id = ?",
  listAll: "SELECT * FROM schedules ORDER BY created_at, id",
  listOwner: "SELECT * FROM schedules WHERE owner_id = ? ORDER BY created_at, id",
  count: "SELECT count(*) AS n FROM schedules WHERE owner_id = ?",
  delete: "DELETE FROM schedules WHERE id = ?",
  listDue: `SELECT * FROM schedules
      WHERE (enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?) OR run_requested_at IS NOT NULL
      ORDER BY coalesce(next_run_at, run_requested_at), id`,
  nextWake: `SELECT min(t) AS t FROM (
      SELECT min(next_run_at) AS t FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL
      UNION ALL SELECT min(run_requested_at) FROM schedules WHERE run_requested_at IS NOT NULL)`,
  claimDue: "UPDATE schedules SET next_run_at = ? WHERE id = ? AND enabled = 1 AND next_run_at = ?",
  setNext: "UPDATE schedules SET next_run_at = ? WHERE id = ?",
  setLast: "UPDATE schedules SET last_run_at = ? WHERE id = ?",
  request: "UPDATE schedules SET run_requested_at = ? WHERE id = ?",
  takeRequest: "UPDATE schedules SET run_requested_at = NULL WHERE id = ? AND run_requested_at = ?",
  insertRun: `INSERT INTO schedule_runs (${RUN_COLUMNS}, heartbeat_at) VALUES (${placeholders(13, "sqlite")})`,
  pruneRuns: `DELETE FROM schedule_runs WHERE schedule_id = ? AND status <> 'running' AND rowid NOT IN (
      SELECT rowid FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?)`,
  updateRun: `UPDATE schedule_runs SET status = ?, ended_at = ?, output = ?, error = ?, team_run_id = ?,
      flow_id = ?, message_id = ? WHERE id = ?`,
  getRun: "SELECT * FROM schedule_runs WHERE id = ?",
  listRuns: "SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
  interrupt: "UPDATE schedule_runs SET status = 'error', ended_at = ?, error = ? WHERE status = 'running'",
  interruptStale: `UPDATE schedule_runs SET status = 'error', ended_at = ?, error = ?
      WHERE status = 'running' AND coalesce(heartbeat_at, started_at) < ?`,
  heartbeat: "UPDATE schedule_runs SET heartbeat_at = ? WHERE id = ? AND status = 'running'",
  runningRun: `SELECT * FROM schedule_runs WHERE schedule_id = ? AND status = 'running'
      AND coalesce(heartbeat_at, started_at) >= ? ORDER BY started_at DESC, rowid DESC LIMIT 1`,
} as const;

/** The values of the editable columns, in the order of the update statements. */
export function editableValues(s: ScheduleRecord): unknown[] {
  return [
    s.name,
    s.ownerId,
    s.enabled ? 1 : 0,
    JSON.stringify(s.timing),
    JSON.stringify(s.target),
    s.missedPolicy,
    s.createdAt,
    s.updatedAt,
  ];
}

/** The values of `updateRun`'s statement (both backends), id last. */
export function runUpdateValues(r: ScheduleRunRecord): unknown[] {
  return [
    r.status,
    r.endedAt ?? null,
    r.output ?? null,
    r.error ?? null,
    r.teamRunId ?? null,
    r.flowId ?? null,
    r.messageId ?? null,
    r.id,
  ];
}

/** The schedules repository on SQLite; every method settles in the same turn (better-sqlite3 is synchronous). */
export class SqliteScheduleStore implements ScheduleStore {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  #do<T>(action: string, body: () => T): Promise<T> {
    try {
      return Promise.resolve(body());
    } catch (err) {
      return Promise.reject(storeError(err, this.#db.name, action));
    }
  }

  #run(sql: string, ...params: unknown[]): number {
    return cachedStatement(this.#db, sql).run(...params).changes;
  }

  #get<T>(sql: string, ...params: unknown[]): T | undefined {
    return cachedStatement(this.#db, sql).get(...params) as T | undefined;
  }

  #all<T>(sql: string, ...params: unknown[]): T[] {
    return cachedStatement(this.#db, sql).all(...params) as T[];
  }

  insert(schedule: ScheduleRecord): Promise<void> {
    return this.#do("save a schedule in", () => {
      this.#run(SQL.insert, ...scheduleValues(schedule));
    });
  }

  update(schedule: ScheduleRecord, retimed: boolean): Promise<boolean> {
    return this.#do("save a schedule in", () =>
      retimed
        ? this.#run(SQL.updateRetimed, ...editableValues(schedule), schedule.nextRunAt ?? null, schedule.id) >
          0
        : this.#run(SQL.updateKeepNext, ...editableValues(schedule), schedule.id) > 0,
    );
  }

  get(id: string): Promise<ScheduleRecord | undefined> {
    return this.#do("read schedules from", () => {
      const row = this.#get<ScheduleRow>(SQL.get, id);
      return row ? toSchedule(row) : undefined;
    });
  }

  list(ownerId?: string): Promise<ScheduleRecord[]> {
    return this.#do("read schedules from", () =>
      (ownerId === undefined
        ? this.#all<ScheduleRow>(SQL.listAll)
        : this.#all<ScheduleRow>(SQL.listOwner, ownerId)
      ).map(toSchedule),
    );
  }

  countByOwner(ownerId: string): Promise<number> {
    return this.#do("read schedules from", () => this.#get<{ n: number }>(SQL.count, ownerId)?.n ?? 0);
  }

  delete(id: string): Promise<boolean> {
    return this.#do("delete a schedule from", () => this.#run(SQL.delete, id) > 0);
  }

  listDue(now: number): Promise<ScheduleRecord[]> {
    return this.#do("read schedules from", () => this.#all<ScheduleRow>(SQL.listDue, now).map(toSchedule));
  }

  nextWake(): Promise<number | undefined> {
    return this.#do(
      "read schedules from",
      () => this.#get<{ t: number | null }>(SQL.nextWake)?.t ?? undefined,
    );
  }

  claimDue(id: string, due: number, next: number | undefined): Promise<boolean> {
    return this.#do("save a schedule in", () => this.#run(SQL.claimDue, next ?? null, id, due) > 0);
  }

  setNextRun(id: string, nextRunAt: number | undefined): Promise<void> {
    return this.#do("save a schedule in", () => {
      this.#run(SQL.setNext, nextRunAt ?? null, id);
    });
  }

  setLastRun(id: string, at: number): Promise<void> {
    return this.#do("save a schedule in", () => {
      this.#run(SQL.setLast, at, id);
    });
  }

  requestRun(id: string, at: number): Promise<boolean> {
    return this.#do("save a schedule in", () => this.#run(SQL.request, at, id) > 0);
  }

  takeRunRequest(id: string, requestedAt: number): Promise<boolean> {
    return this.#do("save a schedule in", () => this.#run(SQL.takeRequest, id, requestedAt) > 0);
  }

  insertRun(run: ScheduleRunRecord): Promise<void> {
    return this.#do("record a schedule run in", () => {
      this.#db.transaction(() => {
        this.#run(SQL.insertRun, ...runValues(run), run.startedAt);
        this.#run(SQL.pruneRuns, run.scheduleId, run.scheduleId, RUNS_KEPT_PER_SCHEDULE);
      })();
    });
  }

  updateRun(run: ScheduleRunRecord): Promise<boolean> {
    return this.#do("record a schedule run in", () => this.#run(SQL.updateRun, ...runUpdateValues(run)) > 0);
  }

  getRun(id: string): Promise<ScheduleRunRecord | undefined> {
    return this.#do("read schedule runs from", () => {
      const row = this.#get<RunRow>(SQL.getRun, id);
      return row ? toRun(row) : undefined;
    });
  }

  listRuns(scheduleId: string, limit = 50): Promise<ScheduleRunRecord[]> {
    return this.#do("read schedule runs from", () =>
      this.#all<RunRow>(SQL.listRuns, scheduleId, limit).map(toRun),
    );
  }

  interruptRunning(now: number, message: string, staleBefore?: number): Promise<number> {
    return this.#do("record a schedule run in", () =>
      staleBefore === undefined
        ? this.#run(SQL.interrupt, now, message)
        : this.#run(SQL.interruptStale, now, message, staleBefore),
    );
  }

  heartbeat(runIds: readonly string[], now: number): Promise<void> {
    return this.#do("record a schedule run in", () => {
      if (runIds.length === 0) return;
      this.#db.transaction(() => {
        for (const id of runIds) this.#run(SQL.heartbeat, now, id);
      })();
    });
  }

  runningRun(scheduleId: string, freshSince: number): Promise<ScheduleRunRecord | undefined> {
    return this.#do("read schedule runs from", () => {
      const row = this.#get<RunRow>(SQL.runningRun, scheduleId, freshSince);
      return row ? toRun(row) : undefined;
    });
  }
}

/** The schedules repository over a migrated Dimsum SQLite database. */
export function createSqliteScheduleStore(db: Database): ScheduleStore {
  return new SqliteScheduleStore(db);
}
