import { describe, expect, it } from "vitest";
import { OutputChecker } from "../../src/agent/structured-output.js";
import { minutesSchema } from "../../src/team/meeting-minutes.js";
import type { MeetingMinutes, MeetingRecord } from "../../src/team/meeting-types.js";
import type { ChannelRecord, TeamEvent } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, lastUserText, systemOf, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Council",
    leaderAgentId: "assistant",
    agentIds: ["assistant", "coder", "writer"],
    userIds: [],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

const MINUTES: MeetingMinutes = {
  decision: "Ship the CSV importer first",
  reason: "It unblocks the most people this month.",
  options: [
    { option: "CSV importer", for: ["most asked for"], against: ["needs a parser"] },
    { option: "PDF export", for: ["looks good"], against: ["few people asked"] },
  ],
  dissent: [{ who: "@writer", why: "would rather write the docs first" }],
  actionItems: [{ task: "write the CSV parser", owner: "@coder", due: "2026-12-14" }],
  openQuestions: ["Which encodings must it read?"],
};

const ended = (e: TeamEvent) =>
  e.type === "meeting" && ["done", "stopped", "error"].includes(e.meeting.status);

async function finishedMeeting(id: string): Promise<MeetingRecord> {
  const event = await h.waitFor((e) => ended(e) && e.type === "meeting" && e.meeting.id === id);
  if (event.type !== "meeting") throw new Error("unreachable");
  return event.meeting;
}

/** The requests of the meeting's turns, in order: [agent, last user text]. */
const turns = () => server.requests.map((r) => [agentOf(r), lastUserText(r)] as const);

describe("meetings", () => {
  it("three agents, two rounds: each speaker reads every earlier statement; minutes validate and are stored", async () => {
    scripts.add(
      "assistant",
      { text: "A1: CSV first." },
      { text: "A2: agreed with coder." },
      { text: JSON.stringify(MINUTES) },
    );
    scripts.add("coder", { text: "C1: the parser is easy." }, async () => {
      // A person speaks during round 2; the next speaker reads it.
      await h.team.postMessage(alice, group.id, "Remember the budget is small.");
      return { text: "C2: still CSV." };
    });
    scripts.add("writer", { text: "W1: docs matter." }, { text: "W2: fine, CSV." });

    const { message } = await h.team.postMessage(alice, group.id, "/meeting What do we build next?");
    const opened = h.events.find((e) => e.type === "meeting");
    expect(opened?.type === "meeting" && opened.meeting.startMessageId).toBe(message.id);
    const meeting = await finishedMeeting(opened?.type === "meeting" ? opened.meeting.id : "");

    expect(meeting.status).toBe("done");
    expect(turns().map(([agent]) => agent)).toEqual([
      "assistant",
      "coder",
      "writer",
      "assistant",
      "coder",
      "writer",
      "assistant",
    ]);
    const said = [
      "A1: CSV first.",
      "C1: the parser is easy.",
      "W1: docs matter.",
      "A2: agreed with coder.",
      "C2: still CSV.",
      "W2: fine, CSV.",
    ];
    // Each speaker's request holds every statement made before it, by its speaker.
    turns()
      .slice(0, 6)
      .forEach(([, input], i) => {
        for (const earlier of said.slice(0, i)) expect(input).toContain(earlier);
        for (const later of said.slice(i)) expect(input).not.toContain(later);
      });
    expect(turns()[3]?.[1]).toContain("[@coder] C1: the parser is easy.");
    expect(turns()[0]?.[1]).toContain("you open the meeting");
    expect(turns()[4]?.[1]).toContain("round 2 of 2");
    // The interjection reached the next speaker, and no agent answered it on its own.
    expect(turns()[5]?.[1]).toContain("[alice] Remember the budget is small.");
    expect(turns()[4]?.[1]).not.toContain("Remember the budget");
    // The minutes' request saw everything and asked for the schema.
    expect(turns()[6]?.[1]).toContain("W2: fine, CSV.");
    expect(systemOf(server.requests[6])).toContain("the moderator of a meeting");
    expect(systemOf(server.requests[6])).toContain('"actionItems"');

    expect(meeting.statements.map((s) => [s.round, s.agentId])).toEqual([
      [1, "assistant"],
      [1, "coder"],
      [1, "writer"],
      [2, "assistant"],
      [2, "coder"],
      [2, "writer"],
    ]);
    expect(meeting.minutes).toEqual(MINUTES);
    expect(
      new OutputChecker({ schema: minutesSchema(meeting.decision) }).check(JSON.stringify(meeting.minutes))
        .ok,
    ).toBe(true);

    // Stored with the group: the Decisions list finds it by its words, the card is in the chat.
    expect((await h.team.listMeetings(alice, group.id)).map((m) => m.id)).toEqual([meeting.id]);
    expect((await h.team.listMeetings(alice, group.id, { query: "encodings" })).map((m) => m.id)).toEqual([
      meeting.id,
    ]);
    expect(await h.team.listMeetings(alice, group.id, { query: "kubernetes" })).toEqual([]);
    const messages = await h.team.listMessages(alice, group.id);
    const card = messages.find((m) => m.id === meeting.minutesMessageId);
    expect(card?.parts).toEqual([
      { type: "minutes", meetingId: meeting.id, topic: "What do we build next?", minutes: MINUTES },
    ]);
    const markdown = await h.team.meetingMarkdown(alice, meeting.id);
    expect(markdown).toContain("# Minutes: What do we build next?");
    expect(markdown).toContain("| write the CSV parser | @coder | 2026-12-14 |");
    expect(card?.text).toBe(markdown);
    // Statements are the agents' messages in the group, each once.
    const agentTexts = messages
      .filter((m) => m.author.type === "agent" && m.id !== card?.id)
      .map((m) => m.text);
    expect(agentTexts).toEqual(said);

    // An action item for an agent becomes its task in the group.
    const started = await h.team.startActionItem(alice, meeting.id, 0);
    expect(started.message.text).toContain("@coder write the CSV parser (due 2026-12-14)");
    expect(started.runs.map((r) => r.agentId)).toEqual(["coder"]);
    await h.finished(started.runs[0]!.id);
  });

  it("ends with a note and minutes of what was said when the budget runs out", async () => {
    const spend = { usage: { input: 100, output: 50 } };
    scripts.add(
      "assistant",
      { text: "A1", ...spend },
      { text: JSON.stringify({ ...MINUTES, decision: null }), ...spend },
    );
    scripts.add("coder", { text: "C1", ...spend });
    const meeting = await h.team.startMeeting(alice, group.id, {
      topic: "Budgeted",
      participants: ["assistant", "coder", "writer"],
      budget: { tokens: 250 },
    });
    const done = await finishedMeeting(meeting.id);
    expect(done.status).toBe("done");
    expect(done.statements.map((s) => s.agentId)).toEqual(["assistant", "coder"]);
    expect(done.note).toContain("budget of 250 tokens is spent (300 used)");
    expect(done.minutes?.decision).toBeNull();
    expect(turns().map(([agent]) => agent)).toEqual(["assistant", "coder", "assistant"]);
    expect(turns()[2]?.[1]).toContain("budget of 250 tokens is spent");
    const notes = (await h.team.listMessages(alice, group.id)).filter((m) => m.author.type === "system");
    expect(notes.map((m) => m.text)).toEqual([
      expect.stringContaining("The minutes follow, of what was said."),
    ]);
  });

  it("a person can ask for one more round, or end the meeting early", async () => {
    scripts.add("assistant", async () => {
      const open = h.events.findLast((e) => e.type === "meeting");
      if (open?.type === "meeting") await h.team.meetingAction(alice, open.meeting.id, { action: "more" });
      return { text: "A1" };
    });
    scripts.add("coder", async () => {
      const open = h.events.findLast((e) => e.type === "meeting");
      if (open?.type === "meeting") await h.team.meetingAction(alice, open.meeting.id, { action: "end" });
      return { text: "C1 (cut off)" };
    });
    scripts.add("assistant", { text: JSON.stringify(MINUTES) });
    const meeting = await h.team.startMeeting(alice, group.id, { topic: "Short", rounds: 1 });
    const done = await finishedMeeting(meeting.id);
    expect(done.rounds).toBe(2);
    expect(done.status).toBe("done");
    expect(done.note).toContain("ended the meeting early, in round 1 of 2");
    // The cut-off turn is no statement.
    expect(done.statements.map((s) => s.agentId)).toEqual(["assistant"]);
    expect(turns().map(([agent]) => agent)).toEqual(["assistant", "coder", "assistant"]);
  });

  it("refuses a meeting outside the group's agents, and a second one at once", async () => {
    await expect(
      h.team.startMeeting(alice, group.id, { topic: "x", participants: ["translator"] }),
    ).rejects.toThrow(/@translator is not an agent of this group/);
    scripts.add("assistant", { text: "A1", stall: { afterChunks: 1, mode: "silent" } });
    const first = await h.team.startMeeting(alice, group.id, { topic: "first" });
    await expect(h.team.postMessage(alice, group.id, "/meeting second")).rejects.toThrow(/already going on/);
    await h.team.meetingAction(alice, first.id, { action: "stop" });
    expect((await finishedMeeting(first.id)).status).toBe("stopped");
  });
});
