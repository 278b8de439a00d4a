/**
 * What becomes of the runs a previous process (or a lost instance) left open: a chat answer or flow
 * step goes on from its last checkpoint, a nested call is set aside for its caller's resumed
 * call_agent, and the rest end interrupted with a reason the user can act on.
 */

import type { SessionStore } from "../store/types.js";
import type { AgentRunner } from "./agent-runner.js";
import type { EventBus } from "./event-bus.js";
import type { FlowRunner } from "./flow-runner.js";
import { INSTANCE_LOST, type RunManager } from "./run-manager.js";
import type { TeamDeps } from "./team-deps.js";
import type { StoredRun, TeamStore } from "./team-store.js";
import type { TeamRun } from "./types.js";

export const INTERRUPTED = "interrupted: the server stopped before the run finished";
const COMPLETION_INTERRUPTED =
  "interrupted: the server stopped during this /v1 completion and its client's connection closed with it; the client sends the request again.";

export interface TeamRecoveryDeps {
  store: TeamStore;
  sessions: SessionStore;
  emit: EventBus["emit"];
  now: () => number;
  onError: (err: unknown) => void;
  maxResumes: number;
  cluster: TeamDeps["cluster"];
  leases: TeamStore["leases"];
  /** The parts wired after recovery (they call into it), read when recovery runs. */
  wired: () => { runs: RunManager; runner: AgentRunner; flows: FlowRunner };
}

/**
 * The runs that go on after their process died: chat answers and flow steps (a nested call goes on
 * inside its caller's; a /v1 completion's client went with the process).
 */
function resumable(run: TeamRun): boolean {
  return run.channelId !== "" && run.depth === 0;
}

/** A meeting's turn: the meeting runner, not the restart, decides what becomes of it. */
function isMeetingTurn(stored: StoredRun): boolean {
  return stored.ref.userId.startsWith("meeting:");
}

export interface TeamRecovery {
  /** At startup, alone on the database: resumes, sets aside or closes every run left open. */
  recoverOpenRuns(): Promise<void>;
  onLeaseExpired(stored: StoredRun): void;
  adopt(stored: StoredRun, fence: number): Promise<boolean>;
  adoptNested(parentRunId: string, agentId: string): StoredRun | undefined;
  /** After taking over runs of a dead instance: closes the nested runs no caller goes on with. */
  afterTakeOver(): void;
}

/** The team's recovery of interrupted runs, after a restart or when another instance's lease runs out. */
export function teamRecovery(d: TeamRecoveryDeps): TeamRecovery {
  const { store, sessions, emit, now, onError, cluster, leases } = d;
  /** Nested runs a restart or a lost instance cut off, by id: each goes on inside its caller's resumed call. */
  const orphans = new Map<string, { stored: StoredRun; fence?: number }>();

  /**
   * This process owns the database: a run still open was the previous process's. An answer in a
   * chat or a flow step goes on from its last checkpoint, a nested call inside its caller's (set
   * aside first, deepest first, for the caller to find); a /v1 completion ends interrupted.
   */
  async function recoverOpenRuns(): Promise<void> {
    const { runner } = d.wired();
    const open = (await store.runs.listOpen()).sort((a, b) => b.run.depth - a.run.depth);
    for (const stored of open) {
      if (setAside(stored) || (await resumeAfterRestart(stored))) continue;
      const failure = await interruptedFailure(stored, INTERRUPTED);
      const run: TeamRun = { ...stored.run, status: "error", error: failure.message, endedAt: now() };
      await store.runs.update(run);
      // A meeting's turn is spoken again by the meeting (meetingRunner.recover), not posted cut off.
      if (!isMeetingTurn(stored)) await runner.postInterrupted({ ...stored, run }, failure).catch(onError);
      await sessions.recoverInterruptedRuns(stored.ref).catch(onError);
    }
    await closeOrphans();
  }

  /** A run whose lease ran out: its answer is kept in the chat with what it did and why it ended. */
  function onLeaseExpired(stored: StoredRun): void {
    const { runner, flows } = d.wired();
    void interruptedFailure(stored, INSTANCE_LOST)
      .then((failure) => (isMeetingTurn(stored) ? undefined : runner.postInterrupted(stored, failure)))
      .then(() => sessions.recoverInterruptedRuns(stored.ref))
      // A flow whose step was closed waits for a person, as after a restart.
      .then(() => (stored.run.flowId ? flows.stepLost(stored.run.flowId, stored.run.id) : undefined))
      .catch(onError);
  }

  /**
   * A chat answer or flow step whose instance died goes on here from its last checkpoint; a nested
   * call is set aside for its caller's resumed call_agent.
   */
  async function adopt(stored: StoredRun, fence: number): Promise<boolean> {
    if (setAside(stored, fence)) return true;
    await takeNested(stored);
    return resumeAfterRestart(stored, fence);
  }

  /** The nested run set aside under `parentRunId` for `agentId`, taken for its caller's resumed call. */
  function adoptNested(parentRunId: string, agentId: string): StoredRun | undefined {
    for (const [id, orphan] of orphans) {
      if (orphan.stored.run.parentRunId !== parentRunId || orphan.stored.run.agentId !== agentId) continue;
      orphans.delete(id);
      return orphan.stored;
    }
    return undefined;
  }

  /**
   * Resumes a chat answer the previous process was running, from its checkpoint; false when it is
   * not resumable (not a chat answer, or resumed too often already: `MAX_RESUMES`).
   */
  async function resumeAfterRestart(stored: StoredRun, fence?: number): Promise<boolean> {
    const { run } = stored;
    if (!resumable(run) || run.status !== "running") return false;
    // A meeting's turn cut off by the restart is spoken again by the meeting (meeting-runner.ts).
    if (isMeetingTurn(stored)) return false;
    const key = `run_resumes:${run.id}`;
    const resumes = Number((await store.meta.get(key)) ?? "0");
    if (resumes >= d.maxResumes) return false;
    await store.meta.set(key, String(resumes + 1));
    const { runner, flows } = d.wired();
    try {
      // A flow step goes on when its flow still waits for it; the flow then moves to the next step.
      if (run.flowId !== undefined) {
        return await flows.resumeStep(run.flowId, run.id, (flow) =>
          runner.resumeFlowStep(stored, flow, fence),
        );
      }
      await runner.resumeChannelRun(stored, {}, "restart", fence);
      return true;
    } catch (err) {
      onError(err);
      return false;
    }
  }

  /** Sets a nested run that was running aside for its caller (true), when it has one. */
  function setAside(stored: StoredRun, fence?: number): boolean {
    const { run } = stored;
    if (run.depth === 0 || run.parentRunId === undefined || run.status !== "running") return false;
    orphans.set(run.id, fence !== undefined ? { stored, fence } : { stored });
    return true;
  }

  /**
   * Takes over the open nested runs under a run taken over from a dead instance (their leases may
   * run out later than its own) and sets them aside for its resumed calls.
   */
  async function takeNested(stored: StoredRun): Promise<void> {
    if (!cluster || !leases || stored.run.depth !== 0) return;
    const open = (await store.runs.listOpen()).sort((a, b) => a.run.depth - b.run.depth);
    const under = new Set([stored.run.id]);
    for (const child of open) {
      if (child.run.parentRunId === undefined || !under.has(child.run.parentRunId)) continue;
      under.add(child.run.id);
      const until = now() + (cluster.leaseTtlMs ?? 30_000);
      setAside(child, await leases.acquire(child.run.id, cluster.instanceId, until));
    }
  }

  /**
   * Closes, as interrupted, the nested runs set aside whose caller does not go on here; those whose
   * caller runs here are closed once it ends, if its resumed call did not take them.
   */
  async function closeOrphans(): Promise<void> {
    const { runs } = d.wired();
    for (;;) {
      const lost = [...orphans.values()].filter(({ stored }) => {
        const parent = stored.run.parentRunId ?? "";
        return !runs.isActive(parent) && !orphans.has(parent);
      });
      if (lost.length === 0) break;
      for (const orphan of lost) {
        orphans.delete(orphan.stored.run.id);
        await closeInterrupted(orphan.stored, orphan.fence);
      }
    }
    for (const { stored } of orphans.values()) {
      const parent = stored.run.parentRunId ?? "";
      if (runs.isActive(parent)) void runs.settled(parent).then(() => closeOrphans().catch(onError));
    }
  }

  /** Ends a run whose process died and that does not go on (where leased, while `fence` holds). */
  async function closeInterrupted(stored: StoredRun, fence?: number): Promise<void> {
    const run: TeamRun = {
      ...stored.run,
      status: "error",
      error: cluster ? INSTANCE_LOST : INTERRUPTED,
      endedAt: now(),
    };
    if (leases && fence !== undefined) {
      if (!(await leases.updateFenced(run, fence))) return;
    } else {
      await store.runs.update(run);
    }
    emit({ type: "run", channelId: run.channelId, run });
    await sessions.recoverInterruptedRuns(stored.ref).catch(onError);
  }

  /**
   * Why a run whose process died ends here: given up after `runs.maxResumes` resumes, or `otherwise`
   * (a kind of run that does not resume).
   */
  async function interruptedFailure(
    stored: StoredRun,
    otherwise: string,
  ): Promise<{ message: string; hint?: string }> {
    // A /v1 completion's client connection closed with the process: nobody is left to answer.
    if (stored.run.channelId === "") return { message: COMPLETION_INTERRUPTED };
    const resumes = Number((await store.meta.get(`run_resumes:${stored.run.id}`)) ?? "0");
    const max = d.maxResumes;
    if (!resumable(stored.run) || resumes < max) return { message: otherwise };
    return {
      message: `interrupted: the server stopped ${resumes + 1} times during this answer, so it was given up after ${resumes} resumes (runs.maxResumes is ${max}).`,
      hint: "ask again; raise runs.maxResumes in config.json to resume answers more often",
    };
  }

  return {
    recoverOpenRuns,
    onLeaseExpired,
    adopt,
    adoptNested,
    afterTakeOver: () => void closeOrphans().catch(onError),
  };
}
