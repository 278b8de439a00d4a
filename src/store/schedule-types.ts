/**
 * The stored shape of a schedule and its runs, low in the layers so team templates (which carry
 * schedules) and the scheduler both read it. Schedules: work an agent or a collaboration chain does on its own, at cron times (with a time zone),
 * once at a given instant, or every N seconds. Timestamps are epoch milliseconds, as in the team API.
 */

/** When a schedule fires. */
export type ScheduleTiming =
  /** A 5-field (or 6-field, with seconds) cron expression read in an IANA time zone. */
  | { kind: "cron"; expression: string; timezone: string }
  /** One run at an ISO 8601 instant (normalised to UTC `toISOString()` form). */
  | { kind: "once"; at: string }
  /** Every `seconds` (at least 60), counted from the schedule's creation or last timing change. */
  | { kind: "interval"; seconds: number };

/** What a run does. */
export type ScheduleTarget =
  /** Posts the prompt to the channel addressed to the agent, which answers there. */
  | { type: "agent"; agentId: string; prompt: string; channelId: string }
  /** Starts the channel's collaboration chain with `input`. */
  | { type: "chain"; channelId: string; input: string };

/** What happens to runs that were due while the server was down (or asleep): skip them, or run once. */
export type MissedPolicy = "skip" | "run_once";

export interface ScheduleRecord {
  id: string;
  name: string;
  /** The user the runs act as (their access applies when a run starts). */
  ownerId: string;
  enabled: boolean;
  timing: ScheduleTiming;
  target: ScheduleTarget;
  missedPolicy: MissedPolicy;
  createdAt: number;
  updatedAt: number;
  lastRunAt?: number;
  /** Undefined when disabled or when a one-shot schedule has fired. */
  nextRunAt?: number;
  /** A run asked for by `dimsum schedule run` and not yet started by the server. */
  runRequestedAt?: number;
}

export interface ScheduleInput {
  name: string;
  enabled?: boolean;
  timing: ScheduleTiming;
  target: ScheduleTarget;
  missedPolicy?: MissedPolicy;
}

export type SchedulePatch = Partial<ScheduleInput>;

export type ScheduleRunStatus = "running" | "done" | "error" | "skipped";

/** Why a run started: its time came, someone asked, or it stands for runs missed while down. */
export type ScheduleRunTrigger = "schedule" | "manual" | "missed";

export interface ScheduleRunRecord {
  id: string;
  scheduleId: string;
  trigger: ScheduleRunTrigger;
  /** The occurrence this run is for (undefined for manual runs). */
  scheduledFor?: number;
  startedAt: number;
  endedAt?: number;
  status: ScheduleRunStatus;
  /** The agent's answer, or the chain's last step output. */
  output?: string;
  /** What went wrong (error), or why the run was skipped (skipped). */
  error?: string;
  /** The team run of an agent target. */
  teamRunId?: string;
  /** The collaboration flow of a chain target. */
  flowId?: string;
  /** The message the run posted to start the work. */
  messageId?: number;
}
