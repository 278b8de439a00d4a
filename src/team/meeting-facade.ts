/**
 * The team facade's meeting methods: access checks, the person's message that opens a meeting,
 * interjections (a person's message without a mention during a meeting is for the meeting, not the
 * leader), the Decisions list, the Markdown export and starting an action item.
 */

import { conflict, invalid, notFound } from "../errors.js";
import { assertNotGuest } from "./access.js";
import type { ChannelService } from "./channel-service.js";
import { minutesMarkdown } from "./meeting-minutes.js";
import { type MeetingRunner, meetingCommand } from "./meeting-runner.js";
import type { MeetingInput, MeetingRecord } from "./meeting-types.js";
import { parseMentions } from "./mentions.js";
import type { NamesFor } from "./team-prompt.js";
import type { TeamStore } from "./team-store.js";
import type { Actor, AgentRecord, ChannelRecord, MessagePart, PostResult, Team, TeamEvent } from "./types.js";

export interface MeetingFacadeDeps {
  ready: () => Promise<unknown>;
  store: TeamStore;
  channels: ChannelService;
  meetings: MeetingRunner;
  emit: (event: TeamEvent) => void;
  now: () => number;
  nameOf: NamesFor;
  /** Posts a person's message and routes it as any other (an action item's task). */
  post: (actor: Actor, channel: ChannelRecord, text: string) => Promise<PostResult>;
}

type MeetingMethods = Pick<
  Team,
  "startMeeting" | "getMeeting" | "listMeetings" | "meetingAction" | "meetingMarkdown" | "startActionItem"
>;

/** The meeting part of the team facade, and the hooks `postMessage` uses. */
export function meetingFacade(deps: MeetingFacadeDeps) {
  const { store, channels, meetings } = deps;

  async function visibleMeeting(actor: Actor, id: string): Promise<MeetingRecord> {
    const meeting = await meetings.get(id).catch(() => undefined);
    // A meeting of a chat the person may not see does not exist for them.
    const channel = meeting
      ? await channels.visible(actor, meeting.channelId).catch(() => undefined)
      : undefined;
    if (!meeting || !channel) throw notFound(`No meeting with id "${id}".`);
    return meeting;
  }

  /** Stores the person's opening message and starts the meeting after it. */
  async function open(
    actor: Actor,
    channel: ChannelRecord,
    input: MeetingInput,
    text: string,
    parts?: MessagePart[],
  ): Promise<PostResult & { meeting: MeetingRecord }> {
    assertNotGuest(actor, "start a meeting");
    if (await meetings.openIn(channel.id)) {
      throw conflict(
        "A meeting is already going on in this group.",
        "end it (or wait for its minutes) first",
      );
    }
    const { agents } = await store.channels.getWithAgents(channel.id);
    // Checked before the message is stored, so a mistake leaves nothing behind.
    meetings.plan(channel, agents, input, actor.userId, 0);
    const message = await store.messages.insert(
      {
        channelId: channel.id,
        author: { type: "user", id: actor.userId },
        text,
        ...(parts ? { parts } : {}),
        mentions: [],
        createdAt: deps.now(),
      },
      { readBy: actor.userId },
    );
    deps.emit({ type: "message", channelId: channel.id, message });
    const meeting = await meetings.begin(meetings.plan(channel, agents, input, actor.userId, message.id));
    return { message, runs: [], meeting };
  }

  const methods: MeetingMethods = {
    async startMeeting(actor, channelId, input) {
      await deps.ready();
      const channel = await channels.visible(actor, channelId);
      const topic = typeof input.topic === "string" ? input.topic.trim() : "";
      return (await open(actor, channel, input, `/meeting ${topic}`)).meeting;
    },
    async getMeeting(actor, meetingId) {
      await deps.ready();
      return visibleMeeting(actor, meetingId);
    },
    async listMeetings(actor, channelId, options = {}) {
      await deps.ready();
      const channel = await channels.visible(actor, channelId);
      return meetings.list(channel.id, options.query);
    },
    async meetingAction(actor, meetingId, action) {
      await deps.ready();
      const meeting = await visibleMeeting(actor, meetingId);
      assertNotGuest(actor, "change a meeting");
      const name = (await deps.nameOf([actor.userId]))(actor.userId);
      return meetings.act(meeting.id, action, name);
    },
    async meetingMarkdown(actor, meetingId) {
      await deps.ready();
      const meeting = await visibleMeeting(actor, meetingId);
      if (!meeting.minutes)
        throw notFound("This meeting has no minutes yet.", "wait for the moderator to close it");
      return minutesMarkdown(meeting, meeting.minutes);
    },
    async startActionItem(actor, meetingId, index) {
      await deps.ready();
      const meeting = await visibleMeeting(actor, meetingId);
      assertNotGuest(actor, "start an action item");
      const item = meeting.minutes?.actionItems[index];
      if (!item) throw notFound(`The minutes have no action item ${index + 1}.`);
      const channel = await channels.visible(actor, meeting.channelId);
      const { agents } = await store.channels.getWithAgents(channel.id);
      const owner = ownerAgent(item.owner, channel, agents);
      if (!owner) {
        throw invalid(
          `The owner "${item.owner}" is not an agent of this group, so it cannot be started here.`,
          "remind the person yourself, or add the agent to the group",
        );
      }
      const due = item.due.trim() ? ` (due ${item.due.trim()})` : "";
      return deps.post(
        actor,
        channel,
        `@${owner.id} ${item.task}${due} — an action item of the meeting "${meeting.topic}".`,
      );
    },
  };

  return {
    methods,
    /** `/meeting <topic>` in a group: the message opens a meeting with the defaults. */
    async fromMessage(
      actor: Actor,
      channel: ChannelRecord,
      text: string,
      parts?: MessagePart[],
    ): Promise<PostResult | undefined> {
      const topic = meetingCommand(text);
      if (topic === undefined || channel.kind !== "group") return undefined;
      if (topic === "") throw invalid("A meeting needs a topic.", "write /meeting <topic>");
      return open(actor, channel, { topic }, text, parts);
    },
    /**
     * Whether a person's message is an interjection in the meeting going on in the group (then no
     * agent answers it; the next speaker reads it): true unless it mentions agents by name.
     */
    async interjection(channel: ChannelRecord, text: string, agents: ReadonlyMap<string, AgentRecord>) {
      if (channel.kind !== "group" || !(await meetings.openIn(channel.id))) return false;
      const present = channel.members
        .filter((m) => m.type === "agent")
        .flatMap((m) => {
          const agent = agents.get(m.id);
          return agent ? [agent] : [];
        });
      const mentions = parseMentions(text, present);
      return !mentions.all && !mentions.chain && mentions.agentIds.length === 0;
    },
  };
}

/** The agent of the group an action item's owner names (`@id`, the id, or the name). */
function ownerAgent(
  owner: string,
  channel: ChannelRecord,
  agents: readonly AgentRecord[],
): AgentRecord | undefined {
  const key = owner.trim().replace(/^@/, "").toLowerCase();
  const members = new Set(channel.members.filter((m) => m.type === "agent").map((m) => m.id));
  return agents.find(
    (a) => members.has(a.id) && (a.id.toLowerCase() === key || a.name.toLowerCase() === key),
  );
}
