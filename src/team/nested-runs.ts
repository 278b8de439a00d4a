/**
 * The nested-run lifecycle: an agent called with call_agent, or a remote A2A agent, runs under the
 * calling run; its answer shows in the caller's as it comes and settles with its end. A nested run a
 * restart cut off goes on from its checkpoint inside its caller's resumed call.
 */

import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import type { AgentEvent } from "../agent/events.js";
import { INTERRUPTED_BY_RESTART } from "../agent/execute-tools.js";
import { emptyUsage } from "../agent/usage.js";
import { DimsumError, toDimsumError } from "../errors.js";
import type { SessionRef } from "../store/types.js";
import { runAgentTurn } from "./agent-turn.js";
import type { CallScope } from "./call-agent-tool.js";
import { failureOf, type LiveRunParts, withAnswer } from "./live-run-parts.js";
import { endParts, startChildRun, updateChildRun } from "./message-parts.js";
import type { ResumePoint, RunAnswers } from "./run-answers.js";
import { laneOf } from "./run-manager.js";
import type { RunTools } from "./run-tools.js";
import { type AgentRunnerDeps, outcomeOf, startRun, type TurnReport } from "./runner-deps.js";
import { callSystemText } from "./team-prompt.js";
import type { StoredRun } from "./team-store.js";
import type { AgentRecord, MessagePart } from "./types.js";

/** What a nested run's work hands back: its answer, the text shown for it, and its run's report. */
interface ChildDone {
  answer: string;
  shown: string;
  outcome: TurnReport;
}

/** What a nested run says when it failed (`failed`, given the reason) or answered nothing (`empty`). */
interface ChildSays {
  failed: (reason: string, failure: DimsumError | undefined) => DimsumError;
  empty: string;
}

/** Runs called agents and remote A2A agents nested under their callers. */
export class NestedRuns {
  readonly #deps: AgentRunnerDeps;
  readonly #live: LiveRunParts;
  readonly #answers: RunAnswers;
  readonly #tools: RunTools;

  constructor(deps: AgentRunnerDeps, live: LiveRunParts, answers: RunAnswers, tools: RunTools) {
    this.#deps = deps;
    this.#live = live;
    this.#answers = answers;
    this.#tools = tools;
  }

  /**
   * Runs `target` for call_agent, nested under the calling run; returns its answer. `restarted`: the
   * call was running when the process died; the nested run it started goes on from its checkpoint
   * (its finished tool calls are not run again), or, when none is left to go on with, the call says
   * it was interrupted.
   */
  async runNested(
    target: AgentRecord,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
    restarted = false,
  ): Promise<string> {
    const ref = { userId: `call:${scope.parentRunId}`, sessionId: `agent:${target.id}` };
    const chain = [...scope.chain, target.id];
    const resumed = restarted ? await this.#adopt(scope, target) : undefined;
    return this.#runChild(
      scope,
      target.id,
      ref,
      signal,
      {
        failed: (reason) => new DimsumError("tool_failed", `@${target.id} did not answer: ${reason}`),
        empty: `(@${target.id} gave an empty answer)`,
      },
      async (runId, runSignal, setModel) => {
        const caller = await this.#deps.store.agents.get(scope.chain.at(-1) ?? "");
        const result = await runAgentTurn(this.#deps.runtime, {
          agent: target,
          runId,
          channelId: scope.channelId,
          ref: resumed?.stored.ref ?? ref,
          input: resumed ? "" : task,
          ...(resumed
            ? { resume: { reason: "restart" as const, decisions: {} }, firstSeq: resumed.firstSeq }
            : {}),
          system: callSystemText(target, caller, chain),
          workspace: scope.workspace,
          signal: runSignal,
          extraTools: await this.#tools.callTools({
            channelId: scope.channelId,
            triggerMessageId: scope.triggerMessageId,
            parentRunId: runId,
            depth: scope.depth + 1,
            chain,
            requestedBy: scope.requestedBy,
            workspace: scope.workspace,
            present: scope.present === true,
            rootRunId: scope.rootRunId ?? scope.parentRunId,
          }),
          requestedBy: scope.requestedBy,
          // The person of the outermost run answers the called agent's MCP requests there.
          ...(scope.present ? { present: true, askIn: scope.rootRunId ?? scope.parentRunId } : {}),
          onEvent: (event, seq) => this.#live.record(runId, event, seq),
          onModel: setModel,
        });
        return { answer: result.answer, shown: result.text, outcome: result };
      },
      resumed ? { stored: resumed.stored, parts: resumed.start ?? [] } : undefined,
    );
  }

  /** The nested run of `target` a restart cut off under the caller, and where it goes on. */
  async #adopt(scope: CallScope, target: AgentRecord): Promise<ResumePoint & { stored: StoredRun }> {
    const stored = this.#deps.adoptNested?.(scope.parentRunId, target.id);
    if (!stored) throw new DimsumError("tool_failed", INTERRUPTED_BY_RESTART);
    return { stored, ...(await this.#answers.resumePoint(stored, "restart")) };
  }

  /**
   * Runs a remote A2A agent for its tool, nested under the calling run like a called agent: its
   * streamed answer shows in the caller's answer as it comes; returns the answer.
   */
  async runRemote(
    remote: RemoteAgentConfig,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
  ): Promise<string> {
    const agentId = `a2a:${remote.name}`;
    const ref = { userId: `call:${scope.parentRunId}`, sessionId: `a2a:${remote.name}` };
    const who = `the A2A agent "${remote.name}"`;
    return this.#runChild(
      scope,
      agentId,
      ref,
      signal,
      {
        failed: (reason, failure) =>
          new DimsumError(
            "tool_failed",
            `The A2A agent "${remote.name}" did not answer: ${reason}`,
            failure?.hint ? { hint: failure.hint } : {},
          ),
        empty: `(${who} gave an empty answer)`,
      },
      (runId, runSignal) => this.#askRemote(remote, scope, task, runId, runSignal),
    );
  }

  /** Streams a remote A2A agent's answer as the nested run's agent events. */
  async #askRemote(
    remote: RemoteAgentConfig,
    scope: CallScope,
    task: string,
    runId: string,
    runSignal: AbortSignal,
  ): Promise<ChildDone> {
    let seq = 0;
    const emit = (event: AgentEvent) => {
      seq++;
      this.#deps.runtime.emit({ type: "agent", channelId: scope.channelId, runId, seq, event });
      this.#live.record(runId, event, seq);
    };
    let answer = "";
    emit({ type: "run_start", runId, model: remote.url, tools: [] });
    // Loaded on the first call: the A2A client is not needed before.
    const { askRemoteAgent } = await import("../a2a/remote-agent.js");
    const stream = askRemoteAgent(remote, task, runSignal);
    for (;;) {
      const next = await stream.next();
      if (next.done) {
        answer = next.value;
        break;
      }
      if (next.value.type === "text") emit({ type: "text_delta", runId, text: next.value.text });
    }
    const usage = emptyUsage();
    emit({
      type: "done",
      runId,
      answer,
      iterations: 1,
      capReached: false,
      finishReason: "stop",
      usage,
    });
    return { answer, shown: answer, outcome: { usage } };
  }

  /**
   * Runs `work` as a run nested under the calling run (a called agent, a remote A2A agent): its
   * answer shows in the caller's as it comes and settles with its end. Returns the answer (`says.empty`
   * for a blank one); a run that did not end `done` throws `says.failed` with the reason.
   */
  async #runChild(
    scope: CallScope,
    agentId: string,
    ref: SessionRef,
    signal: AbortSignal,
    says: ChildSays,
    work: (runId: string, runSignal: AbortSignal, setModel: (model: string) => void) => Promise<ChildDone>,
    /** The nested run a restart cut off, going on (with what it did before). */
    resumed?: { stored: StoredRun; parts: MessagePart[] },
  ): Promise<string> {
    let answer = "";
    let failure: DimsumError | undefined;
    const body = async (runId: string, runSignal: AbortSignal, setModel: (model: string) => void) => {
      this.#live.begin(runId, resumed ? [...resumed.parts] : []);
      this.#live.update(scope.parentRunId, (parts) => startChildRun(parts, runId, agentId));
      let status: "done" | "error" | "cancelled" = "done";
      try {
        const done = await work(runId, runSignal, setModel);
        answer = done.answer;
        this.#live.update(runId, (parts) => withAnswer(parts, done.shown));
        return done.outcome;
      } catch (err) {
        failure = toDimsumError(err);
        status = runSignal.aborted ? "cancelled" : "error";
        this.#live.update(runId, (parts) => endParts(parts, failureOf(err, runSignal)));
        throw err;
      } finally {
        const childParts = this.#live.current(runId);
        this.#live.end(runId);
        this.#live.update(scope.parentRunId, (parts) => updateChildRun(parts, runId, status, childParts));
      }
    };
    const handle = resumed
      ? await this.#deps.runs.resume(
          resumed.stored,
          laneOf(resumed.stored.ref),
          async ({ run, signal: runSignal, setModel }) => outcomeOf(await body(run.id, runSignal, setModel)),
          undefined,
          signal,
        )
      : await startRun(
          this.#deps.runs,
          {
            channelId: scope.channelId,
            agentId,
            triggerMessageId: scope.triggerMessageId,
            depth: scope.depth + 1,
            parentRunId: scope.parentRunId,
            ref,
            requestedBy: scope.requestedBy,
            signal,
          },
          body,
        );
    const run = await handle.finished;
    if (run.status !== "done") throw says.failed(failure?.message ?? run.error ?? run.status, failure);
    return answer.trim() === "" ? says.empty : answer;
  }
}
