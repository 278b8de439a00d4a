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
import type { RunRepository } from "./team-store.js";
import type { TeamEvent, TeamRun } from "./types.js";

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
}

/** The work of a run; throws to end it with an error (or cancelled, once aborted). */
export type RunBody = (ctx: RunContext) => Promise<{ usage?: Usage }>;

export interface RunHandle {
  /** The run as queued. */
  run: TeamRun;
  /** Settles (never rejects) with the run's final state. */
  finished: Promise<TeamRun>;
}

interface ActiveRun {
  run: TeamRun;
  controller: AbortController;
  finished: Promise<TeamRun>;
}

export interface RunManagerOptions {
  runs: RunRepository;
  emit: (event: TeamEvent) => void;
  now: () => number;
  /** Receives failures of bookkeeping (the database), which must not kill the process. */
  onError: (err: unknown) => void;
}

/** Owns every live run of the team. */
export class RunManager {
  readonly #options: RunManagerOptions;
  readonly #active = new Map<string, ActiveRun>();
  readonly #lanes = new Map<string, Promise<void>>();

  constructor(options: RunManagerOptions) {
    this.#options = options;
  }

  /** Queues a run and starts it as soon as its lane is free. */
  async start(request: RunRequest, body: RunBody): Promise<RunHandle> {
    const { runs, now } = this.#options;
    const controller = new AbortController();
    const run: TeamRun = {
      id: randomUUID(),
      channelId: request.channelId,
      agentId: request.agentId,
      triggerMessageId: request.triggerMessageId,
      status: "queued",
      depth: request.depth,
      startedAt: now(),
    };
    if (request.flowId !== undefined) run.flowId = request.flowId;
    if (request.stepIndex !== undefined) run.stepIndex = request.stepIndex;
    if (request.parentRunId !== undefined) run.parentRunId = request.parentRunId;
    await runs.insert({ run, ref: request.ref, requestedBy: request.requestedBy });
    this.#emitRun(run);

    const outer = request.signal;
    const forward = () => controller.abort(outer?.reason);
    if (outer?.aborted) forward();
    else outer?.addEventListener("abort", forward, { once: true });

    const previous = this.#lanes.get(request.lane) ?? Promise.resolve();
    const finished = previous.then(() => this.#execute(run, controller, body));
    const laneTail = finished.then(() => undefined);
    this.#lanes.set(request.lane, laneTail);
    this.#active.set(run.id, { run, controller, finished });
    void finished.then(() => {
      outer?.removeEventListener("abort", forward);
      this.#active.delete(run.id);
      if (this.#lanes.get(request.lane) === laneTail) this.#lanes.delete(request.lane);
    });
    return { run: { ...run }, finished };
  }

  /** Aborts a live run and waits for it to settle; undefined when the run is not live. */
  async cancel(runId: string, reason = "The run was cancelled."): Promise<TeamRun | undefined> {
    const active = this.#active.get(runId);
    if (!active) return undefined;
    active.controller.abort(new DimsumError("aborted", reason));
    return active.finished;
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

  /** Aborts every live run and waits until all have settled. */
  async cancelAll(reason: string): Promise<void> {
    const live = [...this.#active.values()];
    for (const active of live) active.controller.abort(new DimsumError("aborted", reason));
    await Promise.all(live.map((a) => a.finished));
  }

  async #execute(run: TeamRun, controller: AbortController, body: RunBody): Promise<TeamRun> {
    const { signal } = controller;
    try {
      if (!signal.aborted) {
        run.status = "running";
        run.startedAt = this.#options.now();
        await this.#save(run);
        try {
          const result = await body({ run: { ...run }, signal });
          run.status = "done";
          if (result.usage) run.usage = result.usage;
        } catch (err) {
          run.status = signal.aborted ? "cancelled" : "error";
          run.error = signal.aborted ? abortReason(signal) : toDimsumError(err).message;
        }
      } else {
        run.status = "cancelled";
        run.error = abortReason(signal);
      }
      run.endedAt = this.#options.now();
      await this.#save(run);
    } catch (err) {
      this.#options.onError(err);
    }
    return { ...run };
  }

  async #save(run: TeamRun): Promise<void> {
    await this.#options.runs.update(run);
    this.#emitRun(run);
  }

  #emitRun(run: TeamRun): void {
    this.#options.emit({ type: "run", channelId: run.channelId, run: { ...run } });
  }
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name !== "AbortError") return reason.message;
  return "The run was cancelled.";
}
