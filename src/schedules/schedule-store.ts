/**
 * Schedules and their runs in SQLite (tables `schedules` and `schedule_runs`). Synchronous, like
 * better-sqlite3; the server's scheduler and the `dimsum schedule` CLI share the same file, so the
 * database, not memory, is the truth about what exists and when it is due.
 */
import type { Database } from "better-sqlite3";
import type {
  MissedPolicy,
  ScheduleRecord,
  ScheduleRunRecord,
  ScheduleRunStatus,
  ScheduleRunTrigger,
  ScheduleTarget,
  ScheduleTiming,
} from "./types.js";

/** Runs kept per schedule; older ones are pruned when a new one is recorded. */
export const RUNS_KEPT_PER_SCHEDULE = 100;

interface ScheduleRow {
  id: string;
  name: string;
  owner_id: string;
  enabled: number;
  timing_json: string;
  target_json: string;
  missed_policy: MissedPolicy;
  created_at: number;
  updated_at: number;
  last_run_at: number | null;
  next_run_at: number | null;
  run_requested_at: number | null;
}

interface RunRow {
  id: string;
  schedule_id: string;
  run_trigger: ScheduleRunTrigger;
  scheduled_for: number | null;
  started_at: number;
  ended_at: number | null;
  status: ScheduleRunStatus;
  output: string | null;
  error: string | null;
  team_run_id: string | null;
  flow_id: string | null;
  message_id: number | null;
}

function toSchedule(row: ScheduleRow): ScheduleRecord {
  const record: ScheduleRecord = {
    id: row.id,
    name: row.name,
    ownerId: row.owner_id,
    enabled: row.enabled === 1,
    timing: JSON.parse(row.timing_json) as ScheduleTiming,
    target: JSON.parse(row.target_json) as ScheduleTarget,
    missedPolicy: row.missed_policy,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.last_run_at !== null) record.lastRunAt = row.last_run_at;
  if (row.next_run_at !== null) record.nextRunAt = row.next_run_at;
  if (row.run_requested_at !== null) record.runRequestedAt = row.run_requested_at;
  return record;
}

function toRun(row: RunRow): ScheduleRunRecord {
  const run: ScheduleRunRecord = {
    id: row.id,
    scheduleId: row.schedule_id,
    trigger: row.run_trigger,
    startedAt: row.started_at,
    status: row.status,
  };
  if (row.scheduled_for !== null) run.scheduledFor = row.scheduled_for;
  if (row.ended_at !== null) run.endedAt = row.ended_at;
  if (row.output !== null) run.output = row.output;
  if (row.error !== null) run.error = row.error;
  if (row.team_run_id !== null) run.teamRunId = row.team_run_id;
  if (row.flow_id !== null) run.flowId = row.flow_id;
  if (row.message_id !== null) run.messageId = row.message_id;
  return run;
}

function scheduleParams(s: ScheduleRecord) {
  return {
    id: s.id,
    name: s.name,
    owner_id: s.ownerId,
    enabled: s.enabled ? 1 : 0,
    timing_json: JSON.stringify(s.timing),
    target_json: JSON.stringify(s.target),
    missed_policy: s.missedPolicy,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    last_run_at: s.lastRunAt ?? null,
    next_run_at: s.nextRunAt ?? null,
    run_requested_at: s.runRequestedAt ?? null,
  };
}

function runParams(r: ScheduleRunRecord) {
  return {
    id: r.id,
    schedule_id: r.scheduleId,
    run_trigger: r.trigger,
    scheduled_for: r.scheduledFor ?? null,
    started_at: r.startedAt,
    ended_at: r.endedAt ?? null,
    status: r.status,
    output: r.output ?? null,
    error: r.error ?? null,
    team_run_id: r.teamRunId ?? null,
    flow_id: r.flowId ?? null,
    message_id: r.messageId ?? null,
  };
}

/** The schedules repository. */
export class ScheduleStore {
  constructor(private readonly db: Database) {}

  /** Stores a new schedule. */
  insert(schedule: ScheduleRecord): void {
    this.db
      .prepare(
        `INSERT INTO schedules (id, name, owner_id, enabled, timing_json, target_json, missed_policy,
           created_at, updated_at, last_run_at, next_run_at, run_requested_at)
         VALUES (@id, @name, @owner_id, @enabled, @timing_json, @target_json, @missed_policy,
           @created_at, @updated_at, @last_run_at, @next_run_at, @run_requested_at)`,
      )
      .run(scheduleParams(schedule));
  }

  /** Replaces a schedule's fields; false when it no longer exists. */
  update(schedule: ScheduleRecord): boolean {
    const result = this.db
      .prepare(
        `UPDATE schedules SET name = @name, owner_id = @owner_id, enabled = @enabled,
           timing_json = @timing_json, target_json = @target_json, missed_policy = @missed_policy,
           created_at = @created_at, updated_at = @updated_at, last_run_at = @last_run_at,
           next_run_at = @next_run_at, run_requested_at = @run_requested_at
         WHERE id = @id`,
      )
      .run(scheduleParams(schedule));
    return result.changes > 0;
  }

  /** One schedule by id. */
  get(id: string): ScheduleRecord | undefined {
    const row = this.db.prepare("SELECT * FROM schedules WHERE id = ?").get(id) as ScheduleRow | undefined;
    return row ? toSchedule(row) : undefined;
  }

  /** Every schedule, or one owner's, oldest first. */
  list(ownerId?: string): ScheduleRecord[] {
    const rows = (
      ownerId === undefined
        ? this.db.prepare("SELECT * FROM schedules ORDER BY created_at, id").all()
        : this.db.prepare("SELECT * FROM schedules WHERE owner_id = ? ORDER BY created_at, id").all(ownerId)
    ) as ScheduleRow[];
    return rows.map(toSchedule);
  }

  /** How many schedules a user owns. */
  countByOwner(ownerId: string): number {
    const row = this.db.prepare("SELECT count(*) AS n FROM schedules WHERE owner_id = ?").get(ownerId) as {
      n: number;
    };
    return row.n;
  }

  /** Deletes a schedule and its runs; false when there was none. */
  delete(id: string): boolean {
    return this.db.prepare("DELETE FROM schedules WHERE id = ?").run(id).changes > 0;
  }

  /** Enabled schedules whose next run has come, and any schedule with a requested run. */
  listDue(now: number): ScheduleRecord[] {
    const rows = this.db
      .prepare(
        `SELECT * FROM schedules
         WHERE (enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?) OR run_requested_at IS NOT NULL
         ORDER BY coalesce(next_run_at, run_requested_at), id`,
      )
      .all(now) as ScheduleRow[];
    return rows.map(toSchedule);
  }

  /** The earliest time anything is due (a requested run counts as due now), or undefined. */
  nextWake(): number | undefined {
    const row = this.db
      .prepare(
        `SELECT min(t) AS t FROM (
           SELECT min(next_run_at) AS t FROM schedules WHERE enabled = 1 AND next_run_at IS NOT NULL
           UNION ALL SELECT min(run_requested_at) FROM schedules WHERE run_requested_at IS NOT NULL)`,
      )
      .get() as { t: number | null };
    return row.t ?? undefined;
  }

  /** Sets (or clears) when the schedule next fires. */
  setNextRun(id: string, nextRunAt: number | undefined): void {
    this.db.prepare("UPDATE schedules SET next_run_at = ? WHERE id = ?").run(nextRunAt ?? null, id);
  }

  /** Notes that a run started. */
  setLastRun(id: string, at: number): void {
    this.db.prepare("UPDATE schedules SET last_run_at = ? WHERE id = ?").run(at, id);
  }

  /** Forgets a run request (it has been started). */
  clearRunRequest(id: string): void {
    this.db.prepare("UPDATE schedules SET run_requested_at = NULL WHERE id = ?").run(id);
  }

  /** Asks the server's scheduler to run the schedule on its next tick; false when it does not exist. */
  requestRun(id: string, at: number): boolean {
    return this.db.prepare("UPDATE schedules SET run_requested_at = ? WHERE id = ?").run(at, id).changes > 0;
  }

  /** Records a run (started, or skipped) and prunes the schedule's oldest runs. */
  insertRun(run: ScheduleRunRecord): void {
    const insert = this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO schedule_runs (id, schedule_id, run_trigger, scheduled_for, started_at, ended_at, status,
             output, error, team_run_id, flow_id, message_id)
           VALUES (@id, @schedule_id, @run_trigger, @scheduled_for, @started_at, @ended_at, @status,
             @output, @error, @team_run_id, @flow_id, @message_id)`,
        )
        .run(runParams(run));
      this.db
        .prepare(
          `DELETE FROM schedule_runs WHERE schedule_id = ? AND status <> 'running' AND rowid NOT IN (
             SELECT rowid FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?)`,
        )
        .run(run.scheduleId, run.scheduleId, RUNS_KEPT_PER_SCHEDULE);
    });
    insert();
  }

  /** Saves a run's new state; false when it (or its schedule) was deleted meanwhile. */
  updateRun(run: ScheduleRunRecord): boolean {
    const result = this.db
      .prepare(
        `UPDATE schedule_runs SET status = @status, ended_at = @ended_at, output = @output, error = @error,
           team_run_id = @team_run_id, flow_id = @flow_id, message_id = @message_id WHERE id = @id`,
      )
      .run(runParams(run));
    return result.changes > 0;
  }

  /** One run by id. */
  getRun(id: string): ScheduleRunRecord | undefined {
    const row = this.db.prepare("SELECT * FROM schedule_runs WHERE id = ?").get(id) as RunRow | undefined;
    return row ? toRun(row) : undefined;
  }

  /** A schedule's runs, newest first. */
  listRuns(scheduleId: string, limit = 50): ScheduleRunRecord[] {
    const rows = this.db
      .prepare(
        "SELECT * FROM schedule_runs WHERE schedule_id = ? ORDER BY started_at DESC, rowid DESC LIMIT ?",
      )
      .all(scheduleId, limit) as RunRow[];
    return rows.map(toRun);
  }

  /** Ends every run still marked running (left by a stop or crash) as an error; returns how many. */
  interruptRunning(now: number, message: string): number {
    return this.db
      .prepare("UPDATE schedule_runs SET status = 'error', ended_at = ?, error = ? WHERE status = 'running'")
      .run(now, message).changes;
  }
}
