/**
 * What meeting participants and the moderator read: a system text that stays the same for the whole
 * meeting (the cached prefix), and an input with everything said so far and whose turn it is.
 */
import type { MeetingRecord } from "./meeting-types.js";
import type { AgentRecord, ChannelRecord } from "./types.js";

function who(agents: ReadonlyMap<string, AgentRecord>, id: string): string {
  const agent = agents.get(id);
  return agent ? `@${id} (${agent.name})` : `@${id}`;
}

function setting(meeting: MeetingRecord, channel: ChannelRecord, agents: ReadonlyMap<string, AgentRecord>) {
  return [
    `Topic: ${meeting.topic}`,
    `Participants, in speaking order: ${meeting.participants.map((p) => who(agents, p)).join(", ")}. Moderator: ${who(agents, meeting.moderatorId)}.`,
    `The meeting takes place in the group "${channel.name}"; people of the group may speak in it too.`,
  ];
}

/** The system text of a participant, the same for each of its turns in the meeting. */
export function speakerSystemText(
  agent: AgentRecord,
  meeting: MeetingRecord,
  channel: ChannelRecord,
  agents: ReadonlyMap<string, AgentRecord>,
): string {
  return [
    `You are ${agent.name} (@${agent.id}), one agent of a Dimsum team, taking part in a meeting.`,
    ...setting(meeting, channel, agents),
    "Each participant speaks in turn, round by round, and reads everything said before. When it is your turn, answer the others by name: build on what they said, say where you agree or disagree and why, and add what you know. Use your tools when a fact needs checking. Keep to the point (a few short paragraphs). The meeting gives the next speaker the word: do not hand over with @mentions.",
  ].join("\n");
}

/** The system text of the moderator writing the minutes. */
export function minutesSystemText(
  agent: AgentRecord,
  meeting: MeetingRecord,
  channel: ChannelRecord,
  agents: ReadonlyMap<string, AgentRecord>,
): string {
  const shape =
    meeting.decision.kind === "choice"
      ? `The decision must be one of these options, or null for no decision: ${meeting.decision.options.map((o) => JSON.stringify(o)).join(", ")}.`
      : "The decision is free text, or null for no decision.";
  return [
    `You are ${agent.name} (@${agent.id}), the moderator of a meeting of a Dimsum team.`,
    ...setting(meeting, channel, agents),
    "Write the minutes of what was said: the decision (or null, with why none was reached), the options considered with the arguments for and against each, who disagreed and why, the action items (owner: @agent-id for an agent of the meeting, or a person's name; due: a date YYYY-MM-DD or a time), and the open questions. Record only what was said; do not invent agreement.",
    shape,
  ].join("\n");
}

/** A participant's input: the meeting so far and that it is their turn. */
export function speakerInput(meeting: MeetingRecord, transcript: string): string {
  const turn = `It is your turn, round ${meeting.round} of ${meeting.rounds}.`;
  return transcript === ""
    ? `Nothing has been said yet: you open the meeting. ${turn}`
    : `The meeting so far:\n\n${transcript}\n\n${turn}`;
}

/** The moderator's input for the minutes. */
export function minutesInput(meeting: MeetingRecord, transcript: string): string {
  const why = meeting.note ? `${meeting.note}\n\n` : "";
  return `${why}The meeting, everything that was said:\n\n${transcript === "" ? "(nothing was said)" : transcript}\n\nWrite the minutes now.`;
}
