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
import type { RunKindParts } from "./run-kind.js";
import { RunTools } from "./run-tools.js";
import type { AgentRunnerDeps } from "./runner-deps.js";

export type { CompletionMessage, TurnOutcome, TurnSpec } from "./direct-runs.js";
export { RESTART_SEQ_BLOCK } from "./run-answers.js";
export { type AgentRunnerDeps, type AnswerOptions, channelRef } from "./runner-deps.js";

/** Runs agents for the team facade: the runs of every kind, from the modules above. */
export type AgentRunner = Pick<ChannelRuns, "startChannelRun" | "bodyForJob" | "resumeChannelRun"> &
  Pick<FlowStepRuns, "launchStep" | "resumeFlowStep"> &
  Pick<DirectRuns, "launchTurn" | "complete"> &
  Pick<NestedRuns, "runNested" | "runRemote"> &
  Pick<RunAnswers, "postInterrupted"> &
  Pick<ChannelInboxes, "steer" | "dropUnread"> &
  Pick<LiveRunParts, "liveParts">;

/** The agent runner over its dependencies. */
export function createAgentRunner(deps: AgentRunnerDeps): AgentRunner {
  const live = new LiveRunParts();
  const inboxes: ChannelInboxes = new ChannelInboxes(deps, (channel, agent, trigger, requestedBy) =>
    channels.startChannelRun(channel, agent, trigger, requestedBy),
  );
  const answers: RunAnswers = new RunAnswers(deps, live, (channelId, agentId, runId) =>
    inboxes.close(channelId, agentId, runId),
  );
  const tools: RunTools = new RunTools(deps, {
    runNested: (target, scope, task, signal, restarted) =>
      nested.runNested(target, scope, task, signal, restarted),
    runRemote: (remote, scope, task, signal) => nested.runRemote(remote, scope, task, signal),
  });
  const parts: RunKindParts = { deps, answers, tools };
  const nested: NestedRuns = new NestedRuns(deps, live, answers, tools);
  const channels: ChannelRuns = new ChannelRuns(parts, inboxes);
  const steps = new FlowStepRuns(parts);
  const direct = new DirectRuns(parts);
  return {
    ...bound(channels, "startChannelRun", "bodyForJob", "resumeChannelRun"),
    ...bound(steps, "launchStep", "resumeFlowStep"),
    ...bound(direct, "launchTurn", "complete"),
    ...bound(nested, "runNested", "runRemote"),
    ...bound(answers, "postInterrupted"),
    ...bound(inboxes, "steer", "dropUnread"),
    ...bound(live, "liveParts"),
  };
}

/** The named members of `target`, its methods bound to it. */
function bound<T extends object, K extends keyof T>(target: T, ...names: K[]): Pick<T, K> {
  const picked: Partial<Pick<T, K>> = {};
  for (const name of names) {
    const value = target[name];
    picked[name] = typeof value === "function" ? (value.bind(target) as T[K]) : value;
  }
  return picked as Pick<T, K>;
}
