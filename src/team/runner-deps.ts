/**
 * What the parts of the agent runner share: the runner's dependencies, where a channel answer goes,
 * what a turn reports to its run, and how a run is started in its session's lane.
 */

import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import type { AttachmentLimits } from "../attachments/kinds.js";
import { notFound } from "../errors.js";
import type { Usage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import type { TurnRuntime } from "./agent-turn.js";
import type { EventBus } from "./event-bus.js";
import type { AnsweredRun } from "./handoffs.js";
import { laneOf, type RunBody, type RunHandle, type RunManager, type RunRequest } from "./run-manager.js";
import type { NamesFor } from "./team-prompt.js";
import type { StoredRun, TeamStore } from "./team-store.js";
import type { AgentRecord } from "./types.js";

export interface AgentRunnerDeps {
  store: TeamStore;
  sessions: SessionStore;
  runs: RunManager;
  runtime: TurnRuntime;
  bus: EventBus;
  now: () => number;
  workspaceFor: (key: string) => string;
  nameOf: NamesFor;
  /**
   * The remote A2A agents (a2a.json and Settings), read at the start of each run: each a tool of the
   * run, its call shown as a nested run.
   */
  remoteAgents?: () => Promise<readonly RemoteAgentConfig[]>;
  /** Tools read at the start of each run and offered to it (HTTP tools saved in Settings). */
  httpTools?: () => Promise<readonly Tool[]>;
  /** The attachment limits a file an agent shares in a chat is checked against (absent: no share_file). */
  shareFileLimits?: AttachmentLimits;
  /**
   * The nested run of `agentId` under `parentRunId` that a restart (or a lost instance) cut off, set
   * aside for the caller's resumed call_agent; each is handed out once.
   */
  adoptNested?: (parentRunId: string, agentId: string) => StoredRun | undefined;
  /** Told when a chat answer was posted (first run or resumed), e.g. to start the agents it hands over to. */
  onAnswered?: (done: AnsweredRun) => Promise<void>;
}

/** Where a channel answer goes: the message it replies to, and the answer it is a new version of. */
export interface AnswerOptions {
  versionOf?: number;
  /** Said to the agent before the messages (e.g. that the person asked for another answer). */
  note?: string;
  /** The person is at the web chat: MCP requests for input are put to them. */
  present?: boolean;
}

export interface AnswerPlace {
  replyTo?: number;
  versionOf?: number;
}

/** What a turn reports to its run: usage, model and cost (kept on the run), whether it waits. */
export interface TurnReport {
  usage?: Usage;
  waiting?: unknown;
  model?: string;
  costUsd?: number;
}

/** A run's turn, given the run's id, its stop signal and where to say the model it uses. */
export type TurnWork = (
  runId: string,
  signal: AbortSignal,
  setModel: (model: string) => void,
) => Promise<TurnReport>;

/** The session an agent's turns in a channel are stored in. */
export function channelRef(channelId: string, agentId: string): SessionRef {
  return { userId: `channel:${channelId}`, sessionId: `agent:${agentId}` };
}

/** The run's record of a turn's outcome. */
export function outcomeOf(result: TurnReport): Awaited<ReturnType<RunBody>> {
  return {
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.model ? { model: result.model } : {}),
    ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
    ...(result.waiting ? { waiting: true } : {}),
  };
}

/** Starts a run of `turn` in the lane of its session. */
export function startRun(
  runs: RunManager,
  request: Omit<RunRequest, "lane">,
  turn: TurnWork,
): Promise<RunHandle> {
  return runs.start({ ...request, lane: laneOf(request.ref) }, async ({ run, signal, setModel }) =>
    outcomeOf(await turn(run.id, signal, setModel)),
  );
}

/** The agent, or a 404 saying it no longer exists. */
export async function requireAgent(store: TeamStore, id: string): Promise<AgentRecord> {
  const agent = await store.agents.get(id);
  if (!agent) throw notFound(`The agent @${id} no longer exists.`);
  return agent;
}
