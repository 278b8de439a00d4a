/**
 * The schedules repository on PostgreSQL (migration 5), for several server instances sharing one
 * database: a firing or a run request is taken with a compare-and-set UPDATE, so of the instances
 * polling the same due schedule exactly one runs it. Rows map through the same code as SQLite's.
 */
import type { PgDatabase } from "../store/postgres/pg-database.js";
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
import {
  editableValues,
  RUNS_KEPT_PER_SCHEDULE,
  runUpdateValues,
  type ScheduleStore,
} from "./schedule-store.js";
import type { ScheduleRecord, ScheduleRunRecord } from "./types.js";

const SQL = {
  insert: `INSERT INTO schedules (${SCHEDULE_COLUMNS}) VALUES (${placeholders(12, "postgres")})`,
  updateKeepNext: `UPDATE schedules SET name = $1, owner_id = $2, enabled = $3, timing_json = $4, target_json = $5,
      missed_policy = $6, created_at = $7, updated_at = $8 WHERE id = $9`,
  updateRetimed: `UPDATE schedules SET name = $1, owner_id = $2, enabled = $3, timing_json = $4, target_json = $5,
      missed_policy = $6, created_at = $7, updated_at = $8, next_run_at = $9 WHERE id = $10`,
  get: "SELECT * FROM schedules WHERE id = $1",
  listAll: "SELECT * FROM schedules ORDER BY created_at, id",
  listOwner: "SELECT * FROM schedules WHERE owner_id = $1 ORDER BY created_at, id",
  count: "SELECT count(*)::int AS n FROM schedules WHERE owner_id = $1",
  delete: "DELETE FROM schedules WHERE id = $1",
  listDue: `SELECT * FROM schedules
      WHERE (enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= $1) OR run_requested_at IS NOT NULL
      ORDER BY coalesce(next_run_at, run_requested_at), id`,
  nextWake: `SELECT least(
      (SELECT min(next_run_at) FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL),
      (SELECT min(run_requested_at) FROM schedules WHERE run_requested_at IS NOT NULL)) AS t`,
  claimDue: "UPDATE schedules SET next_run_at = $1 WHERE id = $2 AND enabled = 1 AND next_run_at = $3",
  setNext: "UPDATE schedules SET next_run_at = $1 WHERE id = $2",
  setLast: "UPDATE schedules SET last_run_at = $1 WHERE id = $2",
  request: "UPDATE schedules SET run_requested_at = $1 WHERE id = $2",
  takeRequest: "UPDATE schedules SET run_requested_at = NULL WHERE id = $1 AND run_requested_at = $2",
  insertRun: `INSERT INTO schedule_runs (${RUN_COLUMNS}, heartbeat_at) VALUES (${placeholders(13, "postgres")})`,
  pruneRuns: `DELETE FROM schedule_runs WHERE schedule_id = $1 AND status <> 'running' AND seq NOT IN (
      SELECT seq FROM schedule_runs WHERE schedule_id = $1 ORDER BY started_at DESC, seq DESC LIMIT $2)`,
  updateRun: `UPDATE schedule_runs SET status = $1, ended_at = $2, output = $3, error = $4, team_run_id = $5,
      flow_id = $6, message_id = $7 WHERE id = $8`,
  getRun: "SELECT * FROM schedule_runs WHERE id = $1",
  listRuns: "SELECT * FROM schedule_runs WHERE schedule_id = $1 ORDER BY started_at DESC, seq DESC LIMIT $2",
  interrupt: "UPDATE schedule_runs SET status = 'error', ended_at = $1, error = $2 WHERE status = 'running'",
  interruptStale: `UPDATE schedule_runs SET status = 'error', ended_at = $1, error = $2
      WHERE status = 'running' AND coalesce(heartbeat_at, started_at) < $3`,
  heartbeat: "UPDATE schedule_runs SET heartbeat_at = $1 WHERE id = ANY($2::text[]) AND status = 'running'",
  runningRun: `SELECT * FROM schedule_runs WHERE schedule_id = $1 AND status = 'running'
      AND coalesce(heartbeat_at, started_at) >= $2 ORDER BY started_at DESC, seq DESC LIMIT 1`,
} as const;

/** The schedules repository on PostgreSQL. */
export class PostgresScheduleStore implements ScheduleStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async insert(schedule: ScheduleRecord): Promise<void> {
    await this.#db.run(SQL.insert, scheduleValues(schedule));
  }

  async update(schedule: ScheduleRecord, retimed: boolean): Promise<boolean> {
    const changed = retimed
      ? await this.#db.run(SQL.updateRetimed, [
          ...editableValues(schedule),
          schedule.nextRunAt ?? null,
          schedule.id,
        ])
      : await this.#db.run(SQL.updateKeepNext, [...editableValues(schedule), schedule.id]);
    return changed > 0;
  }

  async get(id: string): Promise<ScheduleRecord | undefined> {
    const row = await this.#db.one<ScheduleRow>(SQL.get, [id]);
    return row ? toSchedule(row) : undefined;
  }

  async list(ownerId?: string): Promise<ScheduleRecord[]> {
    const rows =
      ownerId === undefined
        ? await this.#db.many<ScheduleRow>(SQL.listAll)
        : await this.#db.many<ScheduleRow>(SQL.listOwner, [ownerId]);
    return rows.map(toSchedule);
  }

  async countByOwner(ownerId: string): Promise<number> {
    return (await this.#db.one<{ n: number }>(SQL.count, [ownerId]))?.n ?? 0;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.#db.run(SQL.delete, [id])) > 0;
  }

  async listDue(now: number): Promise<ScheduleRecord[]> {
    return (await this.#db.many<ScheduleRow>(SQL.listDue, [now])).map(toSchedule);
  }

  async nextWake(): Promise<number | undefined> {
    return (await this.#db.one<{ t: number | null }>(SQL.nextWake))?.t ?? undefined;
  }

  async claimDue(id: string, due: number, next: number | undefined): Promise<boolean> {
    return (await this.#db.run(SQL.claimDue, [next ?? null, id, due])) > 0;
  }

  async setNextRun(id: string, nextRunAt: number | undefined): Promise<void> {
    await this.#db.run(SQL.setNext, [nextRunAt ?? null, id]);
  }

  async setLastRun(id: string, at: number): Promise<void> {
    await this.#db.run(SQL.setLast, [at, id]);
  }

  async requestRun(id: string, at: number): Promise<boolean> {
    return (await this.#db.run(SQL.request, [at, id])) > 0;
  }

  async takeRunRequest(id: string, requestedAt: number): Promise<boolean> {
    return (await this.#db.run(SQL.takeRequest, [id, requestedAt])) > 0;
  }

  async insertRun(run: ScheduleRunRecord): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.run(SQL.insertRun, [...runValues(run), run.startedAt]);
      await tx.run(SQL.pruneRuns, [run.scheduleId, RUNS_KEPT_PER_SCHEDULE]);
    });
  }

  async updateRun(run: ScheduleRunRecord): Promise<boolean> {
    return (await this.#db.run(SQL.updateRun, runUpdateValues(run))) > 0;
  }

  async getRun(id: string): Promise<ScheduleRunRecord | undefined> {
    const row = await this.#db.one<RunRow>(SQL.getRun, [id]);
    return row ? toRun(row) : undefined;
  }

  async listRuns(scheduleId: string, limit = 50): Promise<ScheduleRunRecord[]> {
    return (await this.#db.many<RunRow>(SQL.listRuns, [scheduleId, limit])).map(toRun);
  }

  async interruptRunning(now: number, message: string, staleBefore?: number): Promise<number> {
    return staleBefore === undefined
      ? this.#db.run(SQL.interrupt, [now, message])
      : this.#db.run(SQL.interruptStale, [now, message, staleBefore]);
  }

  async heartbeat(runIds: readonly string[], now: number): Promise<void> {
    if (runIds.length > 0) await this.#db.run(SQL.heartbeat, [now, [...runIds]]);
  }

  async runningRun(scheduleId: string, freshSince: number): Promise<ScheduleRunRecord | undefined> {
    const row = await this.#db.one<RunRow>(SQL.runningRun, [scheduleId, freshSince]);
    return row ? toRun(row) : undefined;
  }
}

/** The schedules repository over a migrated PostgreSQL database (see `openPostgres`). */
export function createPostgresScheduleStore(db: PgDatabase): ScheduleStore {
  return new PostgresScheduleStore(db);
}
