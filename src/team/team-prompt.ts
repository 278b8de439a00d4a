/**
 * The team part of an agent's system prompt and the shape of its input: who is in the channel, how
 * mentions and call_agent work, and the group conversation as `[author] text` lines.
 */
import type { AgentRecord, ChannelMessage, ChannelRecord } from "./types.js";

/** Shows a person's id as a display name (usernames live with the auth layer, not here). */
export type UserNamer = (userId: string) => string;

/** Looks up several people's display names at once (the accounts may live in another process's database). */
export type NamesFor = (userIds: readonly string[]) => Promise<UserNamer>;

/** `NamesFor` over a one-person lookup; without one, people are shown by id. */
export function namesFrom(userName?: (userId: string) => string | Promise<string>): NamesFor {
  if (!userName) return async () => (id) => id;
  return async (userIds) => {
    const unique = [...new Set(userIds)];
    const names = new Map(await Promise.all(unique.map(async (id) => [id, await userName(id)] as const)));
    return (id) => names.get(id) ?? id;
  };
}

/** The people (not agents) who are members of a channel. */
export function peopleIn(channel: ChannelRecord): string[] {
  return channel.members.filter((m) => m.type === "user").map((m) => m.id);
}

/** Agents answer people in their own language: a Chinese question gets a Chinese answer. */
export const LANGUAGE_RULE =
  "Answer in the language the person writes in, unless your persona says otherwise.";

function agentLabel(agent: AgentRecord): string {
  return `@${agent.id} (${agent.emoji ? `${agent.emoji} ` : ""}${agent.name})`;
}

/** The system text for an agent answering in a channel. */
export function channelSystemText(
  agent: AgentRecord,
  channel: ChannelRecord,
  agents: ReadonlyMap<string, AgentRecord>,
  nameOf: UserNamer,
): string {
  const people = channel.members.filter((m) => m.type === "user").map((m) => nameOf(m.id));
  const others = channel.members
    .filter((m) => m.type === "agent" && m.id !== agent.id)
    .map((m) => agents.get(m.id))
    .filter((a): a is AgentRecord => a !== undefined)
    .map(agentLabel);
  const where =
    channel.kind === "direct"
      ? `a direct chat named "${channel.name}"`
      : `the group channel "${channel.name}"`;
  return [
    `You are ${agent.name} (@${agent.id}), one agent of a Dimsum team, answering in ${where}.`,
    `People here: ${people.length > 0 ? people.join(", ") : "none"}. Other agents here: ${
      others.length > 0 ? others.join(", ") : "none"
    }.`,
    "The new messages since you last spoke arrive as lines `[name] text` for people and `[@agent] text` for agents. Reply with your own answer only, without a `[@you]` prefix.",
    "People route a message to an agent by writing @id (or @all for every agent). To get another agent's help yourself, use the call_agent tool with its id and a clear task: its answer comes back to you as the tool result. Mentioning an agent in your reply does not start it.",
    LANGUAGE_RULE,
  ].join("\n");
}

/** The system text for a step of a collaboration chain. */
export function flowStepSystemText(
  agent: AgentRecord,
  channel: ChannelRecord,
  step: number,
  total: number,
  next: AgentRecord | undefined,
): string {
  const handoff = next
    ? `Your output becomes the input of step ${step + 2}, @${next.id} (${next.name}), so make it complete and self-contained.`
    : "Yours is the last step: your output is the result the people in the channel receive.";
  return [
    `You are ${agent.name} (@${agent.id}), step ${step + 1} of ${total} in a collaboration chain in the channel "${channel.name}".`,
    handoff,
    "Do the task in your input and answer with your output only.",
  ].join("\n");
}

/** The system text for an agent called by another through call_agent. */
export function callSystemText(
  agent: AgentRecord,
  caller: AgentRecord | undefined,
  chain: readonly string[],
): string {
  const who = caller ? `${caller.name} (@${caller.id})` : "another agent";
  return [
    `You are ${agent.name} (@${agent.id}), one agent of a Dimsum team. ${who} asked you for help through call_agent (call chain: ${chain.map((id) => `@${id}`).join(" → ")}).`,
    "Do the task and answer with the result only: your whole answer is returned to the caller as the tool result.",
  ].join("\n");
}

/** The system text for a direct call through the OpenAI-compatible endpoint. */
export function directSystemText(agent: AgentRecord, extra: readonly string[]): string {
  return [`You are ${agent.name} (@${agent.id}), one agent of a Dimsum team.`, ...extra].join("\n\n");
}

/** One line per message: `[alice] text`, `[@coder] text`, `[system] text`. */
export function formatChannelInput(messages: readonly ChannelMessage[], nameOf: UserNamer): string {
  return messages
    .map((m) => {
      const author =
        m.author.type === "agent"
          ? `@${m.author.id}`
          : m.author.type === "user"
            ? nameOf(m.author.id)
            : "system";
      return `[${author}] ${m.text}`;
    })
    .join("\n\n");
}

/** A step's input: its instruction first, then what the previous step produced. */
export function stepInput(instruction: string | undefined, input: string): string {
  return instruction?.trim() ? `${instruction.trim()}\n\n${input}` : input;
}
