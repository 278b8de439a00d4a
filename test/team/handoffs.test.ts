import { describe, expect, it } from "vitest";
import type { ChannelMessage, ChannelRecord, TeamEvent } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, groupSuite, lastUserText, systemOf, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Hand-offs",
    leaderAgentId: "assistant",
    agentIds: ["assistant", "coder", "writer"],
    userIds: ["bob"],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

const isNote = (e: TeamEvent) =>
  e.type === "message" && e.message.author.type === "system" && e.message.author.id === "handoffs";

const agentRuns = (agentId: string) =>
  new Set(h.events.flatMap((e) => (e.type === "run" && e.run.agentId === agentId ? [e.run.id] : [])));

/** Waits until no run of the group is queued or running (each run seen has ended). */
async function settled(): Promise<void> {
  for (;;) {
    const last = new Map<string, string>();
    for (const e of h.events) if (e.type === "run") last.set(e.run.id, e.run.status);
    const open = [...last].filter(([, status]) => status === "queued" || status === "running");
    if (open.length === 0) return;
    await Promise.all(open.map(([id]) => h.finished(id)));
  }
}

const texts = (messages: ChannelMessage[]) =>
  messages.map((m) => `${m.author.type === "agent" ? `@${m.author.id}` : m.author.id}: ${m.text}`);

describe("hand-offs by @mention in a group", () => {
  it("starts the mentioned agent next, with the first answer in its context", async () => {
    scripts.add("assistant", { text: "The plan is ready. @coder please write the parser." });
    scripts.add("coder", { text: "Parser written: parse = (s) => s.split(',')" });

    const { runs } = await h.team.postMessage(alice, group.id, "we need a CSV parser");
    await h.finished(runs[0]!.id);
    await settled();

    const messages = await h.team.listMessages(alice, group.id);
    expect(texts(messages)).toEqual([
      "alice: we need a CSV parser",
      "@assistant: The plan is ready. @coder please write the parser.",
      "@coder: Parser written: parse = (s) => s.split(',')",
    ]);
    const coderRequest = server.requests.find((r) => agentOf(r) === "coder");
    // The conversation so far: the person's message and the hand-off itself.
    expect(lastUserText(coderRequest)).toContain("[alice] we need a CSV parser");
    expect(lastUserText(coderRequest)).toContain(
      "[@assistant] The plan is ready. @coder please write the parser.",
    );
    // Shown in the group as an answer to the message that handed over.
    expect(messages[2]?.replyTo).toBe(messages[1]?.id);
  });

  it("tells each agent who is in the group, what each is for, and when to hand over", async () => {
    const { runs } = await h.team.postMessage(alice, group.id, "hello");
    await h.finished(runs[0]!.id);
    const system = systemOf(server.requests.find((r) => agentOf(r) === "assistant"));
    expect(system).toContain("- @coder (💻 Coder): ");
    expect(system).toContain("- @writer (");
    expect(system).toContain("write @id in your answer: once you finish, that agent answers next");
    expect(system).toContain("use the call_agent tool instead");
  });

  it("never starts the answering agent itself, nor anyone for a person's mention", async () => {
    scripts.add("assistant", { text: "I, @assistant, asked @bob to check this." });
    const { runs } = await h.team.postMessage(alice, group.id, "who checks?");
    await h.finished(runs[0]!.id);
    await settled();
    expect(server.requests.map(agentOf)).toEqual(["assistant"]);
    expect(h.events.some(isNote)).toBe(false);
  });

  it("stops an A→B→A loop after groups.maxHandoffs hand-offs, with a note in the group", async () => {
    let turn = 0;
    const bounce = (to: string) => () => ({ text: `step ${++turn}: over to @${to}` });
    for (let i = 0; i < 10; i++) {
      scripts.add("assistant", bounce("coder"));
      scripts.add("coder", bounce("assistant"));
    }
    await h.team.postMessage(alice, group.id, "ping pong");
    const note = await h.waitFor(isNote);
    await settled();
    expect(note.type === "message" && note.message.text).toContain("limit of 5 hand-offs");
    // The first answer and five hand-offs: six answers, alternating.
    expect(server.requests.map(agentOf)).toEqual([
      "assistant",
      "coder",
      "assistant",
      "coder",
      "assistant",
      "coder",
    ]);
    const messages = await h.team.listMessages(alice, group.id);
    expect(messages.at(-1)?.author).toEqual({ type: "system", id: "handoffs" });
    // Each answer read the one before it.
    expect(lastUserText(server.requests[5])).toContain("[@assistant] step 5: over to @coder");
  });

  it("stops a chain that goes round in a circle (an agent says the same again)", async () => {
    for (let i = 0; i < 5; i++) {
      scripts.add("assistant", { text: "Over to @coder." });
      scripts.add("coder", { text: "Back to @assistant." });
    }
    await h.team.postMessage(alice, group.id, "circle");
    const note = await h.waitFor(isNote);
    await settled();
    expect(note.type === "message" && note.message.text).toContain("circle");
    expect(server.requests.map(agentOf)).toEqual(["assistant", "coder", "assistant"]);
  });

  it("a person's Stop ends the whole chain", async () => {
    scripts.add("assistant", { text: "Split: @coder writes the code, @writer the docs." });
    const stall = {
      text: "working on it, then @assistant",
      stall: { afterChunks: 2, mode: "silent" as const },
    };
    scripts.add("coder", stall);
    scripts.add("writer", stall);

    const { runs } = await h.team.postMessage(alice, group.id, "build and document");
    await h.finished(runs[0]!.id);
    // Both hand-offs are running (their model calls stalled).
    const started = await Promise.all(
      ["coder", "writer"].map((agentId) =>
        h.waitFor((e) => e.type === "run" && e.run.agentId === agentId && e.run.status === "running"),
      ),
    );
    const coderRun = started[0]?.type === "run" ? started[0].run : undefined;
    const writerRun = started[1]?.type === "run" ? started[1].run : undefined;
    await h.team.cancelRun(alice, coderRun!.id);
    expect((await h.finished(writerRun!.id)).status).toBe("cancelled");
    await settled();
    expect(agentRuns("assistant").size).toBe(1);
    expect((await h.team.getRun(alice, coderRun!.id)).status).toBe("cancelled");
  });
});
