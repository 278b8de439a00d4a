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

import { ChannelInboxes } from "./channel-inboxes.js";
import { ChannelRuns } from "./channel-runs.js";
import { DirectRuns } from "./direct-runs.js";
import { FlowStepRuns } from "./flow-step-runs.js";
import { LiveRunParts } from "./live-run-parts.js";
import { NestedRuns } from "./nested-runs.js";
import { RunAnswers } from "./run-answers.js";
import { RunTools } from "./run-tools.js";
import type { AgentRunnerDeps } from "./runner-deps.js";

export type { CompletionMessage, TurnOutcome, TurnSpec } from "./direct-runs.js";
export { RESTART_SEQ_BLOCK } from "./run-answers.js";
export { type AgentRunnerDeps, type AnswerOptions, channelRef } from "./runner-deps.js";

/** Runs agents for the team facade. */
export class AgentRunner {
  /**
   * Starts `agent` answering in the channel; its input is what it has not seen up to `trigger`. The
   * answer is a job: it waits for a slot, and with several instances any instance may run it.
   */
  readonly startChannelRun: ChannelRuns["startChannelRun"];
  /** The body of a claimed chat answer job (another instance may have enqueued it). */
  readonly bodyForJob: ChannelRuns["bodyForJob"];
  /**
   * Continues a channel run that waited for approvals, now decided (the caller claimed it from
   * `waiting`), or cut off by a restart: the same answer message goes on from where it stopped.
   */
  readonly resumeChannelRun: ChannelRuns["resumeChannelRun"];
  /** Starts the run of a flow step; its output is posted to the channel and handed to the flow. */
  readonly launchStep: FlowStepRuns["launchStep"];
  /** Continues a flow step whose process died, from its checkpoint (see FlowStepRuns). */
  readonly resumeFlowStep: FlowStepRuns["resumeFlowStep"];
  /** Starts a turn with a given system text and input, posted to the channel (see DirectRuns). */
  readonly launchTurn: DirectRuns["launchTurn"];
  /** A direct run of an agent over an OpenAI-style conversation, in a session of its own. */
  readonly complete: DirectRuns["complete"];
  /** Runs `target` for call_agent, nested under the calling run; returns its answer (see NestedRuns). */
  readonly runNested: NestedRuns["runNested"];
  /** Runs a remote A2A agent for its tool, nested under the calling run like a called agent. */
  readonly runRemote: NestedRuns["runRemote"];
  /** Posts (or ends) the answer of a run that will not go on after its process died. */
  readonly postInterrupted: RunAnswers["postInterrupted"];
  /** Hands a message to the agent's run in progress in the channel (steer mode); true when taken. */
  readonly steer: ChannelInboxes["steer"];
  /** A person stopped the run: the messages sent to it that it has not read start no run of their own. */
  readonly dropUnread: ChannelInboxes["dropUnread"];
  /** What a live run's answer holds so far, and the number of its last event folded in. */
  readonly liveParts: LiveRunParts["liveParts"];

  constructor(deps: AgentRunnerDeps) {
    const live = new LiveRunParts();
    const inboxes = new ChannelInboxes(deps, (channel, agent, trigger, requestedBy) =>
      this.startChannelRun(channel, agent, trigger, requestedBy),
    );
    const answers = new RunAnswers(deps, live, (channelId, agentId, runId) =>
      inboxes.close(channelId, agentId, runId),
    );
    const tools: RunTools = new RunTools(deps, {
      runNested: (target, scope, task, signal, restarted) =>
        this.runNested(target, scope, task, signal, restarted),
      runRemote: (remote, scope, task, signal) => this.runRemote(remote, scope, task, signal),
    });
    const parts = { deps, answers, tools };
    const nested = new NestedRuns(deps, live, answers, () => tools);
    const channels = new ChannelRuns(parts, inboxes);
    const steps = new FlowStepRuns(parts);
    const direct = new DirectRuns(parts);
    this.startChannelRun = channels.startChannelRun.bind(channels);
    this.bodyForJob = channels.bodyForJob;
    this.resumeChannelRun = channels.resumeChannelRun.bind(channels);
    this.launchStep = steps.launchStep;
    this.resumeFlowStep = steps.resumeFlowStep.bind(steps);
    this.launchTurn = direct.launchTurn.bind(direct);
    this.complete = direct.complete.bind(direct);
    this.runNested = nested.runNested.bind(nested);
    this.runRemote = nested.runRemote.bind(nested);
    this.postInterrupted = answers.postInterrupted.bind(answers);
    this.steer = inboxes.steer.bind(inboxes);
    this.dropUnread = inboxes.dropUnread.bind(inboxes);
    this.liveParts = live.liveParts.bind(live);
  }
}
