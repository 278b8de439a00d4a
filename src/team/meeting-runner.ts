/**
 * Drives meetings: round by round each participant speaks (a turn posted in the group that reads
 * everything said before, people's words included), then the moderator writes minutes held to a
 * schema. The record is saved after every statement and every transition, so a restarted server
 * resumes at the speaker it was at: a turn cut off by the restart is spoken again from the start
 * (its unfinished answer was never posted), and nothing said is said twice.
 */
import { randomUUID } from "node:crypto";
import { conflict, invalid, notFound } from "../errors.js";
import type { TurnOutcome, TurnSpec } from "./agent-runner.js";
import { KeyedLock } from "./keyed-lock.js";
import { minutesMarkdown, minutesSchema } from "./meeting-minutes.js";
import { minutesInput, minutesSystemText, speakerInput, speakerSystemText } from "./meeting-prompt.js";
import type { MeetingAction, MeetingInput, MeetingMinutes, MeetingRecord } from "./meeting-types.js";
import type { MeetingRepository } from "./store/meeting-repo.js";
import { formatChannelInput, type NamesFor, peopleIn } from "./team-prompt.js";
import type { TeamStore } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, TeamEvent } from "./types.js";

export interface MeetingRunnerDeps {
  meetings: MeetingRepository;
  store: TeamStore;
  launchTurn: (spec: TurnSpec) => Promise<{ runId: string; done: Promise<TurnOutcome> }>;
  cancelRun: (runId: string, reason: string) => Promise<unknown>;
  emit: (event: TeamEvent) => void;
  now: () => number;
  nameOf: NamesFor;
  onError: (err: unknown) => void;
}

const MAX_ROUNDS = 10;
const MAX_TRANSCRIPT = 500;
const OPEN = ["running", "closing"] as const;

/** Owns the meetings of a team. */
export class MeetingRunner {
  readonly #deps: MeetingRunnerDeps;
  readonly #lock = new KeyedLock();
  readonly #pending = new Set<Promise<unknown>>();
  #closing = false;

  constructor(deps: MeetingRunnerDeps) {
    this.#deps = deps;
  }

  /** Checks the input against the group and creates the meeting (not started yet). */
  plan(
    channel: ChannelRecord,
    agents: readonly AgentRecord[],
    input: MeetingInput,
    createdBy: string,
    startMessageId: number,
  ): MeetingRecord {
    if (channel.kind !== "group") throw invalid("Meetings take place in groups.", "start it in a group chat");
    const topic = input.topic.trim();
    if (topic === "") throw invalid("A meeting needs a topic.", "write /meeting <topic>");
    const inGroup = channel.members
      .filter((m) => m.type === "agent" && agents.some((a) => a.id === m.id))
      .map((m) => m.id);
    const participants = input.participants ?? inGroup;
    const strangers = participants.filter((p) => !inGroup.includes(p));
    if (strangers.length > 0) {
      throw invalid(
        `${strangers.map((s) => `@${s}`).join(", ")} ${strangers.length === 1 ? "is" : "are"} not an agent of this group.`,
        `choose among ${inGroup.map((a) => `@${a}`).join(", ") || "the group's agents (add some first)"}`,
      );
    }
    if (participants.length === 0)
      throw invalid("A meeting needs at least one agent.", "add agents to the group");
    if (new Set(participants).size !== participants.length) throw invalid("Each participant is listed once.");
    const rounds = input.rounds ?? 2;
    if (!Number.isInteger(rounds) || rounds < 1 || rounds > MAX_ROUNDS) {
      throw invalid(`Rounds must be a whole number from 1 to ${MAX_ROUNDS}.`);
    }
    const leader =
      channel.leaderAgentId && inGroup.includes(channel.leaderAgentId) ? channel.leaderAgentId : undefined;
    const moderatorId = input.moderatorId ?? leader ?? participants[0]!;
    if (!inGroup.includes(moderatorId))
      throw invalid(`The moderator @${moderatorId} is not an agent of this group.`);
    const decision = input.decision ?? { kind: "free" as const };
    if (decision.kind === "choice") {
      const options = decision.options.map((o) => o.trim()).filter(Boolean);
      if (options.length < 2 || new Set(options).size !== options.length) {
        throw invalid("A choice needs at least two different options.");
      }
      decision.options = options;
    }
    const budget = input.budget;
    if (budget && [budget.tokens, budget.costUsd].some((v) => v !== undefined && !(v > 0))) {
      throw invalid("A budget is a positive number of tokens or USD.");
    }
    const now = this.#deps.now();
    return {
      id: `meeting_${randomUUID()}`,
      channelId: channel.id,
      topic,
      participants,
      rounds,
      moderatorId,
      ...(budget && (budget.tokens !== undefined || budget.costUsd !== undefined) ? { budget } : {}),
      decision,
      status: "running",
      round: 1,
      speaker: 0,
      statements: [],
      usage: { tokens: 0, costUsd: 0 },
      startMessageId,
      createdBy,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** Saves a planned meeting and gives the first speaker the word. */
  async begin(meeting: MeetingRecord): Promise<MeetingRecord> {
    await this.#save(meeting);
    this.#track(this.#step(meeting.id));
    return meeting;
  }

  async get(id: string): Promise<MeetingRecord> {
    const meeting = await this.#deps.meetings.get(id);
    if (!meeting) throw notFound(`No meeting with id "${id}".`);
    return meeting;
  }

  /** A group's meetings, newest first; with `query`, those whose topic or minutes hold its words. */
  list(channelId: string, query?: string): Promise<MeetingRecord[]> {
    return this.#deps.meetings.listByChannel(channelId, { ...(query ? { query } : {}), limit: 100 });
  }

  /** The meeting going on in a group, if any. */
  async openIn(channelId: string): Promise<MeetingRecord | undefined> {
    return (await this.#deps.meetings.listByStatus(OPEN)).find((m) => m.channelId === channelId);
  }

  /** A person ends the meeting early (minutes follow), asks for one more round, or stops it. */
  act(id: string, action: MeetingAction, byName: string): Promise<MeetingRecord> {
    return this.#lock.run(id, async () => {
      const meeting = await this.get(id);
      const cancel = meeting.currentRunId;
      switch (action.action) {
        case "more":
          if (meeting.status !== "running")
            throw conflict(`The meeting is ${meeting.status}; only a running meeting gets another round.`);
          if (meeting.rounds >= MAX_ROUNDS) throw conflict(`A meeting has at most ${MAX_ROUNDS} rounds.`);
          meeting.rounds++;
          await this.#save(meeting);
          return meeting;
        case "end":
          if (meeting.status !== "running")
            throw conflict(`The meeting is ${meeting.status}; only a running meeting can be ended early.`);
          meeting.status = "closing";
          meeting.note = `${byName} ended the meeting early, in round ${meeting.round} of ${meeting.rounds}.`;
          delete meeting.currentRunId;
          await this.#save(meeting);
          await this.#notice(meeting, `${meeting.note} The minutes follow.`);
          if (cancel) await this.#deps.cancelRun(cancel, "The meeting was ended early.");
          this.#track(this.#step(id));
          return meeting;
        case "stop":
          if (meeting.status !== "running" && meeting.status !== "closing") {
            throw conflict(`The meeting is already ${meeting.status}.`);
          }
          meeting.status = "stopped";
          meeting.note = `${byName} stopped the meeting; there are no minutes.`;
          meeting.endedAt = this.#deps.now();
          delete meeting.currentRunId;
          await this.#save(meeting);
          await this.#notice(meeting, meeting.note);
          if (cancel) await this.#deps.cancelRun(cancel, "The meeting was stopped.");
          return meeting;
      }
    });
  }

  /** After a restart: each open meeting goes on at the turn it was at (a cut-off turn again). */
  async recover(): Promise<void> {
    for (const meeting of await this.#deps.meetings.listByStatus(OPEN)) {
      await this.#lock.run(meeting.id, async () => {
        delete meeting.currentRunId;
        await this.#save(meeting);
      });
      this.#track(this.#step(meeting.id));
    }
  }

  /** Stops reacting to turns (shutdown): turns cut off now are spoken again after the restart. */
  async close(): Promise<void> {
    this.#closing = true;
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Starts the next turn of the meeting, if it has none going on. */
  #step(id: string): Promise<void> {
    return this.#lock.run(id, async () => {
      if (this.#closing) return;
      const meeting = await this.#deps.meetings.get(id);
      if (!meeting || meeting.currentRunId !== undefined) return;
      if (meeting.status === "running") {
        const spent = overBudget(meeting);
        if (spent) {
          meeting.status = "closing";
          meeting.note = spent;
          await this.#save(meeting);
          await this.#notice(meeting, `${spent} The minutes follow, of what was said.`);
        } else if (meeting.round > meeting.rounds) {
          meeting.status = "closing";
          await this.#save(meeting);
        } else {
          await this.#startSpeaker(meeting);
          return;
        }
      }
      if (meeting.status === "closing") await this.#startMinutes(meeting);
    });
  }

  async #startSpeaker(meeting: MeetingRecord): Promise<void> {
    const { store } = this.#deps;
    const { channel, agents } = await store.channels.getWithAgents(meeting.channelId);
    if (!channel) return;
    const byId = new Map(agents.map((a) => [a.id, a]));
    const agentId = meeting.participants[meeting.speaker]!;
    const agent = byId.get(agentId);
    if (!agent || !channel.members.some((m) => m.type === "agent" && m.id === agentId)) {
      await this.#notice(meeting, `@${agentId} is no longer in the group and skips this turn.`);
      this.#advance(meeting);
      await this.#save(meeting);
      this.#track(this.#step(meeting.id));
      return;
    }
    const transcript = await this.#transcript(meeting, channel);
    const { runId, done } = await this.#deps.launchTurn({
      channelId: channel.id,
      agentId,
      triggerMessageId: meeting.startMessageId,
      ref: {
        userId: `meeting:${meeting.id}`,
        sessionId: `turn:${meeting.round}:${meeting.speaker}:${randomUUID()}`,
      },
      requestedBy: meeting.createdBy,
      system: speakerSystemText(agent, meeting, channel, byId),
      input: speakerInput(meeting, transcript),
    });
    meeting.currentRunId = runId;
    await this.#save(meeting);
    this.#track(done.then((outcome) => this.#spoke(meeting.id, runId, outcome)));
  }

  #spoke(id: string, runId: string, outcome: TurnOutcome): Promise<void> {
    return this.#lock.run(id, async () => {
      if (this.#closing) return;
      const meeting = await this.#deps.meetings.get(id);
      if (!meeting || meeting.currentRunId !== runId || meeting.status !== "running") return;
      delete meeting.currentRunId;
      const agentId = meeting.participants[meeting.speaker]!;
      if (outcome.ok) {
        const posted = await this.#deps.store.messages.byRun(runId);
        meeting.usage.tokens += outcome.tokens;
        meeting.usage.costUsd += outcome.costUsd;
        if (posted) meeting.statements.push({ round: meeting.round, agentId, messageId: posted.id, runId });
      } else {
        await this.#notice(
          meeting,
          `@${agentId} could not speak in round ${meeting.round}: ${outcome.error}`,
        );
      }
      this.#advance(meeting);
      await this.#save(meeting);
      this.#track(this.#step(id));
    });
  }

  async #startMinutes(meeting: MeetingRecord): Promise<void> {
    const { channel, agents } = await this.#deps.store.channels.getWithAgents(meeting.channelId);
    if (!channel) return;
    const byId = new Map(agents.map((a) => [a.id, a]));
    const moderator = byId.get(meeting.moderatorId);
    if (!moderator) {
      await this.#fail(
        meeting,
        `The moderator @${meeting.moderatorId} no longer exists, so there are no minutes.`,
      );
      return;
    }
    const transcript = await this.#transcript(meeting, channel);
    const { runId, done } = await this.#deps.launchTurn({
      channelId: channel.id,
      agentId: moderator.id,
      triggerMessageId: meeting.startMessageId,
      ref: { userId: `meeting:${meeting.id}`, sessionId: `minutes:${randomUUID()}` },
      requestedBy: meeting.createdBy,
      system: minutesSystemText(moderator, meeting, channel, byId),
      input: minutesInput(meeting, transcript),
      output: { schema: minutesSchema(meeting.decision), name: "minutes" },
    });
    meeting.currentRunId = runId;
    await this.#save(meeting);
    this.#track(done.then((outcome) => this.#minutesWritten(meeting.id, runId, outcome)));
  }

  #minutesWritten(id: string, runId: string, outcome: TurnOutcome): Promise<void> {
    return this.#lock.run(id, async () => {
      if (this.#closing) return;
      const meeting = await this.#deps.meetings.get(id);
      if (!meeting || meeting.currentRunId !== runId || meeting.status !== "closing") return;
      delete meeting.currentRunId;
      if (!outcome.ok) {
        await this.#fail(meeting, `The moderator could not write the minutes: ${outcome.error}`);
        return;
      }
      const minutes = JSON.parse(outcome.answer) as MeetingMinutes;
      meeting.usage.tokens += outcome.tokens;
      meeting.usage.costUsd += outcome.costUsd;
      meeting.minutes = minutes;
      meeting.status = "done";
      meeting.endedAt = this.#deps.now();
      // The moderator's answer becomes the minutes card (its text, the Markdown of the minutes).
      const posted = await this.#deps.store.messages.byRun(runId);
      if (posted) {
        const card = await this.#deps.store.messages.edit(
          posted.id,
          minutesMarkdown(meeting, minutes),
          null,
          [
            {
              type: "minutes",
              meetingId: meeting.id,
              topic: meeting.topic,
              minutes,
              ...(meeting.note ? { note: meeting.note } : {}),
            },
          ],
        );
        if (card) {
          meeting.minutesMessageId = card.id;
          this.#deps.emit({ type: "message", channelId: meeting.channelId, message: card });
        }
      }
      await this.#save(meeting);
    });
  }

  async #fail(meeting: MeetingRecord, note: string): Promise<void> {
    meeting.status = "error";
    meeting.note = note;
    meeting.endedAt = this.#deps.now();
    await this.#save(meeting);
    await this.#notice(meeting, note);
  }

  #advance(meeting: MeetingRecord): void {
    meeting.speaker++;
    if (meeting.speaker >= meeting.participants.length) {
      meeting.speaker = 0;
      meeting.round++;
    }
  }

  /** Everything said in the meeting so far: its statements and the people's words, in order. */
  async #transcript(meeting: MeetingRecord, channel: ChannelRecord): Promise<string> {
    const { store } = this.#deps;
    const latest = (await store.messages.list(channel.id, { limit: 1 }))[0];
    if (!latest) return "";
    const said = new Set(meeting.statements.map((s) => s.messageId));
    const messages = (
      await store.messages.range(channel.id, meeting.startMessageId, latest.id, MAX_TRANSCRIPT)
    ).filter((m: ChannelMessage) => said.has(m.id) || (m.author.type === "user" && m.text.trim() !== ""));
    const authors = messages.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
    return formatChannelInput(messages, await this.#deps.nameOf([...peopleIn(channel), ...authors]));
  }

  async #notice(meeting: MeetingRecord, text: string): Promise<void> {
    const message = await this.#deps.store.messages.insert({
      channelId: meeting.channelId,
      author: { type: "system", id: "meeting" },
      text,
      mentions: [],
      createdAt: this.#deps.now(),
    });
    this.#deps.emit({ type: "message", channelId: meeting.channelId, message });
  }

  async #save(meeting: MeetingRecord): Promise<void> {
    meeting.updatedAt = this.#deps.now();
    await this.#deps.meetings.save(meeting);
    this.#deps.emit({ type: "meeting", channelId: meeting.channelId, meeting: structuredClone(meeting) });
  }

  #track(promise: Promise<unknown>): void {
    const tracked = promise.catch((err: unknown) => this.#deps.onError(err));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }
}

/** Why the meeting's budget is spent, or undefined while it is not. */
function overBudget(meeting: MeetingRecord): string | undefined {
  const { budget, usage } = meeting;
  if (budget?.tokens !== undefined && usage.tokens >= budget.tokens) {
    return `The meeting's budget of ${budget.tokens} tokens is spent (${usage.tokens} used), so it ends here.`;
  }
  if (budget?.costUsd !== undefined && usage.costUsd >= budget.costUsd) {
    return `The meeting's budget of $${budget.costUsd} is spent ($${usage.costUsd.toFixed(4)} used), so it ends here.`;
  }
  return undefined;
}

/** `/meeting <topic>`: the topic, or undefined when the text is no meeting command. */
export function meetingCommand(text: string): string | undefined {
  const match = /^\/meeting(?:\s+([\s\S]*))?$/i.exec(text.trim());
  return match ? (match[1] ?? "").trim() : undefined;
}
