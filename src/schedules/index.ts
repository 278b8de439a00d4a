/** Schedules: cron (with time zones), one-shot and interval runs of agents and collaboration chains. */
export { systemClock } from "./clock.js";
export { createManageScheduleTool, MANAGE_SCHEDULE_TOOL } from "./manage-schedule-tool.js";
export {
  agentMessageText,
  chainMessageText,
  createTeamExecutor,
  type RunOutcome,
  type RunProgress,
  type TargetExecutor,
} from "./run-target.js";
export {
  MAX_PROMPT_CHARS,
  missedPolicySchema,
  runsQuerySchema,
  scheduleInputSchema,
  schedulePatchSchema,
  targetSchema,
  timingSchema,
} from "./schedule-schemas.js";
export {
  MAX_SCHEDULES_PER_OWNER,
  type ScheduleEngine,
  ScheduleService,
  type ScheduleServiceDeps,
  type ScheduleView,
  type TargetDirectory,
} from "./schedule-service.js";
export {
  createPostgresScheduleStore,
  createSqliteScheduleStore,
  PostgresScheduleStore,
  RUNS_KEPT_PER_SCHEDULE,
  ScheduleRepository,
  type ScheduleStore,
  SqliteScheduleStore,
} from "./schedule-store.js";
export {
  DEFAULT_MISSED_GRACE_MS,
  DEFAULT_POLL_MS,
  Scheduler,
  type SchedulerLog,
  type SchedulerOptions,
} from "./scheduler.js";
export { createScheduling, type Scheduling, type SchedulingDeps } from "./setup.js";
export {
  countOccurrences,
  describeTiming,
  firstRunAt,
  isValidTimezone,
  MIN_INTERVAL_SECONDS,
  nextRunAfter,
  validateTiming,
} from "./timing.js";
export type * from "./types.js";
