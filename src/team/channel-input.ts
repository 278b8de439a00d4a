/**
 * What a channel turn reads from its chat: the messages the agent has not seen (with the files
 * attached to them), what the other agents of a group are for, and which tools it may run unasked.
 */

import type { Approver } from "../agent/approvals.js";
import type { AttachedFile } from "../attachments/to-parts.js";
import type { AgentRunnerDeps } from "./runner-deps.js";
import { formatChannelInput, peopleIn, purposeOf, type UserNamer } from "./team-prompt.js";
import type { ChannelMessage, ChannelRecord } from "./types.js";

/** How many unseen channel messages an agent gets at most as its input. */
const MAX_INPUT_MESSAGES = 40;

/** The unseen messages of a channel turn, as the agent reads them. */
export interface UnseenInput {
  messages: ChannelMessage[];
  text: string;
  names: Promise<UserNamer>;
}

type InputDeps = Pick<AgentRunnerDeps, "store" | "now" | "nameOf">;

/** The messages `agentId` has not seen in the channel, up to `upto`, as its input. */
export async function unseenInput(
  deps: InputDeps,
  channel: ChannelRecord,
  agentId: string,
  upto: number,
): Promise<UnseenInput> {
  const { store, now } = deps;
  const unseen = await store.messages.unseen(`agent:${agentId}`, channel.id, upto, now(), MAX_INPUT_MESSAGES);
  const messages = unseen.messages.filter(
    // Its own answers it knows; a failed answer with nothing said has nothing to read.
    (m) => !(m.author.type === "agent" && m.author.id === agentId) && m.text.trim() !== "",
  );
  const authors = messages.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
  const names = await deps.nameOf([...peopleIn(channel), ...authors]);
  return { messages, text: formatChannelInput(messages, names), names: Promise.resolve(names) };
}

/** The files people attached to these messages, read from the chat's attachments, in order. */
export async function filesOf(
  deps: Pick<AgentRunnerDeps, "store">,
  channelId: string,
  messages: readonly ChannelMessage[],
): Promise<AttachedFile[]> {
  const files: AttachedFile[] = [];
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type !== "attachment") continue;
      const found = await deps.store.attachments.read(channelId, part.id);
      if (found) files.push({ name: part.name, mimeType: part.mimeType, kind: part.kind, data: found.data });
    }
  }
  return files;
}

/** The trigger alone as the input (the agent has seen everything else). */
export async function inputOf(
  deps: InputDeps,
  channel: ChannelRecord,
  trigger: ChannelMessage,
): Promise<string> {
  const shown = [(await deps.store.messages.get(trigger.id)) ?? trigger];
  const authors = shown.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
  return formatChannelInput(shown, await deps.nameOf([...peopleIn(channel), ...authors]));
}

/** What the other agents of a group are for, from their personas (for the team prompt). */
export async function purposes(
  deps: Pick<AgentRunnerDeps, "runtime">,
  channel: ChannelRecord,
  agentId: string,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (channel.kind !== "group") return found;
  for (const member of channel.members) {
    if (member.type !== "agent" || member.id === agentId) continue;
    const soul = await deps.runtime.personas.read(member.id).catch(() => undefined);
    const purpose = soul ? purposeOf(soul.content) : undefined;
    if (purpose) found.set(member.id, purpose);
  }
  return found;
}

/** Approvals in a chat: a tool approved "always" there runs; anything else waits for a person. */
export function chatApprover(
  deps: Pick<AgentRunnerDeps, "store">,
  channelId: string,
  agentId: string,
): Approver {
  const { grants } = deps.store;
  return async (request) =>
    (await grants.has(channelId, agentId, request.tool)) ? { decision: "approve", always: true } : "wait";
}
