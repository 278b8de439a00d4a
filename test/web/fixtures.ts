/** Builders for the team-domain records the web UI tests feed to reducers and fake servers. */
import type { ChannelMessage, ChannelRecord, FlowRecord, TeamRun } from "../../web/src/types.js";

/** A channel message; `author` defaults to the user u1. */
export function message(id: number, overrides: Partial<ChannelMessage> = {}): ChannelMessage {
  return {
    id,
    channelId: "c1",
    author: { type: "user", id: "u1" },
    text: `message ${id}`,
    parts: [{ type: "text", text: `message ${id}` }],
    mentions: [],
    createdAt: 1_700_000_000_000 + id,
    ...overrides,
  };
}

/** A run of agent `agentId` in channel c1. */
export function run(id: string, overrides: Partial<TeamRun> = {}): TeamRun {
  return {
    id,
    channelId: "c1",
    agentId: "coder",
    triggerMessageId: 1,
    status: "running",
    depth: 0,
    startedAt: 1_700_000_000_000,
    ...overrides,
  };
}

/** A group channel with two agents and the user u1. */
export function channel(id: string, overrides: Partial<ChannelRecord> = {}): ChannelRecord {
  return {
    id,
    kind: "group",
    name: `channel ${id}`,
    members: [
      { type: "user", id: "u1" },
      { type: "agent", id: "coder" },
      { type: "agent", id: "writer" },
    ],
    chain: [],
    createdBy: "u1",
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

/** A two-step flow in channel c1. */
export function flow(id: string, overrides: Partial<FlowRecord> = {}): FlowRecord {
  return {
    id,
    channelId: "c1",
    triggerMessageId: 1,
    status: "running",
    currentStep: 0,
    steps: [
      { agentId: "coder", requiresApproval: true, status: "running" },
      { agentId: "writer", requiresApproval: false, status: "waiting" },
    ],
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}
