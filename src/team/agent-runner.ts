/**
 * Starts agent runs of every kind: an answer in a channel, a step of a collaboration flow, a nested
 * call_agent run, and a direct completion for the OpenAI-compatible endpoint. Each is a RunManager
 * run around one agent turn, in its own session. This is the front the team talks to; the runs of
 * each kind live in their own modules:
 *
 * - channel-runs.ts: chat answers (first run, after approvals, after a crash);
 * - flow-step-runs.ts: the steps of a collaboration flow;
 * - direct-runs.ts: a meeting's turns and /v1 completions;
 * - nested-runs.ts: call_agent and remote A2A agents under a calling run;
 * - run-answers.ts, live-run-parts.ts: the answer a run posts, built from its events;
 * - channel-inboxes.ts: messages handed to a run in progress (steer mode);
 * - run-tools.ts: the team's tools of each run.
 */

import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import type { ApprovalDecision } from "../agent/approvals.js";
import type { OutputSpec } from "../agent/structured-output.js";
import type { Usage, UserMessage } from "../llm/types.js";
import type { CallScope } from "./call-agent-tool.js";
import { ChannelInboxes } from "./channel-inboxes.js";
import { ChannelRuns } from "./channel-runs.js";
import { type CompletionMessage, DirectRuns, type TurnOutcome, type TurnSpec } from "./direct-runs.js";
import type { StepLauncher, StepOutcome } from "./flow-runner.js";
import { FlowStepRuns } from "./flow-step-runs.js";
import { LiveRunParts } from "./live-run-parts.js";
import { NestedRuns } from "./nested-runs.js";
import { RunAnswers } from "./run-answers.js";
import type { RunBody, RunHandle } from "./run-manager.js";
import { RunTools } from "./run-tools.js";
import type { AgentRunnerDeps, AnswerOptions } from "./runner-deps.js";
import type { RunJob, StoredRun } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, FlowRecord, MessagePart } from "./types.js";

export type { CompletionMessage, TurnOutcome, TurnSpec } from "./direct-runs.js";
export { RESTART_SEQ_BLOCK } from "./run-answers.js";
export { type AgentRunnerDeps, type AnswerOptions, channelRef } from "./runner-deps.js";

/** Runs agents for the team facade. */
export class AgentRunner {
  readonly #live = new LiveRunParts();
  readonly #inboxes: ChannelInboxes;
  readonly #answers: RunAnswers;
  readonly #nested: NestedRuns;
  readonly #channels: ChannelRuns;
  readonly #steps: FlowStepRuns;
  readonly #direct: DirectRuns;

  constructor(deps: AgentRunnerDeps) {
    this.#inboxes = new ChannelInboxes(deps, (channel, agent, trigger, requestedBy) =>
      this.startChannelRun(channel, agent, trigger, requestedBy),
    );
    this.#answers = new RunAnswers(deps, this.#live, (channelId, agentId, runId) =>
      this.#inboxes.close(channelId, agentId, runId),
    );
    const tools: RunTools = new RunTools(deps, {
      runNested: (target, scope, task, signal, restarted) =>
        this.runNested(target, scope, task, signal, restarted),
      runRemote: (remote, scope, task, signal) => this.runRemote(remote, scope, task, signal),
    });
    this.#nested = new NestedRuns(deps, this.#live, this.#answers, () => tools);
    this.#channels = new ChannelRuns(deps, this.#answers, tools, this.#inboxes);
    this.#steps = new FlowStepRuns(deps, this.#answers, tools);
    this.#direct = new DirectRuns(deps, this.#answers, tools);
    this.bodyForJob = this.#channels.bodyForJob;
    this.launchStep = this.#steps.launchStep;
  }

  /**
   * Starts `agent` answering in the channel; its input is what it has not seen up to `trigger`. The
   * answer is a job: it waits for a slot, and with several instances any instance may run it.
   */
  startChannelRun(
    channel: ChannelRecord,
    agent: AgentRecord,
    trigger: ChannelMessage,
    requestedBy: string,
    options: AnswerOptions = {},
  ): Promise<RunHandle> {
    return this.#channels.startChannelRun(channel, agent, trigger, requestedBy, options);
  }

  /** The body of a claimed chat answer job (another instance may have enqueued it). */
  readonly bodyForJob: (stored: StoredRun, job: RunJob) => RunBody;

  /**
   * Continues a channel run that waited for approvals, now decided (the caller claimed it from
   * `waiting`): the same answer message goes on from where it stopped.
   */
  resumeChannelRun(
    stored: StoredRun,
    decisions: Record<string, ApprovalDecision>,
    reason: "approval" | "restart" = "approval",
    fence?: number,
  ): Promise<RunHandle> {
    return this.#channels.resumeChannelRun(stored, decisions, reason, fence);
  }

  /**
   * Continues a flow step whose process died (the caller holds its run), from its checkpoint like a
   * chat answer; `done` settles with its output, which the flow then hands to the next step.
   */
  resumeFlowStep(
    stored: StoredRun,
    flow: FlowRecord,
    fence?: number,
  ): Promise<{ runId: string; done: Promise<StepOutcome> }> {
    return this.#steps.resumeFlowStep(stored, flow, fence);
  }

  /**
   * Posts (or ends) the answer of a run that will not go on after its process died: what it said and
   * the tool calls that ran, ended by `failure` (nothing for nested runs and runs outside channels).
   */
  postInterrupted(stored: StoredRun, failure: { message: string; hint?: string }): Promise<void> {
    return this.#answers.postInterrupted(stored, failure);
  }

  /**
   * Hands a message to the agent's run in progress in the channel (steer mode): true when a run of
   * this instance took it; it reads the message before its next model call.
   */
  steer(channelId: string, agentId: string, message: ChannelMessage): boolean {
    return this.#inboxes.steer(channelId, agentId, message);
  }

  /**
   * A person stopped the run: the messages sent to it that it has not read yet start no run of their
   * own (stopping means stopping everything the person asked of it).
   */
  dropUnread(runId: string): void {
    this.#inboxes.dropUnread(runId);
  }

  /** Starts the run of a flow step; its output is posted to the channel and handed to the flow. */
  readonly launchStep: StepLauncher;

  /**
   * Starts a turn of `agentId` with a given system text and input (a meeting's speaker or its
   * minutes), posted to the channel as the agent's answer like any other; `done` settles with the
   * outcome. The turn's tools are the agent's own and call_agent.
   */
  launchTurn(spec: TurnSpec): Promise<{ runId: string; done: Promise<TurnOutcome> }> {
    return this.#direct.launchTurn(spec);
  }

  /** Runs `target` for call_agent, nested under the calling run; returns its answer (see NestedRuns). */
  runNested(
    target: AgentRecord,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
    restarted = false,
  ): Promise<string> {
    return this.#nested.runNested(target, scope, task, signal, restarted);
  }

  /** A direct run of an agent over an OpenAI-style conversation, in a session of its own. */
  complete(
    userId: string,
    agent: AgentRecord,
    systemExtra: string[],
    history: CompletionMessage[],
    input: UserMessage["content"],
    options: { signal?: AbortSignal; onDelta?: (text: string) => void; output?: OutputSpec },
  ): Promise<{ text: string; usage?: Usage; runId: string }> {
    return this.#direct.complete(userId, agent, systemExtra, history, input, options);
  }

  /** Runs a remote A2A agent for its tool, nested under the calling run like a called agent. */
  runRemote(remote: RemoteAgentConfig, scope: CallScope, task: string, signal: AbortSignal): Promise<string> {
    return this.#nested.runRemote(remote, scope, task, signal);
  }

  /** What a live run's answer holds so far, and the number of its last event folded in. */
  liveParts(runId: string): { parts: MessagePart[]; seq: number } | undefined {
    return this.#live.liveParts(runId);
  }
}
