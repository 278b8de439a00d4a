/**
 * Where a person's message goes: a direct chat to its agent; in a group, `/flow` or `@chain` to the
 * collaboration chain, `@all` to every agent, `@agent` to the agents named, and no mention to the
 * leader (unless the message only addresses people).
 */

import { invalid } from "../errors.js";
import { parseMentions } from "./mentions.js";
import type { AgentRecord, ChannelRecord } from "./types.js";

const FLOW_COMMAND = /^\/flow(?:\s+|$)/i;

export type Route =
  | { kind: "flow"; input: string }
  | {
      kind: "agents";
      /** Agents to run, in the order they were mentioned. */
      agents: AgentRecord[];
    };

/** Decides the route of a message; throws `invalid` for a flow where there is no chain. */
export function routeMessage(
  text: string,
  channel: ChannelRecord,
  agents: ReadonlyMap<string, AgentRecord>,
  nameOf: (userId: string) => string,
): Route {
  const agentIds = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  const present = agentIds.map((id) => agents.get(id)).filter((a): a is AgentRecord => a !== undefined);
  const leader = present.filter((a) => a.id === channel.leaderAgentId);
  if (channel.kind === "direct") {
    if (FLOW_COMMAND.test(text.trimStart())) {
      throw invalid("Collaboration chains exist only in group channels.");
    }
    return { kind: "agents", agents: leader };
  }

  const people = channel.members
    .filter((m) => m.type === "user")
    .map((m) => ({ id: m.id, name: nameOf(m.id) }));
  const mentions = parseMentions(text, present, people);
  const flowCommand = FLOW_COMMAND.test(text.trimStart());
  if (flowCommand || mentions.chain) {
    if (channel.chain.length === 0) {
      throw invalid(
        "This group has no collaboration chain.",
        "set the chain in the group settings, then send /flow <task>",
      );
    }
    const input = flowCommand ? text.trimStart().replace(FLOW_COMMAND, "").trim() : text;
    return { kind: "flow", input: input === "" ? text : input };
  }
  if (mentions.all) return { kind: "agents", agents: present };
  if (mentions.agentIds.length > 0) {
    return {
      kind: "agents",
      agents: mentions.agentIds.map((id) => agents.get(id)).filter((a): a is AgentRecord => a !== undefined),
    };
  }
  // A message addressed only to people is not for the leader.
  return { kind: "agents", agents: mentions.userIds.length === 0 ? leader : [] };
}
