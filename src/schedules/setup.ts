/** Wires the schedule store, the scheduler and the service over one database and team (the server). */
import type { Actor, Team } from "../team/types.js";
import { createTeamExecutor } from "./run-target.js";
import { ScheduleService } from "./schedule-service.js";
import type { ScheduleStore } from "./schedule-store.js";
import { Scheduler, type SchedulerLog } from "./scheduler.js";
import type { Clock } from "./types.js";

export interface SchedulingDeps {
  /** The schedules repository (`createSqliteScheduleStore(db)` or `createPostgresScheduleStore(pg)`). */
  store: ScheduleStore;
  team: Team;
  /** The current account behind a user id (e.g. from the server's UserStore). */
  actorOf: (userId: string) => Actor | undefined | Promise<Actor | undefined>;
  clock?: Clock;
  pollMs?: number;
  missedGraceMs?: number;
  log?: SchedulerLog;
}

export interface Scheduling {
  store: ScheduleStore;
  scheduler: Scheduler;
  service: ScheduleService;
}

/** Builds the schedules feature; await `scheduler.start()` once the server is up and `stop()` before the team closes. */
export function createScheduling(deps: SchedulingDeps): Scheduling {
  const { store } = deps;
  const scheduler = new Scheduler({
    store,
    execute: createTeamExecutor(deps.team),
    actorOf: deps.actorOf,
    ...(deps.clock ? { clock: deps.clock } : {}),
    ...(deps.pollMs !== undefined ? { pollMs: deps.pollMs } : {}),
    ...(deps.missedGraceMs !== undefined ? { missedGraceMs: deps.missedGraceMs } : {}),
    ...(deps.log ? { log: deps.log } : {}),
  });
  const service = new ScheduleService({ store, scheduler, team: deps.team, actorOf: deps.actorOf });
  return { store, scheduler, service };
}
