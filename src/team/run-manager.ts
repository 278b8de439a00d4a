/**
 * Starts, tracks and cancels agent runs. Every run has its own id and AbortController, so several
 * agents can run at once in one channel and each can be stopped alone. Runs that share a lane (one
 * agent session) go one at a time in start order, so a session never gets two turns interleaved.
 * Lifecycle events (queued → running → done | error | cancelled) are persisted, then emitted.
 */
import { randomUUID } from "node:crypto";
import { DimsumError, toDimsumError } from "../errors.js";
import type { Usage } from "../llm/types.js";
import type { SessionRef } from "../store/types.js";
import {
  type AdmissionLimits,
  DEFAULT_ADMISSION,
  type LoadProbe,
  RunAdmission,
  type RunQueueStats,
} from "./run-admission.js";
import type {
  MessageRepository,
  NewMessage,
  RunJob,
  RunJobRepository,
  RunLeaseRepository,
  RunRepository,
  StoredRun,
} from "./team-store.js";
import type { ChannelMessage, TeamEvent, TeamRun } from "./types.js";

export interface RunRequest {
  channelId: string;
  agentId: string;
  triggerMessageId: number;
  depth: number;
  flowId?: string;
  stepIndex?: number;
  parentRunId?: string;
  /** The agent session the turn is stored in. */
  ref: SessionRef;
  requestedBy: string;
  /** Runs sharing a lane go one at a time, in start order. */
  lane: string;
  /** Also aborts the run (a parent run, or the caller's request). */
  signal?: AbortSignal;
}

export interface RunContext {
  run: TeamRun;
  signal: AbortSignal;
  /** The model the run uses, known before it ends: kept even when the run fails or is stopped. */
  setModel: (model: string) => void;
}

/**
 * The work of a run; throws to end it with an error (or cancelled, once aborted). `waiting`: the run
 * stopped to wait for a person (its checkpoint is stored); it ends `waiting`, holding nothing here.
 */
export type RunBody = (
  ctx: RunContext,
) => Promise<{ usage?: Usage; waiting?: boolean; model?: string; costUsd?: number }>;

export interface RunHandle {
  /** The run as queued. */
  run: TeamRun;
  /** Settles (never rejects) with the run's final state. */
  finished: Promise<TeamRun>;
}

interface ActiveRun {
  run: TeamRun;
  lane: string;
  controller: AbortController;
  finished: Promise<TeamRun>;
  /** The run's fencing token, where runs are leased. */
  fence?: number;
}

/** Several instances on one database: each run is leased to the instance running it. */
export interface RunLeasing {
  leases: RunLeaseRepository;
  /** This instance. */
  owner: string;
  /** How long a lease lasts unrenewed (default 30 s). */
  ttlMs?: number;
  /** How often leases are renewed and expired ones looked for (default 10 s). */
  checkEveryMs?: number;
  /** A run another instance was running when that instance died, closed here as an error. */
  onExpired: (stored: StoredRun) => void;
  /**
   * A run another instance was running when that instance died, now leased to this one (`fence`):
   * resolves true when it was resumed here; false: it is closed as an error.
   */
  adopt?: (stored: StoredRun, fence: number) => Promise<boolean>;
  /** Called after runs were taken over (each adopted or closed). */
  afterTakeOver?: () => void;
}

/** What a run whose instance died ends with. */
export const INSTANCE_LOST =
  "interrupted: the server instance running this answer stopped; another instance closed it. Ask again.";

export interface RunManagerOptions {
  runs: RunRepository;
  emit: (event: TeamEvent) => void;
  now: () => number;
  /** Receives failures of bookkeeping (the database), which must not kill the process. */
  onError: (err: unknown) => void;
  /** Leases, where several instances share the database; none: this process owns every run. */
  leasing?: RunLeasing;
  /**
   * The backstop: how many jobs (chat answers) are live at once on this instance, running or waiting
   * on a model (`runs.concurrency`). Below it an answer starts at once unless the process is busy or
   * short of memory (`admission`); others wait, here or, with `jobs`, on any instance with room.
   */
  concurrency?: number;
  /** When an answer may start besides the backstop (defaults: DEFAULT_ADMISSION). */
  admission?: Partial<Omit<AdmissionLimits, "maxLive">>;
  /** How busy the process is (tests inject one; default: this process's event loop and heap). */
  load?: LoadProbe;
  /** Runs as jobs in the shared database (with `leasing`): enqueued here, claimed by any instance. */
  jobs?: RunJobs;
}

/** The job queue of several instances, and how a claimed job becomes a run body here. */
export interface RunJobs {
  repo: RunJobRepository;
  /** The body of a claimed job. */
  bodyFor: (stored: StoredRun, job: RunJob) => RunBody;
  /** How often an instance with room looks for jobs (default 250 ms). */
  pollMs?: number;
}

/** Owns every live run of the team. */
export class RunManager {
  readonly #options: RunManagerOptions;
  readonly #active = new Map<string, ActiveRun>();
  readonly #lanes = new Map<string, Promise<void>>();
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #poll: NodeJS.Timeout | undefined;
  /** Job runs live here, and those waiting to start: bounded by load and memory, not by waiting. */
  readonly #admission: RunAdmission;
  #claiming = false;
  #closed = false;

  constructor(options: RunManagerOptions) {
    this.#options = options;
    this.#admission = new RunAdmission(
      { ...DEFAULT_ADMISSION, ...options.admission, maxLive: options.concurrency ?? DEFAULT_CONCURRENCY },
      options.load,
      options.now,
    );
    const leasing = options.leasing;
    if (leasing) {
      this.#timer = setInterval(() => void this.checkLeases(), leasing.checkEveryMs ?? 10_000);
      this.#timer.unref();
    }
    if (options.jobs && leasing) {
      this.#poll = setInterval(() => void this.claimJobs(), options.jobs.pollMs ?? 250);
      this.#poll.unref();
    }
  }

  /** The queue of chat answers waiting to start here, and what holds it. */
  queueStats(): RunQueueStats {
    return this.#admission.stats();
  }

  /**
   * Queues a chat answer as a job. With several instances it is stored unclaimed and run by whichever
   * instance claims it first (this one at once when it has room); alone, it waits for a slot here.
   */
  async submit(request: RunRequest, job: RunJob, body: RunBody): Promise<RunHandle> {
    const jobs = this.#options.jobs;
    const leasing = this.#options.leasing;
    if (!jobs || !leasing) return this.start(request, this.#slotted(body));
    const run = this.#newRun(request);
    await jobs.repo.enqueue({ run, ref: request.ref, requestedBy: request.requestedBy }, job);
    this.#emitRun(run);
    void this.claimJobs();
    return { run: { ...run }, finished: Promise.resolve({ ...run }) };
  }

  /** Claims jobs while this instance has room; runs on a timer and after each enqueue or end. */
  async claimJobs(): Promise<void> {
    const jobs = this.#options.jobs;
    const leasing = this.#options.leasing;
    if (!jobs || !leasing || this.#claiming || this.#closed) return;
    this.#claiming = true;
    try {
      while (!this.#closed && this.#admission.tryEnter()) {
        const claimed = await jobs.repo
          .claim(leasing.owner, this.#options.now() + this.#ttl())
          .catch((err) => {
            this.#admission.leave();
            throw err;
          });
        if (!claimed) {
          this.#admission.leave();
          break;
        }
        const { stored, job, fence } = claimed;
        const handle = this.#launch({ ...stored.run }, laneOf(stored.ref), jobs.bodyFor(stored, job), fence);
        void handle.finished.then(() => {
          this.#admission.leave();
          void this.claimJobs();
        });
      }
    } catch (err) {
      this.#options.onError(err);
    } finally {
      this.#claiming = false;
    }
  }

  /** The body run once this instance admits it (one process, no shared queue). */
  #slotted(body: RunBody): RunBody {
    return async (ctx) => {
      await this.#admission.enter(ctx.signal);
      try {
        return await body(ctx);
      } finally {
        this.#admission.leave();
      }
    };
  }

  /**
   * Renews this instance's leases (aborting runs whose lease another instance took) and takes over runs
   * whose instance died: a job it claimed but never started goes back in the queue, a chat answer is
   * resumed (`adopt`), any other run is closed. Runs on a timer; callable directly (at start, in tests).
   */
  async checkLeases(): Promise<void> {
    const leasing = this.#options.leasing;
    if (!leasing) return;
    const { now, onError } = this.#options;
    let released = false;
    try {
      const live = [...this.#active.keys()];
      const held = new Set(await leasing.leases.renew(leasing.owner, live, now() + this.#ttl()));
      for (const id of live) {
        if (!held.has(id)) this.#active.get(id)?.controller.abort(new DimsumError("aborted", LEASE_LOST));
      }
      const taken = await leasing.leases.takeOver(leasing.owner, now(), now() + this.#ttl());
      // Nested runs first: one is set aside for its caller before the caller resumes and asks for it.
      taken.sort((a, b) => b.stored.run.depth - a.stored.run.depth);
      for (const { stored, fence } of taken) {
        // A job claimed by an instance that died before starting it goes back in the queue.
        if (
          stored.run.status === "queued" &&
          (await this.#options.jobs?.repo.release(stored.run.id, fence))
        ) {
          released = true;
          continue;
        }
        if (leasing.adopt && (await leasing.adopt(stored, fence).catch(() => false))) continue;
        const run: TeamRun = { ...stored.run, status: "error", error: INSTANCE_LOST, endedAt: now() };
        if (!(await leasing.leases.updateFenced(run, fence))) continue;
        this.#emitRun(run);
        leasing.onExpired({ ...stored, run });
      }
      if (taken.length > 0) leasing.afterTakeOver?.();
    } catch (err) {
      onError(err);
    }
    if (released) void this.claimJobs();
  }

  #ttl(): number {
    return this.#options.leasing?.ttlMs ?? 30_000;
  }

  #newRun(request: RunRequest): TeamRun {
    const run: TeamRun = {
      id: randomUUID(),
      channelId: request.channelId,
      agentId: request.agentId,
      triggerMessageId: request.triggerMessageId,
      status: "queued",
      depth: request.depth,
      startedAt: this.#options.now(),
    };
    if (request.flowId !== undefined) run.flowId = request.flowId;
    if (request.stepIndex !== undefined) run.stepIndex = request.stepIndex;
    if (request.parentRunId !== undefined) run.parentRunId = request.parentRunId;
    return run;
  }

  /** Queues a run and starts it as soon as its lane is free. */
  async start(request: RunRequest, body: RunBody): Promise<RunHandle> {
    const { runs, now } = this.#options;
    const run = this.#newRun(request);
    const stored = { run, ref: request.ref, requestedBy: request.requestedBy };
    const leasing = this.#options.leasing;
    let fence: number | undefined;
    if (leasing) fence = await leasing.leases.insertLeased(stored, leasing.owner, now() + this.#ttl());
    else await runs.insert(stored);
    this.#emitRun(run);
    return this.#launch(run, request.lane, body, fence, request.signal);
  }

  /**
   * Runs a stored run again from where it stopped (a waiting run whose approvals were decided, which
   * the caller already claimed from `waiting`), in its lane.
   */
  async resume(
    stored: StoredRun,
    lane: string,
    body: RunBody,
    leased?: number,
    signal?: AbortSignal,
  ): Promise<RunHandle> {
    const leasing = this.#options.leasing;
    const run: TeamRun = { ...stored.run, status: "queued" };
    delete run.endedAt;
    delete run.error;
    let fence = leased;
    if (leasing && fence === undefined) {
      fence = await leasing.leases.acquire(run.id, leasing.owner, this.#options.now() + this.#ttl());
    }
    return this.#launch(run, lane, body, fence, signal);
  }

  #launch(
    run: TeamRun,
    lane: string,
    body: RunBody,
    fence: number | undefined,
    outer?: AbortSignal,
  ): RunHandle {
    const controller = new AbortController();
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener("abort", forward, { once: true });

    const previous = this.#lanes.get(lane) ?? Promise.resolve();
    const finished = previous.then(() => this.#execute(run, controller, body, fence));
    const laneTail = finished.then(() => undefined);
    this.#lanes.set(lane, laneTail);
    this.#active.set(run.id, { run, lane, controller, finished, ...(fence !== undefined ? { fence } : {}) });
    void finished.then(() => {
      outer?.removeEventListener("abort", forward);
      this.#active.delete(run.id);
      if (this.#lanes.get(lane) === laneTail) this.#lanes.delete(lane);
    });
    return { run: { ...run }, finished };
  }

  /** The live runs (queued or running here) of a lane, oldest first. */
  activeInLane(lane: string): TeamRun[] {
    return [...this.#active.values()].filter((a) => a.lane === lane).map((a) => ({ ...a.run }));
  }

  /** Settles once the run ends here (or at once when it is not live here). */
  async settled(runId: string): Promise<void> {
    await this.#active.get(runId)?.finished;
  }

  /** Aborts a live run and waits for it to settle; undefined when the run is not live. */
  async cancel(runId: string, reason = "The run was cancelled."): Promise<TeamRun | undefined> {
    const active = this.#active.get(runId);
    if (!active) return undefined;
    active.controller.abort(new DimsumError("aborted", reason));
    return active.finished;
  }

  /**
   * Whether this instance still holds the run (always, without leases): checked before anything the
   * run says is stored for good, so an instance that lost its lease posts nothing after the fact.
   */
  async holds(runId: string): Promise<boolean> {
    const leases = this.#options.leasing?.leases;
    const active = this.#active.get(runId);
    if (!leases || active?.fence === undefined) return true;
    if (await leases.isCurrent(runId, active.fence)) return true;
    active.controller.abort(new DimsumError("aborted", LEASE_LOST));
    return false;
  }

  /**
   * Stores a message the run posts only while this instance holds the run, like `holds` followed by
   * `messages.insert`, but checked in the same statement where leases are kept; undefined (and the
   * run aborted) when another instance took it.
   */
  async insertIfHeld(
    runId: string,
    messages: MessageRepository,
    message: NewMessage,
  ): Promise<ChannelMessage | undefined> {
    const leases = this.#options.leasing?.leases;
    const active = this.#active.get(runId);
    if (!leases || active?.fence === undefined) return messages.insert(message);
    const stored = await leases.insertMessageIfCurrent(runId, active.fence, message);
    if (!stored) active.controller.abort(new DimsumError("aborted", LEASE_LOST));
    return stored;
  }

  /** True while the run is queued or running in this process. */
  isActive(runId: string): boolean {
    return this.#active.has(runId);
  }

  /** Ids of the live runs of a channel. */
  activeIn(channelId: string): string[] {
    return [...this.#active.values()].filter((a) => a.run.channelId === channelId).map((a) => a.run.id);
  }

  /** The live run's current state. */
  snapshot(runId: string): TeamRun | undefined {
    const active = this.#active.get(runId);
    return active ? { ...active.run } : undefined;
  }

  /** Aborts every live run and waits until all have settled; stops the lease checks. */
  async cancelAll(reason: string): Promise<void> {
    this.#closed = true;
    this.#admission.close();
    if (this.#timer) clearInterval(this.#timer);
    if (this.#poll) clearInterval(this.#poll);
    const live = [...this.#active.values()];
    for (const active of live) active.controller.abort(new DimsumError("aborted", reason));
    await Promise.all(live.map((a) => a.finished));
  }

  async #execute(run: TeamRun, controller: AbortController, body: RunBody, fence?: number): Promise<TeamRun> {
    const { signal } = controller;
    const save = async () => {
      if (!(await this.#save(run, fence))) controller.abort(new DimsumError("aborted", LEASE_LOST));
    };
    try {
      if (!signal.aborted) {
        run.status = "running";
        run.startedAt = this.#options.now();
        await save();
        try {
          const setModel = (model: string) => {
            run.model = model;
          };
          const result = await body({ run: { ...run }, signal, setModel });
          run.status = result.waiting ? "waiting" : "done";
          if (result.usage) run.usage = result.usage;
          if (result.model) run.model = result.model;
          if (result.costUsd !== undefined) run.costUsd = result.costUsd;
        } catch (err) {
          run.status = signal.aborted ? "cancelled" : "error";
          run.error = signal.aborted ? abortReason(signal) : toDimsumError(err).message;
        }
      } else {
        run.status = "cancelled";
        run.error = abortReason(signal);
      }
      if (run.status !== "waiting") run.endedAt = this.#options.now();
      await save();
    } catch (err) {
      this.#options.onError(err);
    }
    return { ...run };
  }

  /** Saves and announces the run; false (nothing saved) when another instance took it over. */
  async #save(run: TeamRun, fence: number | undefined): Promise<boolean> {
    const leases = this.#options.leasing?.leases;
    if (leases && fence !== undefined) {
      if (!(await leases.updateFenced(run, fence))) return false;
    } else {
      await this.#options.runs.update(run);
    }
    this.#emitRun(run);
    return true;
  }

  #emitRun(run: TeamRun): void {
    this.#options.emit({ type: "run", channelId: run.channelId, run: { ...run } });
  }
}

/** Runs sharing a lane (one agent session) go one at a time, in order. */
export function laneOf(ref: SessionRef): string {
  return `${ref.userId}\u0000${ref.sessionId}`;
}

/**
 * The backstop of live chat answers on one instance when the config sets no `runs.concurrency`: far
 * above the answers live at once in a team of 1,000 people (about 250 at a busy hour, see BENCHMARKS.md),
 * so what holds answers back is the process's load, not a count.
 */
export const DEFAULT_CONCURRENCY = DEFAULT_ADMISSION.maxLive;

const LEASE_LOST = "Another server instance took over this run after this one stopped renewing it.";

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return "The run was cancelled.";
}
