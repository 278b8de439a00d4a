/**
 * The team over HTTP and WebSocket end to end: agents with personas, a group, @mentions streamed live
 * with tool calls, two agents answering at once, cancelling a run, and a chain with an approval pause.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AgentEvent } from "../../src/agent/events.js";
import type {
  AgentRecord,
  ChannelMessage,
  ChannelRecord,
  FlowRecord,
  PostResult,
  SoulFile,
  TeamRun,
} from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, agentOf, lastToolResult, systemOf } from "../team/harness.js";
import { call, type Session, withUsers } from "./helpers.js";
import {
  expectJson,
  flush,
  follow,
  openSocket,
  runFrame,
  startTeamServer,
  type TeamServer,
} from "./team-helpers.js";
import type { Frame, TestClient } from "./ws-helpers.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});
beforeEach(() => {
  llm.reset();
  scripts.clear();
});

async function createGroup(
  s: TeamServer,
  session: Session,
  input: { name: string; agentIds: string[]; userIds?: string[]; leaderAgentId?: string },
): Promise<ChannelRecord> {
  const res = await call(s.url, "/api/channels", {
    session,
    body: { kind: "group", userIds: [], ...input },
  });
  return expectJson<ChannelRecord>(res, 201);
}

async function post(s: TeamServer, session: Session, channelId: string, text: string): Promise<PostResult> {
  const res = await call(s.url, `/api/channels/${channelId}/messages`, { session, body: { text } });
  return expectJson<PostResult>(res, 201);
}

/** The client's frames of one channel as short labels, runs of deltas folded into one. */
function timeline(client: TestClient, channelId: string): string[] {
  const labels: string[] = [];
  for (const f of client.frames) {
    if (f.channelId !== channelId || f.type === "backlog") continue;
    let label: string = f.type;
    if (f.type === "message") label = `message:${(f.message as ChannelMessage).author.id}`;
    if (f.type === "run") label = `run:${(f.run as TeamRun).status}`;
    if (f.type === "agent") {
      const event = f.event as AgentEvent;
      if (event.type === "text_delta") label = "delta";
      else if (event.type === "tool_call" || event.type === "tool_result")
        label = `${event.type}:${event.name}`;
      else continue; // run_start, turn_start, usage, done...: checked on their own
    }
    if (label === "delta" && labels.at(-1) === "delta") continue;
    labels.push(label);
  }
  return labels;
}

/** The agent events of a run the client received, in order. */
const agentEventsOf = (client: TestClient, runId: string): AgentEvent[] =>
  client.frames.filter((f) => f.type === "agent" && f.runId === runId).map((f) => f.event as AgentEvent);

const deltasOf = (client: TestClient, runId: string) =>
  agentEventsOf(client, runId)
    .map((e) => (e.type === "text_delta" ? e.text : ""))
    .join("");

describe("team over HTTP and WebSocket", () => {
  it("creates an agent with a SOUL.md and a group, and streams an @mention with a tool call", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member!;

    const agent = await expectJson<AgentRecord>(
      await call(s.url, "/api/agents", {
        session: owner,
        body: { id: "mathbot", name: "Math Bot", emoji: "🧮", toolsAllow: ["calculator"], soul: "" },
      }),
      201,
    );
    expect(agent).toMatchObject({ id: "mathbot", toolsAllow: ["calculator"], soulStatus: "empty" });
    const soul = await expectJson<SoulFile>(
      await call(s.url, "/api/agents/mathbot/soul", {
        session: owner,
        method: "PUT",
        body: { content: "# Math Bot\n\nAlways show your working." },
      }),
      200,
    );
    expect(soul.status).toBe("ok");
    const listed = await expectJson<AgentRecord[]>(
      await call(s.url, "/api/agents", { session: member }),
      200,
    );
    expect(listed.find((a) => a.id === "mathbot")?.soulStatus).toBe("ok");

    const group = await createGroup(s, owner, {
      name: "Numbers",
      agentIds: ["mathbot", "writer"],
      userIds: [member.userId],
    });
    expect(group.members).toEqual(
      expect.arrayContaining([
        { type: "user", id: owner.userId },
        { type: "user", id: member.userId },
        { type: "agent", id: "mathbot" },
      ]),
    );

    const socket = await openSocket(s, member);
    await follow(socket, group.id);
    scripts.add(
      "mathbot",
      { text: "Let me work it out. ", toolCalls: [{ name: "calculator", args: { expression: "6*7" } }] },
      { text: "The calculator says 6 × 7 = 42." },
    );
    const posted = await post(s, member, group.id, "@mathbot what is 6*7?");
    expect(posted.message).toMatchObject({
      author: { type: "user", id: member.userId },
      mentions: ["mathbot"],
    });
    const runId = posted.runs[0]!.id;
    expect(posted.runs.map((r) => r.agentId)).toEqual(["mathbot"]);

    await socket.next(runFrame(runId, "done"));
    expect(timeline(socket, group.id)).toEqual([
      `message:${member.userId}`,
      "run:queued",
      "run:running",
      "delta",
      "tool_call:calculator",
      "tool_result:calculator",
      "delta",
      "message:mathbot",
      "run:done",
    ]);
    const events = agentEventsOf(socket, runId);
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ runId, ok: true, output: "42" });
    // One vocabulary: the agent's own events reach the socket, usage and the end of the run too.
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining(["run_start", "turn_start", "usage", "done"]),
    );
    expect(events.some((e) => e.type === "messages")).toBe(false);

    // The answer is stored with its run, and the model saw the persona and the tool result.
    const messages = await expectJson<ChannelMessage[]>(
      await call(s.url, `/api/channels/${group.id}/messages`, { session: member }),
      200,
    );
    expect(messages.map((m) => [m.author.id, m.runId])).toEqual([
      [member.userId, undefined],
      ["mathbot", runId],
    ]);
    expect(messages[1]?.text).toContain("6 × 7 = 42.");
    expect(deltasOf(socket, runId)).toContain("6 × 7 = 42.");
    expect(llm.requests.map(agentOf)).toEqual(["mathbot", "mathbot"]);
    expect(systemOf(llm.requests[0])).toContain("Always show your working.");
    expect(lastToolResult(llm.requests[1])).toBe("42");

    // Paging, the run and its trace.
    const newest = await expectJson<ChannelMessage[]>(
      await call(s.url, `/api/channels/${group.id}/messages?limit=1`, { session: member }),
      200,
    );
    expect(newest.map((m) => m.author.id)).toEqual(["mathbot"]);
    const older = await expectJson<ChannelMessage[]>(
      await call(s.url, `/api/channels/${group.id}/messages?before=${newest[0]!.id}`, { session: member }),
      200,
    );
    expect(older.map((m) => m.author.id)).toEqual([member.userId]);
    expect(
      await expectJson<TeamRun>(await call(s.url, `/api/runs/${runId}`, { session: member }), 200),
    ).toMatchObject({ id: runId, status: "done", agentId: "mathbot" });
    const trace = await expectJson<Array<{ type: string }>>(
      await call(s.url, `/api/runs/${runId}/trace`, { session: member }),
      200,
    );
    expect(trace.map((e) => e.type)).toEqual(expect.arrayContaining(["tool_result", "done"]));

    // Reading marks the channel read; search finds the answer.
    const unreadBefore = await expectJson<Array<{ id: string; unread: number }>>(
      await call(s.url, "/api/channels", { session: member }),
      200,
    );
    expect(unreadBefore.find((c) => c.id === group.id)?.unread).toBe(1);
    const read = await call(s.url, `/api/channels/${group.id}/read`, {
      session: member,
      body: { messageId: newest[0]!.id },
    });
    expect(read.status).toBe(204);
    const unreadAfter = await expectJson<Array<{ id: string; unread: number }>>(
      await call(s.url, "/api/channels", { session: member }),
      200,
    );
    expect(unreadAfter.find((c) => c.id === group.id)?.unread).toBe(0);
    const found = await expectJson<ChannelMessage[]>(
      await call(s.url, "/api/search?q=calculator", { session: member }),
      200,
    );
    expect(found.map((m) => m.runId)).toEqual([runId]);
    socket.ws.close();
  });

  it("streams two agents answering at once in one channel; both answers are stored", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const group = await createGroup(s, owner, { name: "Pair", agentIds: ["coder", "writer"] });
    // Each reply waits until both requests are in flight, so the two runs must overlap.
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

    const socket = await openSocket(s, owner);
    await follow(socket, group.id);
    const { runs } = await post(s, owner, group.id, "@all both of you, go");
    expect(runs.map((r) => r.agentId).sort()).toEqual(["coder", "writer"]);
    await Promise.all(runs.map((r) => socket.next(runFrame(r.id, "done"))));

    const messages = await expectJson<ChannelMessage[]>(
      await call(s.url, `/api/channels/${group.id}/messages`, { session: owner }),
      200,
    );
    for (const run of runs) {
      const stored = messages.find((m) => m.runId === run.id);
      expect(stored?.author.id).toBe(run.agentId);
      expect(deltasOf(socket, run.id)).toBe(stored?.text);
      // Each run's frames arrive in lifecycle order.
      const statuses = socket.frames
        .filter((f) => f.type === "run" && (f.run as TeamRun).id === run.id)
        .map((f) => (f.run as TeamRun).status);
      expect(statuses).toEqual(["queued", "running", "done"]);
    }
    // Both were running before either finished.
    const firstDone = socket.frames.findIndex(
      (f) => f.type === "run" && (f.run as TeamRun).status === "done",
    );
    for (const run of runs) {
      expect(socket.frames.findIndex(runFrame(run.id, "running"))).toBeLessThan(firstDone);
    }
    socket.ws.close();
  });

  it("cancels a streaming run over HTTP", async () => {
    const slow = await startFakeLlmServer({
      chunkDelayMs: 20,
      chunkSize: 4,
      defaultTurn: { text: "a very long story that goes on and on. ".repeat(20) },
    });
    try {
      const s = await startTeamServer({ llmUrl: slow.url });
      const { owner, users } = await withUsers(s.url, ["member"]);
      const member = users.member!;
      const group = await createGroup(s, owner, {
        name: "Stories",
        agentIds: ["writer"],
        userIds: [member.userId],
      });
      const socket = await openSocket(s, owner);
      await follow(socket, group.id);
      const { runs } = await post(s, owner, group.id, "@writer tell me a story");
      const runId = runs[0]!.id;
      await socket.next(
        (f) => f.type === "agent" && f.runId === runId && (f.event as AgentEvent).type === "text_delta",
      );

      const cancelled = await expectJson<TeamRun>(
        await call(s.url, `/api/runs/${runId}/cancel`, { session: member, method: "POST" }),
        200,
      );
      expect(cancelled.status).toBe("cancelled");
      await socket.next(runFrame(runId, "cancelled"));
      const messages = await expectJson<ChannelMessage[]>(
        await call(s.url, `/api/channels/${group.id}/messages`, { session: owner }),
        200,
      );
      // What it had said is kept, ended by the stop.
      expect(messages.map((m) => m.author.id)).toEqual([owner.userId, "writer"]);
      expect(messages[1]?.parts.at(-1)).toMatchObject({ type: "stopped" });
      expect(messages[1]?.parts[0]).toMatchObject({ type: "text" });
      socket.ws.close();
    } finally {
      await slow.close();
    }
  });

  it("runs a two-step chain that pauses for approval, approved over HTTP", async () => {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member!;
    const group = await createGroup(s, member, { name: "Newsroom", agentIds: ["writer", "editor"] });
    const chained = await expectJson<ChannelRecord>(
      await call(s.url, `/api/channels/${group.id}/chain`, {
        session: member,
        method: "PUT",
        body: {
          steps: [
            { agentId: "writer", requiresApproval: true, instruction: "Draft a short post." },
            { agentId: "editor", requiresApproval: false },
          ],
        },
      }),
      200,
    );
    expect(chained.chain.map((step) => step.agentId)).toEqual(["writer", "editor"]);
    scripts.add("writer", { text: "draft v1" });
    scripts.add("editor", { text: "final post" });

    const socket = await openSocket(s, member);
    await follow(socket, group.id);
    const posted = await post(s, member, group.id, "/flow launch news");
    const flowId = posted.flow!.id;
    const flowFrame = (status: string) => (f: Frame) =>
      f.type === "flow" && (f.flow as FlowRecord).id === flowId && (f.flow as FlowRecord).status === status;
    const paused = (await socket.next(flowFrame("paused"))).flow as FlowRecord;
    expect(paused.steps.map((step) => step.status)).toEqual(["completed", "waiting"]);
    expect(paused.steps[0]?.output).toBe("draft v1");
    expect(llm.requests.map(agentOf)).toEqual(["writer"]);

    const approved = await expectJson<FlowRecord>(
      await call(s.url, `/api/flows/${flowId}/actions`, {
        session: member,
        body: { action: "approve", stepIndex: 0 },
      }),
      200,
    );
    expect(approved).toMatchObject({ status: "running", currentStep: 1 });
    await socket.next(flowFrame("done"));
    const done = await expectJson<FlowRecord>(
      await call(s.url, `/api/flows/${flowId}`, { session: owner }),
      200,
    );
    expect(done.steps.map((step) => [step.status, step.output])).toEqual([
      ["completed", "draft v1"],
      ["completed", "final post"],
    ]);
    socket.ws.close();
  });

  it("resolves agents' models with the provider key and default model saved in settings", async () => {
    const s = await startTeamServer();
    const { owner } = await withUsers(s.url);
    const saved = await call(s.url, "/api/settings", {
      session: owner,
      method: "PUT",
      body: {
        defaultModel: "openai:gpt-from-settings",
        providers: [{ name: "openai", baseUrl: `${llm.url}/v1`, apiKey: "sk-saved-in-settings-9876" }],
      },
    });
    expect(saved.status).toBe(200);
    const group = await createGroup(s, owner, { name: "Keys", agentIds: ["assistant"] });
    const socket = await openSocket(s, owner);
    await follow(socket, group.id);
    const { runs } = await post(s, owner, group.id, "@assistant hello");
    await socket.next(runFrame(runs[0]!.id, "done"));
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.headers.authorization).toBe("Bearer sk-saved-in-settings-9876");
    expect(llm.requests[0]?.model).toBe("gpt-from-settings");
    await flush(socket);
    socket.ws.close();
  });
});
