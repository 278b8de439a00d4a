/**
 * Drives collaboration flows: persists every transition of the state machine in flows.ts, emits it,
 * starts step runs and reacts to their outcome. Transitions of one flow are serialised, so a person's
 * action and a finishing step never interleave.
 */
import { randomUUID } from "node:crypto";
import { notFound } from "../errors.js";
import {
  applyAction,
  beginFlow,
  completeStep,
  createFlow,
  failStep,
  markStepRunning,
  suspendFlow,
  type Transition,
} from "./flows.js";
import { KeyedLock } from "./keyed-lock.js";
import type { FlowRepository } from "./team-store.js";
import type { ChainStep, FlowAction, FlowRecord, TeamEvent } from "./types.js";

export type StepOutcome = { ok: true; output: string } | { ok: false; error: string };

/** Starts the run of a flow step; `done` settles with its output or failure. */
export type StepLauncher = (
  flow: FlowRecord,
  index: number,
) => Promise<{ runId: string; done: Promise<StepOutcome> }>;

export interface FlowRunnerOptions {
  flows: FlowRepository;
  emit: (event: TeamEvent) => void;
  now: () => number;
  launch: StepLauncher;
  cancelRun: (runId: string) => Promise<unknown>;
  onError: (err: unknown) => void;
}

/** Owns the flows of a team. */
export class FlowRunner {
  readonly #options: FlowRunnerOptions;
  readonly #lock = new KeyedLock();
  readonly #pending = new Set<Promise<unknown>>();
  #closing = false;

  constructor(options: FlowRunnerOptions) {
    this.#options = options;
  }

  /**
   * After a restart, flows that were running wait for a person to resume them, unless the run of
   * their running step is still open (`isOpen`): resumed here, or live on another instance.
   */
  async recover(isOpen: (runId: string) => Promise<boolean>): Promise<void> {
    const { flows, now } = this.#options;
    for (const status of ["idle", "running", "paused"] as const) {
      for (const listed of await flows.listByStatus(status)) {
        await this.#lock.run(listed.id, async () => {
          const flow = await flows.get(listed.id);
          if (!flow || flow.status !== status) return;
          const running = flow.steps.find((s) => s.status === "running");
          if (status === "paused" && !running) return;
          if (running?.runId && (await isOpen(running.runId))) return;
          await this.#save(suspendFlow(flow, now()));
        });
      }
    }
  }

  /**
   * A step's run whose instance died goes on (`resume`, from its checkpoint) and the flow with it,
   * when the flow still waits for that run; false otherwise (nothing was started).
   */
  resumeStep(
    flowId: string,
    runId: string,
    resume: (flow: FlowRecord) => Promise<{ runId: string; done: Promise<StepOutcome> }>,
  ): Promise<boolean> {
    return this.#lock.run(flowId, async () => {
      const flow = await this.#options.flows.get(flowId);
      const index = flow?.steps.findIndex((s) => s.runId === runId && s.status === "running") ?? -1;
      if (!flow || index < 0 || flow.status === "stopped" || flow.status === "done") return false;
      const { done } = await resume(flow);
      this.#track(done.then((outcome) => this.#finished(flow.id, index, runId, outcome)));
      return true;
    });
  }

  /** A step's run was closed after its instance died (not resumed): the flow waits for a person. */
  stepLost(flowId: string, runId: string): Promise<void> {
    return this.#lock.run(flowId, async () => {
      const flow = await this.#options.flows.get(flowId);
      if (!flow?.steps.some((s) => s.runId === runId && s.status === "running")) return;
      await this.#save(suspendFlow(flow, this.#options.now()));
    });
  }

  /** Creates a flow for the chain and starts step 0. */
  async start(
    channelId: string,
    triggerMessageId: number,
    chain: readonly ChainStep[],
    input: string,
  ): Promise<FlowRecord> {
    const { now } = this.#options;
    const flow = createFlow(`flow_${randomUUID()}`, channelId, triggerMessageId, chain, input, now());
    return this.#lock.run(flow.id, async () => {
      await this.#save(flow);
      return this.#apply(beginFlow(flow, now()));
    });
  }

  async get(flowId: string): Promise<FlowRecord> {
    const flow = await this.#options.flows.get(flowId);
    if (!flow) throw notFound(`No flow with id "${flowId}".`);
    return flow;
  }

  /** Applies a person's action (pause, resume, approve, stop, skip, retry, edit). */
  act(flowId: string, action: FlowAction): Promise<FlowRecord> {
    return this.#lock.run(flowId, async () => {
      const transition = applyAction(await this.get(flowId), action, this.#options.now());
      const flow = await this.#apply(transition);
      if (transition.cancelRunId) this.#track(this.#options.cancelRun(transition.cancelRunId));
      return flow;
    });
  }

  /** Stops reacting to step outcomes as failures: steps cut off by shutdown wait to be resumed. */
  async close(): Promise<void> {
    this.#closing = true;
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Saves the transition, then starts the step it asks for. */
  async #apply(transition: Transition): Promise<FlowRecord> {
    let { flow } = transition;
    await this.#save(flow);
    if (transition.start !== undefined && !this.#closing) {
      flow = await this.#startStep(flow, transition.start);
    }
    return flow;
  }

  async #startStep(flow: FlowRecord, index: number): Promise<FlowRecord> {
    const { runId, done } = await this.#options.launch(flow, index);
    const running = markStepRunning(flow, index, runId, this.#options.now());
    await this.#save(running);
    this.#track(done.then((outcome) => this.#finished(flow.id, index, runId, outcome)));
    return running;
  }

  #finished(flowId: string, index: number, runId: string, outcome: StepOutcome): Promise<void> {
    return this.#lock.run(flowId, async () => {
      const flow = await this.#options.flows.get(flowId);
      const step = flow?.steps[index];
      // A stopped flow, or a step re-run since, no longer waits for this run.
      if (!flow || !step || step.runId !== runId || step.status !== "running") return;
      const now = this.#options.now();
      if (this.#closing && !outcome.ok) {
        await this.#save(suspendFlow(flow, now));
        return;
      }
      await this.#apply(
        outcome.ok
          ? completeStep(flow, index, outcome.output, now)
          : failStep(flow, index, outcome.error, now),
      );
    });
  }

  async #save(flow: FlowRecord): Promise<void> {
    await this.#options.flows.save(flow);
    this.#options.emit({ type: "flow", channelId: flow.channelId, flow });
  }

  #track(promise: Promise<unknown>): void {
    const tracked = promise.catch((err: unknown) => this.#options.onError(err));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }
}
