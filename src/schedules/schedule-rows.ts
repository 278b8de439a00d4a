/**
 * Rows of `schedules` and `schedule_runs` as both backends return them (the same column names on
 * SQLite and PostgreSQL, times as epoch milliseconds), and their mapping to records.
 */
import { withPresent } from "../store/present-fields.js";
import type {
  MissedPolicy,
  ScheduleRecord,
  ScheduleRunRecord,
  ScheduleRunStatus,
  ScheduleRunTrigger,
  ScheduleTarget,
  ScheduleTiming,
} from "./types.js";

export interface ScheduleRow {
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

export interface RunRow {
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

export function toSchedule(row: ScheduleRow): ScheduleRecord {
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
  return withPresent(record, {
    lastRunAt: row.last_run_at,
    nextRunAt: row.next_run_at,
    runRequestedAt: row.run_requested_at,
  });
}

export function toRun(row: RunRow): ScheduleRunRecord {
  const run: ScheduleRunRecord = {
    id: row.id,
    scheduleId: row.schedule_id,
    trigger: row.run_trigger,
    startedAt: row.started_at,
    status: row.status,
  };
  return withPresent(run, {
    scheduledFor: row.scheduled_for,
    endedAt: row.ended_at,
    output: row.output,
    error: row.error,
    teamRunId: row.team_run_id,
    flowId: row.flow_id,
    messageId: row.message_id,
  });
}

/** A schedule's columns, in the order of `SCHEDULE_COLUMNS`. */
export function scheduleValues(s: ScheduleRecord): unknown[] {
  return [
    s.id,
    s.name,
    s.ownerId,
    s.enabled ? 1 : 0,
    JSON.stringify(s.timing),
    JSON.stringify(s.target),
    s.missedPolicy,
    s.createdAt,
    s.updatedAt,
    s.lastRunAt ?? null,
    s.nextRunAt ?? null,
    s.runRequestedAt ?? null,
  ];
}

export const SCHEDULE_COLUMNS =
  "id, name, owner_id, enabled, timing_json, target_json, missed_policy, created_at, updated_at, last_run_at, next_run_at, run_requested_at";

/** A run's columns, in the order of `RUN_COLUMNS`. */
export function runValues(r: ScheduleRunRecord): unknown[] {
  return [
    r.id,
    r.scheduleId,
    r.trigger,
    r.scheduledFor ?? null,
    r.startedAt,
    r.endedAt ?? null,
    r.status,
    r.output ?? null,
    r.error ?? null,
    r.teamRunId ?? null,
    r.flowId ?? null,
    r.messageId ?? null,
  ];
}

export const RUN_COLUMNS =
  "id, schedule_id, run_trigger, scheduled_for, started_at, ended_at, status, output, error, team_run_id, flow_id, message_id";
