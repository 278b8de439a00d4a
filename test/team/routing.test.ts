import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import type { FakeLlmServer, RecordedRequest } from "../../src/testing/fake-llm-server.js";
import { agentOf, alice, bob, groupSuite, lastUserText, systemOf, type TeamHarness } from "./harness.js";

let server: FakeLlmServer;
let h: TeamHarness;
let group: ChannelRecord;
const scripts = groupSuite(
  {
    name: "Launch",
    leaderAgentId: "assistant",
    agentIds: ["assistant", "coder", "writer"],
    userIds: ["bob"],
  },
  (suite) => {
    ({ server, h, group } = suite);
  },
);

const requestedAgents = () => server.requests.map(agentOf).sort();

describe("mention routing", () => {
  it("sends @coder's message to coder only, and stores its answer with the run id", async () => {
    const { message, runs } = await h.team.postMessage(alice, group.id, "@Coder please fix the build");
    expect(message.mentions).toEqual(["coder"]);
    expect(runs.map((r) => [r.agentId, r.status, r.depth])).toEqual([["coder", "queued", 0]]);
    const run = await h.finished(runs[0]!.id);
    expect(run.status).toBe("done");
    expect(h.statuses(run.id)).toEqual(["queued", "running", "done"]);
    expect(requestedAgents()).toEqual(["coder"]);

    const messages = await h.team.listMessages(alice, group.id);
    expect(messages.map((m) => [m.author, m.text, m.runId])).toEqual([
      [{ type: "user", id: "alice" }, "@Coder please fix the build", undefined],
      [{ type: "agent", id: "coder" }, "answer from @coder", run.id],
    ]);
    // The message event of the answer comes before the run's done event.
    const messageAt = h.events.findIndex((e) => e.type === "message" && e.message.runId === run.id);
    const doneAt = h.events.findIndex(
      (e) => e.type === "run" && e.run.id === run.id && e.run.status === "done",
    );
    expect(messageAt).toBeGreaterThan(-1);
    expect(messageAt).toBeLessThan(doneAt);
  });

  it("sends @all to every agent of the channel", async () => {
    const { runs } = await h.team.postMessage(alice, group.id, "Status update please, @all");
    await Promise.all(runs.map((r) => h.finished(r.id)));
    expect(runs.map((r) => r.agentId).sort()).toEqual(["assistant", "coder", "writer"]);
    expect(requestedAgents()).toEqual(["assistant", "coder", "writer"]);
  });

  it("sends an unmentioned message to the leader, and ignores unknown mentions, emails and code", async () => {
    const plain = await h.team.postMessage(alice, group.id, "hello team");
    expect(plain.runs.map((r) => r.agentId)).toEqual(["assistant"]);
    const unknown = await h.team.postMessage(alice, group.id, "@nobody mail ops@coder.dev about `@writer`");
    expect(unknown.runs.map((r) => r.agentId)).toEqual(["assistant"]);
    expect(unknown.message.mentions).toEqual(["assistant"]);
    await Promise.all([...plain.runs, ...unknown.runs].map((r) => h.finished(r.id)));
    expect(requestedAgents()).toEqual(["assistant", "assistant"]);
  });

  it("does not wake the leader for a message addressed to a person", async () => {
    const { runs, message } = await h.team.postMessage(alice, group.id, "@bob can you review?");
    expect(runs).toEqual([]);
    expect(message.mentions).toEqual([]);
  });

  it("answers every message of a direct chat with its agent", async () => {
    const dm = await h.team.createChannel(alice, {
      kind: "direct",
      name: "Me & writer",
      agentIds: ["writer"],
      userIds: [],
    });
    expect(dm.leaderAgentId).toBe("writer");
    const { runs } = await h.team.postMessage(alice, dm.id, "@coder draft a haiku");
    expect(runs.map((r) => r.agentId)).toEqual(["writer"]);
    await h.finished(runs[0]!.id);
  });

  it("gives the agent the group conversation since it last spoke, its persona and the team prompt", async () => {
    const first = await h.team.postMessage(alice, group.id, "@coder hi");
    await h.finished(first.runs[0]!.id);
    await h.team.postMessage(bob, group.id, "@bob note to self");
    const writer = await h.team.postMessage(alice, group.id, "@writer summarise");
    await h.finished(writer.runs[0]!.id);
    const second = await h.team.postMessage(bob, group.id, "@coder and now?");
    await h.finished(second.runs[0]!.id);

    const coderRequests = server.requests.filter((r) => agentOf(r) === "coder");
    expect(lastUserText(coderRequests[0])).toBe("[alice] @coder hi");
    expect(lastUserText(coderRequests[1])).toBe(
      "[bob] @bob note to self\n\n[alice] @writer summarise\n\n[@writer] answer from @writer\n\n[bob] @coder and now?",
    );
    const system = systemOf(coderRequests[1]);
    expect(system).toContain(
      'You are Coder (@coder), one agent of a Dimsum team, answering in the group channel "Launch"',
    );
    expect(system).toContain("People here: alice, bob");
    expect(system).toContain("@writer (✍️ Writer)");
    expect(system).toContain("call_agent");
    expect(system).toContain("# Persona\n\n# Coder");
    // The session keeps the agent's own history: its first answer is in the second request.
    expect(JSON.stringify(coderRequests[1]?.body)).toContain("answer from @coder");

    const trace = await h.team.getRunTrace(alice, second.runs[0]!.id);
    expect(trace.map((e) => (e as { type: string }).type)).toContain("done");
  });

  it("refuses empty and oversized messages and /flow without a chain", async () => {
    await expect(h.team.postMessage(alice, group.id, "   ")).rejects.toMatchObject({ code: "invalid" });
    await expect(h.team.postMessage(alice, group.id, "x".repeat(33 * 1024))).rejects.toMatchObject({
      code: "invalid",
    });
    await expect(h.team.postMessage(alice, group.id, "/flow do it")).rejects.toMatchObject({
      code: "invalid",
      hint: expect.stringContaining("/flow"),
    });
    expect(await h.team.listMessages(alice, group.id)).toEqual([]);
  });
});

describe("concurrent runs in one channel", () => {
  it("streams two agents at once; both answers are stored", async () => {
    // Each reply waits until both requests are in flight, so the runs must overlap.
    let arrived = 0;
    let bothArrived!: () => void;
    const overlap = new Promise<void>((resolve) => {
      bothArrived = resolve;
    });
    const gated = (text: string) => async () => {
      arrived += 1;
      if (arrived === 2) bothArrived();
      await overlap;
      return { text };
    };
    scripts.add("coder", gated("coder streams a fairly long answer, token by token"));
    scripts.add("writer", gated("writer streams another long answer, word by word"));

    const { runs } = await h.team.postMessage(alice, group.id, "@coder @writer both of you, go");
    expect(runs).toHaveLength(2);
    const finals = await Promise.all(runs.map((r) => h.finished(r.id)));
    expect(finals.map((r) => r.status)).toEqual(["done", "done"]);

    // Both were running before either finished.
    const firstDone = h.events.findIndex((e) => e.type === "run" && e.run.status === "done");
    for (const run of runs) {
      const runningAt = h.events.findIndex(
        (e) => e.type === "run" && e.run.id === run.id && e.run.status === "running",
      );
      expect(runningAt).toBeLessThan(firstDone);
    }
    // Every delta belongs to a run, and each run's deltas add up to its stored answer.
    const deltas = (runId: string) => h.streamedText(runId);
    const messages = await h.team.listMessages(alice, group.id);
    for (const run of runs) {
      const stored = messages.find((m) => m.runId === run.id);
      expect(stored?.author.id).toBe(run.agentId);
      expect(deltas(run.id)).toBe(stored?.text);
    }
  });

  it("cancels one run while the other completes", async () => {
    let coderStarted!: () => void;
    const coderInFlight = new Promise<void>((resolve) => {
      coderStarted = resolve;
    });
    scripts.add("coder", async () => {
      coderStarted();
      return { delayMs: 60_000, text: "too late" };
    });
    let releaseWriter!: () => void;
    const writerGate = new Promise<void>((resolve) => {
      releaseWriter = resolve;
    });
    scripts.add("writer", async () => {
      await writerGate;
      return { text: "writer finished" };
    });

    const { runs } = await h.team.postMessage(alice, group.id, "@coder @writer go");
    const coderRun = runs.find((r) => r.agentId === "coder")!;
    const writerRun = runs.find((r) => r.agentId === "writer")!;
    await coderInFlight;
    const cancelled = await h.team.cancelRun(bob, coderRun.id);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.error).toBe("Cancelled by bob.");
    releaseWriter();
    expect((await h.finished(writerRun.id)).status).toBe("done");

    const messages = await h.team.listMessages(alice, group.id);
    // The stopped answer is kept, right after the message it answered, ending with the stop.
    expect(messages.map((m) => m.text)).toEqual(["@coder @writer go", "", "writer finished"]);
    expect(messages[1]).toMatchObject({
      runId: coderRun.id,
      replyTo: messages[0]?.id,
      parts: [{ type: "stopped", reason: "Cancelled by bob." }],
    });
    expect(await h.team.getRun(alice, coderRun.id)).toMatchObject({ status: "cancelled" });
    // Cancelling a finished run changes nothing.
    expect(await h.team.cancelRun(alice, writerRun.id)).toMatchObject({ status: "done" });
  });

  it("queues a second message to a busy agent instead of interleaving its session", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    scripts.add("coder", async () => {
      await gate;
      return { text: "first answer" };
    });
    const first = await h.team.postMessage(alice, group.id, "@coder one");
    const second = await h.team.postMessage(alice, group.id, "@coder two");
    await h.waitFor((e) => e.type === "run" && e.run.id === first.runs[0]!.id && e.run.status === "running");
    expect(h.statuses(second.runs[0]!.id)).toEqual(["queued"]);
    release();
    await h.finished(second.runs[0]!.id);
    const coder = server.requests.filter((r: RecordedRequest) => agentOf(r) === "coder");
    expect(lastUserText(coder[1])).toBe("[alice] @coder two");
  });

  it("ends a run with an error event when the model fails", async () => {
    scripts.add("coder", { error: { status: 400 } });
    const { runs } = await h.team.postMessage(alice, group.id, "@coder break");
    const run = await h.finished(runs[0]!.id);
    expect(run.status).toBe("error");
    expect(run.error).toBeTruthy();
    // The failed answer is stored with its error, so the chat shows why there is no reply.
    const messages = await h.team.listMessages(alice, group.id);
    expect(messages).toHaveLength(2);
    expect(messages[1]).toMatchObject({ author: { type: "agent", id: "coder" }, runId: run.id, text: "" });
    expect(messages[1]?.parts).toEqual([expect.objectContaining({ type: "error", message: run.error })]);
  });
});
