/**
 * The parts the team facade is wired from (see createTeam), handed to the modules that hold its
 * methods: the message side (team-messages.ts) and the run side (team-runs.ts).
 */

import type { SessionStore } from "../store/types.js";
import type { AgentRunner } from "./agent-runner.js";
import type { AgentService } from "./agent-service.js";
import type { TurnRuntime } from "./agent-turn.js";
import type { ChannelService } from "./channel-service.js";
import type { Elicitations } from "./elicitations.js";
import type { EventBus } from "./event-bus.js";
import type { FlowRunner } from "./flow-runner.js";
import type { Handoffs } from "./handoffs.js";
import type { McpApps } from "./mcp-apps.js";
import type { meetingFacade } from "./meeting-facade.js";
import type { MessageQueue } from "./message-queue.js";
import type { RunApprovals } from "./run-approvals.js";
import type { RunManager } from "./run-manager.js";
import type { TeamDeps } from "./team-deps.js";
import type { NamesFor } from "./team-prompt.js";
import type { JoinedRelay } from "./team-relay.js";
import type { TeamStore } from "./team-store.js";

export interface TeamParts {
  deps: TeamDeps;
  /** Settles when the startup work (recovery, starter agents) is done; every call waits for it. */
  ready: Promise<void>;
  store: TeamStore;
  sessions: SessionStore;
  bus: EventBus;
  emit: EventBus["emit"];
  now: () => number;
  nameOf: NamesFor;
  runtime: TurnRuntime;
  runs: RunManager;
  runner: AgentRunner;
  handoffs: Handoffs;
  approvals: RunApprovals;
  queue: MessageQueue;
  flows: FlowRunner;
  channels: ChannelService;
  agents: AgentService;
  meetings: ReturnType<typeof meetingFacade>;
  apps: McpApps;
  elicitations: Elicitations;
  relay: JoinedRelay | undefined;
  cluster: TeamDeps["cluster"];
  leases: TeamStore["leases"];
}

/** `work` as a method of the team: it waits for the team's startup work first, like every method. */
export function whenReady<A extends unknown[], R>(
  ready: Promise<void>,
  work: (...args: A) => R | Promise<R>,
): (...args: A) => Promise<R> {
  return async (...args) => {
    await ready;
    return work(...args);
  };
}
