/**
 * The scheduler inside the server process. The database holds what is due (`next_run_at`); one timer
 * wakes the scheduler at the earliest due time, or after `pollMs` at the latest so schedules written by
 * another process (`dimsum schedule add|run`) are picked up. Each firing records a run; a schedule
 * whose previous run is still going is skipped and the skip recorded, never doubled. Occurrences
 * missed by more than `missedGraceMs` (the server was down or asleep) follow the schedule's policy.
 *
 * Several instances may poll one database: each due time (and each run request) is claimed with a
 * compare-and-set in the store before it fires, so exactly one scheduler fires it. Ticks of one
 * scheduler never overlap. Each tick renews the heartbeat of the runs going in this process; a run
 * whose heartbeat is older than `staleMs` (its instance died) is ended as interrupted by whichever
 * instance looks next, and a run going on another instance counts as a previous run still running.
 */
import { randomUUID } from "node:crypto";
import { notFound } from "../errors.js";
import { withPresent } from "../store/present-fields.js";
import type { Actor } from "../team/types.js";
import { systemClock } from "./clock.js";
import type { RunOutcome, RunProgress, TargetExecutor } from "./run-target.js";
import type { ScheduleStore } from "./schedule-store.js";
import { countOccurrences, nextRunAfter } from "./timing.js";
import type { Clock, ScheduleRecord, ScheduleRunRecord, ScheduleRunTrigger } from "./types.js";

export const DEFAULT_POLL_MS = 15_000;
export const DEFAULT_MISSED_GRACE_MS = 60_000;
const INTERRUPTED = "interrupted: the server stopped before the run finished";

export interface SchedulerLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface SchedulerOptions {
  store: ScheduleStore;
  execute: TargetExecutor;
  /** Who a schedule's runs act as; undefined when the owner's account is gone. */
  actorOf: (userId: string) => Actor | undefined | Promise<Actor | undefined>;
  clock?: Clock;
  /** Longest sleep between looks at the database (default 15 s). */
  pollMs?: number;
  /** How late a run may start and still count as on time rather than missed (default 60 s). */
  missedGraceMs?: number;
  /** How old a running run's heartbeat may get before it counts as abandoned (default 4 polls). */
  staleMs?: number;
  log?: SchedulerLog;
}

interface InFlight {
  run: ScheduleRunRecord;
  controller: AbortController;
  done: Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Fires due schedules and records their runs. */
export class Scheduler {
  readonly #store: ScheduleStore;
  readonly #execute: TargetExecutor;
  readonly #actorOf: (userId: string) => Actor | undefined | Promise<Actor | undefined>;
  readonly #clock: Clock;
  readonly #pollMs: number;
  readonly #graceMs: number;
  readonly #staleMs: number;
  readonly #log: SchedulerLog | undefined;
  readonly #inFlight = new Map<string, InFlight>();
  #timer: unknown;
  #started = false;
  /** The current tick (and re-arm); the next one waits for it. */
  #ticking: Promise<void> = Promise.resolve();
  #arming: Promise<void> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    this.#store = options.store;
    this.#execute = options.execute;
    this.#actorOf = options.actorOf;
    this.#clock = options.clock ?? systemClock;
    this.#pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.#graceMs = options.missedGraceMs ?? DEFAULT_MISSED_GRACE_MS;
    this.#staleMs = options.staleMs ?? 4 * this.#pollMs;
    this.#log = options.log;
  }

  /** The scheduler's clock (the service computes next runs on it too). */
  get clock(): Clock {
    return this.#clock;
  }

  /**
   * Starts: runs left "running" by a stopped process (their heartbeat is stale) are ended as
   * interrupted, missed occurrences are handled by each schedule's policy, due ones fire, and the
   * timer is armed. Resolves once that first look is done.
   */
  async start(): Promise<void> {
    if (this.#started) return;
    this.#started = true;
    await this.#queueTick();
  }

  /** Stops the timer and ends runs in progress as interrupted (their team work is not cancelled here). */
  async stop(): Promise<void> {
    this.#started = false;
    if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
    this.#timer = undefined;
    await this.#ticking;
    await this.#arming;
    const running = [...this.#inFlight.values()];
    for (const flight of running) flight.controller.abort();
    await Promise.all(running.map((f) => f.done));
  }

  /** Re-reads when the next schedule is due (after a schedule was created, changed or deleted). */
  wake(): void {
    if (this.#started) void this.#arm();
  }

  /** True while a run of the schedule is in progress in this process. */
  isRunning(scheduleId: string): boolean {
    return this.#inFlight.has(scheduleId);
  }

  /** Starts a run of the schedule now (or records it skipped when one is in progress). */
  async runNow(scheduleId: string): Promise<ScheduleRunRecord> {
    const schedule = await this.#store.get(scheduleId);
    if (!schedule) throw notFound(`No schedule with id "${scheduleId}".`);
    return this.#fire(schedule, "manual", undefined);
  }

  /** Waits for a run started here to end and returns its final record. */
  async waitForRun(runId: string): Promise<ScheduleRunRecord | undefined> {
    const flight = [...this.#inFlight.values()].find((f) => f.run.id === runId);
    await flight?.done;
    return this.#store.getRun(runId);
  }

  /** Resolves when the current look at the database (and re-arming the timer) is done; runs may go on. */
  async idle(): Promise<void> {
    await this.#ticking;
    await this.#arming;
  }

  /** Resolves when no tick and no run is in progress (tests, shutdown). */
  async settled(): Promise<void> {
    await this.idle();
    while (this.#inFlight.size > 0) await Promise.all([...this.#inFlight.values()].map((f) => f.done));
  }

  /** Re-arms the timer at the earliest due time (at most `pollMs` away); re-arms never interleave. */
  #arm(): Promise<void> {
    // The chain never rejects (a failed link would stop every later one).
    this.#arming = this.#arming
      .then(async () => {
        let wake: number | undefined;
        try {
          wake = await this.#store.nextWake();
        } catch (err) {
          this.#log?.warn(`schedules: could not read when the next schedule is due: ${messageOf(err)}`);
        }
        if (this.#timer !== undefined) this.#clock.clearTimer(this.#timer);
        this.#timer = undefined;
        if (!this.#started) return;
        const now = this.#clock.now();
        const delay = wake === undefined ? this.#pollMs : Math.min(Math.max(0, wake - now), this.#pollMs);
        this.#timer = this.#clock.setTimer(() => {
          this.#timer = undefined;
          void this.#queueTick();
        }, delay);
      })
      .catch((err: unknown) => this.#log?.warn(`schedules: could not arm the timer: ${messageOf(err)}`));
    return this.#arming;
  }

  #queueTick(): Promise<void> {
    this.#ticking = this.#ticking
      .then(() => this.#tick())
      .catch((err: unknown) =>
        this.#log?.warn(`schedules: a look at the schedules failed: ${messageOf(err)}`),
      );
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    if (!this.#started) return;
    try {
      const now = this.#clock.now();
      await this.#store.heartbeat(
        [...this.#inFlight.values()].map((f) => f.run.id),
        now,
      );
      const stale = await this.#store.interruptRunning(now, INTERRUPTED, now - this.#staleMs);
      if (stale > 0) this.#log?.warn(`schedules: ${stale} run(s) were interrupted by a shutdown`);
      for (const schedule of await this.#store.listDue(now)) {
        try {
          await this.#handleDue(schedule, now);
        } catch (err) {
          // One broken schedule must not stop the others, nor spin the timer on it.
          await this.#store.setNextRun(schedule.id, undefined).catch(() => undefined);
          this.#log?.warn(`schedule "${schedule.name}" (${schedule.id}) was paused: ${messageOf(err)}`);
        }
      }
    } catch (err) {
      this.#log?.warn(`schedules: could not read due schedules: ${messageOf(err)}`);
    } finally {
      await this.#arm();
    }
  }

  async #handleDue(schedule: ScheduleRecord, now: number): Promise<void> {
    const requested = schedule.runRequestedAt;
    // Another instance may take the request first; only the one whose compare-and-set wins runs it.
    if (requested !== undefined && (await this.#store.takeRunRequest(schedule.id, requested))) {
      await this.#fire(schedule, "manual", undefined);
    }
    const due = schedule.nextRunAt;
    if (!schedule.enabled || due === undefined || due > now) return;
    if (!(await this.#store.claimDue(schedule.id, due, nextRunAfter(schedule.timing, due, now)))) return;
    if (now - due <= this.#graceMs) {
      await this.#fire(schedule, "schedule", due);
      return;
    }
    const missed = countOccurrences(schedule.timing, due, now);
    const what = `${missed} run${missed === 1 ? "" : "s"} due from ${iso(due)} (the server was down or asleep)`;
    if (schedule.missedPolicy === "run_once") {
      this.#log?.info(`schedule "${schedule.name}": running once now for ${what}`);
      await this.#fire(schedule, "missed", due);
    } else {
      await this.#skip(
        schedule,
        "missed",
        due,
        `Missed ${what}; skipped by the schedule's missed-run policy.`,
      );
    }
  }

  async #skip(
    schedule: ScheduleRecord,
    trigger: ScheduleRunTrigger,
    scheduledFor: number | undefined,
    reason: string,
  ): Promise<ScheduleRunRecord> {
    const now = this.#clock.now();
    const run: ScheduleRunRecord = {
      ...newRun(schedule, trigger, scheduledFor, now),
      endedAt: now,
      status: "skipped",
      error: reason,
    };
    await this.#store.insertRun(run);
    this.#log?.info(`schedule "${schedule.name}" (${schedule.id}) skipped: ${reason}`);
    return run;
  }

  async #fire(
    schedule: ScheduleRecord,
    trigger: ScheduleRunTrigger,
    scheduledFor: number | undefined,
  ): Promise<ScheduleRunRecord> {
    // A run here, or one another instance is still running, makes this one a skip.
    const elsewhere = this.#inFlight.has(schedule.id)
      ? undefined
      : await this.#store.runningRun(schedule.id, this.#clock.now() - this.#staleMs);
    const previous = this.#inFlight.get(schedule.id)?.run ?? elsewhere;
    if (previous) {
      return this.#skip(
        schedule,
        trigger,
        scheduledFor,
        `The previous run ${previous.id} (started ${iso(previous.startedAt)}) was still running.`,
      );
    }
    const run = newRun(schedule, trigger, scheduledFor, this.#clock.now());
    const controller = new AbortController();
    // In the map before the first await, so a second firing in this process is a skip, never a double.
    const flight: InFlight = { run, controller, done: Promise.resolve() };
    this.#inFlight.set(schedule.id, flight);
    const recorded = (async () => {
      await this.#store.insertRun({ ...run });
      await this.#store.setLastRun(schedule.id, run.startedAt);
    })();
    flight.done = recorded
      .then(() => this.#carryOut(schedule, run, controller.signal))
      .catch(() => undefined)
      .finally(() => {
        if (this.#inFlight.get(schedule.id) === flight) this.#inFlight.delete(schedule.id);
      });
    await recorded;
    return { ...run };
  }

  async #carryOut(schedule: ScheduleRecord, run: ScheduleRunRecord, signal: AbortSignal): Promise<void> {
    const actor = await this.#actorOf(schedule.ownerId);
    // Progress writes go out in order and before the final one, whatever the database's latency.
    let writes: Promise<unknown> = Promise.resolve();
    const save = (record: ScheduleRunRecord) => {
      writes = writes
        .then(() => this.#store.updateRun(record))
        .catch((err: unknown) =>
          this.#log?.warn(`schedule "${schedule.name}": could not record run ${run.id}: ${messageOf(err)}`),
        );
      return writes;
    };
    let outcome: RunOutcome;
    if (!actor) {
      outcome = {
        status: "error",
        error: `The schedule's owner "${schedule.ownerId}" no longer has an account; an admin can delete the schedule.`,
      };
    } else {
      try {
        outcome = await this.#execute(schedule, actor, signal, (progress: RunProgress) => {
          Object.assign(run, progress);
          void save({ ...run });
        });
      } catch (err) {
        outcome = { status: "error", error: messageOf(err) };
      }
    }
    if (signal.aborted && outcome.status === "error") outcome.error = INTERRUPTED;
    const final: ScheduleRunRecord = { ...run, status: outcome.status, endedAt: this.#clock.now() };
    if (outcome.output !== undefined) final.output = outcome.output;
    if (outcome.error !== undefined) final.error = outcome.error;
    await save(final);
    if (final.status === "error") {
      this.#log?.warn(
        `schedule "${schedule.name}" (${schedule.id}) run failed: ${final.error ?? "unknown error"}`,
      );
    }
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A run of `schedule` that starts `now`: running, until it ends or the caller makes it a skip. */
function newRun(
  schedule: ScheduleRecord,
  trigger: ScheduleRunTrigger,
  scheduledFor: number | undefined,
  now: number,
): ScheduleRunRecord {
  const run: ScheduleRunRecord = {
    id: randomUUID(),
    scheduleId: schedule.id,
    trigger,
    startedAt: now,
    status: "running",
  };
  return withPresent(run, { scheduledFor });
}
