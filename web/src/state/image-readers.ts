/**
 * Which agents a message would reach whose model cannot read images: the server refuses an image
 * for them, so the composer says so as soon as one is attached.
 */
import type { AgentRecord, ChannelRecord } from "../types.js";
import { MENTION_TOKEN } from "./mention.js";

/** The agents the text reaches (its mentions, else the chat's leader) whose model is known not to read images. */
export function agentsBlindToImages(
  text: string,
  channel: ChannelRecord,
  agents: readonly AgentRecord[],
): AgentRecord[] {
  const members = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  const named = [...text.matchAll(MENTION_TOKEN)].map((m) => (m[1] ?? "").toLowerCase());
  const all = named.includes("all");
  const mentioned = all ? members : members.filter((id) => named.includes(id));
  const reached =
    mentioned.length > 0
      ? mentioned
      : channel.leaderAgentId
        ? [channel.leaderAgentId]
        : channel.kind === "direct"
          ? members
          : [];
  return agents.filter((a) => reached.includes(a.id) && a.modelInput?.images === false);
}
