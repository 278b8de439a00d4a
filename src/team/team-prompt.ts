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

function agentLabel(agent: AgentRecord, purpose?: string): string {
  const label = `@${agent.id} (${agent.emoji ? `${agent.emoji} ` : ""}${agent.name})`;
  return purpose ? `${label}: ${purpose}` : label;
}

/**
 * What the web UI renders, told to every team agent so they draw a diagram where it helps. Fixed text
 * at the end of the team part of the system prompt: it never changes between turns, so the cached
 * prefix stays whole.
 */
export const RENDERING_NOTE =
  "The web UI renders Markdown and draws Mermaid diagrams from ```mermaid code blocks (flowchart, sequenceDiagram, classDiagram, stateDiagram, erDiagram, gantt, pie, mindmap). When a diagram explains better than words (a flow, a sequence, a structure, a plan), include one; keep the prose for what it does not show.";

/** What an agent is for, in one line: the first sentence of its SOUL.md that is not a heading. */
export function purposeOf(soul: string): string | undefined {
  const line = soul
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "" && !l.startsWith("#") && !l.startsWith("---"));
  if (!line) return undefined;
  const sentence = /^(.+?[.!?。！？])(\s|$)/u.exec(line)?.[1] ?? line;
  return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}

/**
 * The system text for an agent answering in a channel. It changes only when the channel's members
 * or their personas change, so it stays in the cached prefix of every turn.
 */
export function channelSystemText(
  agent: AgentRecord,
  channel: ChannelRecord,
  agents: ReadonlyMap<string, AgentRecord>,
  nameOf: UserNamer,
  /** What each other agent is for (from its persona), by id. */
  purposes: ReadonlyMap<string, string> = new Map(),
): string {
  const people = channel.members.filter((m) => m.type === "user").map((m) => nameOf(m.id));
  const others = channel.members
    .filter((m) => m.type === "agent" && m.id !== agent.id)
    .map((m) => agents.get(m.id))
    .filter((a): a is AgentRecord => a !== undefined);
  const where =
    channel.kind === "direct"
      ? `a direct chat named "${channel.name}"`
      : `the group channel "${channel.name}"`;
  const lines = [`You are ${agent.name} (@${agent.id}), one agent of a Dimsum team, answering in ${where}.`];
  if (channel.kind === "group" && others.length > 0) {
    lines.push(
      `People here: ${people.length > 0 ? people.join(", ") : "none"}. Other agents here:`,
      ...others.map((a) => `- ${agentLabel(a, purposes.get(a.id))}`),
    );
  } else {
    lines.push(
      `People here: ${people.length > 0 ? people.join(", ") : "none"}. Other agents here: ${
        others.length > 0 ? others.map((a) => agentLabel(a)).join(", ") : "none"
      }.`,
    );
  }
  lines.push(
    "The new messages since you last spoke arrive as lines `[name] text` for people and `[@agent] text` for agents. Reply with your own answer only, without a `[@you]` prefix.",
  );
  if (channel.kind === "group") {
    lines.push(
      "People route a message to an agent by writing @id (or @all for every agent). To hand the work over to another agent of this group in the open, write @id in your answer: once you finish, that agent answers next, seeing the conversation so far. Hand over when the next step is that agent's job and the group should see it; mention an agent only when you want it to act. For a private sub-task whose result you need in your own answer, use the call_agent tool instead: its answer comes back to you as the tool result.",
    );
  } else {
    lines.push(
      "To get another agent's help, use the call_agent tool with its id and a clear task: its answer comes back to you as the tool result. Mentioning an agent in your reply does not start it.",
    );
  }
  lines.push(LANGUAGE_RULE);
  return lines.join("\n");
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
