/**
 * Streams resume: a socket that reconnects with the last agent event seq it saw of each live run
 * (`subscribe` with `runs`) gets the events it missed once, in order, then the live ones; what the
 * instance's run log no longer holds is reported as a gap. Proven on the log itself, on the hub over
 * an in-memory source (races with live events, rights, gaps), and on a real server streaming a slow
 * answer from the fake LLM, with raw sockets and with the web UI's client.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RunEventLog } from "../../src/server/ws/run-event-log.js";
import type { ChannelRecord, PostResult, RunStatus, TeamEvent, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, startServer, withUsers } from "./helpers.js";
import { expectJson, flush, follow, openSocket, startTeamServer } from "./team-helpers.js";
import { connect, FakeTeam, type Frame, type TestClient } from "./ws-helpers.js";
import {
  agentFrames,
  LONG_ANSWER,
  lastSeqOf,
  oneTo,
  runEnded,
  textOf,
  until,
  webClient,
} from "./ws-resume-helpers.js";

const agent = (channelId: string, runId: string, seq: number): TeamEvent => ({
  type: "agent",
  channelId,
  runId,
  seq,
  event: { type: "text_delta", runId, text: `t${seq} ` },
});

const lifecycle = (channelId: string, runId: string, status: RunStatus): TeamEvent => ({
  type: "run",
  channelId,
  run: { id: runId, channelId, agentId: "assistant", triggerMessageId: 1, status, depth: 0, startedAt: 1 },
});

/** What a replay holds, short: agent events as their seq, lifecycle events as their status. */
const shape = (events: readonly TeamEvent[]) =>
  events.map((e) => (e.type === "agent" ? e.seq : e.type === "run" ? e.run.status : e.type));

const logs: RunEventLog[] = [];
afterEach(() => {
  for (const log of logs.splice(0)) log.close();
});

function newLog(options: ConstructorParameters<typeof RunEventLog>[0] = {}): RunEventLog {
  const log = new RunEventLog(options);
  logs.push(log);
  return log;
}

describe("the run event log", () => {
  it("replays a run's events after the seq asked from, in order, its latest lifecycle event where it came", () => {
    const log = newLog();
    log.record(lifecycle("c", "r", "queued"));
    log.record(lifecycle("c", "r", "running"));
    for (let seq = 1; seq <= 4; seq++) log.record(agent("c", "r", seq));
    log.record(lifecycle("c", "r", "waiting"));
    expect(shape(log.replay("c", "r", 0)?.events ?? [])).toEqual([1, 2, 3, 4, "waiting"]);
    expect(shape(log.replay("c", "r", 2)?.events ?? [])).toEqual([3, 4, "waiting"]);
    // Resumed after the approval: the numbering goes on, the lifecycle event sits before what followed it.
    log.record(lifecycle("c", "r", "running"));
    for (let seq = 5; seq <= 6; seq++) log.record(agent("c", "r", seq));
    expect(shape(log.replay("c", "r", 3)?.events ?? [])).toEqual([4, "running", 5, 6]);
    expect(shape(log.replay("c", "r", 5)?.events ?? [])).toEqual([6]);
    expect(log.replay("c", "r", 6)).toEqual({ events: [] });
    // A client ahead of the log (a relayed event not here yet) gets nothing, and no gap.
    expect(log.replay("c", "r", 9)).toEqual({ events: [] });
    // Only in the run's own channel.
    expect(log.replay("other", "r", 0)).toBeUndefined();
    expect(log.replay("c", "unknown", 0)).toBeUndefined();
  });

  it("keeps the latest events of a run and says where the kept ones start", () => {
    const log = newLog({ maxEventsPerRun: 3 });
    log.record(lifecycle("c", "r", "queued"));
    for (let seq = 1; seq <= 6; seq++) log.record(agent("c", "r", seq));
    expect(log.stats().events).toBe(3);
    const replay = log.replay("c", "r", 1);
    expect(replay?.gap).toEqual({ resumesAt: 4 });
    expect(shape(replay?.events ?? [])).toEqual([4, 5, 6]);
    expect(log.replay("c", "r", 3)?.gap).toBeUndefined();
  });

  it("starts a run heard of midway from its first event, and restarts after a hole", () => {
    const log = newLog();
    for (let seq = 10; seq <= 12; seq++) log.record(agent("c", "r", seq));
    expect(log.replay("c", "r", 5)?.gap).toEqual({ resumesAt: 10 });
    expect(log.replay("c", "r", 9)?.gap).toBeUndefined();
    expect(shape(log.replay("c", "r", 9)?.events ?? [])).toEqual([10, 11, 12]);
    log.record(agent("c", "r", 15));
    expect(log.replay("c", "r", 12)?.gap).toEqual({ resumesAt: 15 });
    expect(shape(log.replay("c", "r", 12)?.events ?? [])).toEqual([15]);
    // Known only by a lifecycle event after its start: its numbering is unknown here.
    log.record(lifecycle("c", "q", "running"));
    expect(log.replay("c", "q", 4)).toEqual({ events: [lifecycle("c", "q", "running")], gap: {} });
  });

  it("lets a run numbered again from an earlier point replace what followed", () => {
    const log = newLog();
    log.record(lifecycle("c", "r", "queued"));
    for (let seq = 1; seq <= 5; seq++) log.record(agent("c", "r", seq));
    const again = {
      ...agent("c", "r", 3),
      event: { type: "text_delta" as const, runId: "r", text: "again" },
    };
    log.record(again);
    expect(log.stats().events).toBe(3);
    expect(log.replay("c", "r", 2)?.events).toEqual([again]);
  });

  it("drops a run's log a while after it ended or began to wait, and a silent one later", () => {
    let now = 1000;
    const log = newLog({ keepEndedMs: 60_000, keepWaitingMs: 30_000, keepIdleMs: 600_000, now: () => now });
    for (const runId of ["done", "waiting", "resumed", "silent"]) {
      log.record(lifecycle("c", runId, "queued"));
      log.record(agent("c", runId, 1));
    }
    log.record(lifecycle("c", "done", "done"));
    log.record(lifecycle("c", "waiting", "waiting"));
    log.record(lifecycle("c", "resumed", "waiting"));
    now += 20_000;
    log.record(lifecycle("c", "resumed", "running"));
    now += 15_000;
    log.sweep();
    expect(log.replay("c", "waiting", 0)).toBeUndefined();
    expect(log.replay("c", "done", 0)).toBeDefined();
    now += 30_000;
    log.sweep();
    expect(log.replay("c", "done", 0)).toBeUndefined();
    expect(shape(log.replay("c", "resumed", 0)?.events ?? [])).toEqual([1, "running"]);
    now += 600_000;
    log.record(agent("c", "resumed", 2));
    log.sweep();
    expect(log.replay("c", "silent", 0)).toBeUndefined();
    expect(log.replay("c", "resumed", 0)).toBeDefined();
    expect(log.stats()).toMatchObject({ runs: 1, events: 2 });
  });

  it("over its global bounds, drops ended runs' events first, then the oldest half of the biggest log", () => {
    const log = newLog({ maxEvents: 10 });
    for (const runId of ["a", "b", "ended"]) log.record(lifecycle("c", runId, "queued"));
    for (let seq = 1; seq <= 3; seq++) log.record(agent("c", "ended", seq));
    log.record(lifecycle("c", "ended", "done"));
    for (let seq = 1; seq <= 6; seq++) log.record(agent("c", "a", seq));
    for (let seq = 1; seq <= 2; seq++) log.record(agent("c", "b", seq));
    expect(log.stats().events).toBe(8);
    expect(log.replay("c", "ended", 0)?.gap).toEqual({ resumesAt: 4 });
    for (let seq = 7; seq <= 9; seq++) log.record(agent("c", "a", seq));
    // 11 > 10: the biggest log (a, 9 events) keeps its newest 4.
    expect(log.stats().events).toBe(6);
    expect(log.replay("c", "a", 0)?.gap).toEqual({ resumesAt: 6 });
    expect(shape(log.replay("c", "b", 0)?.events ?? [])).toEqual(["queued", 1, 2]);
    const bytes = newLog({ maxBytes: 2000 });
    bytes.record(lifecycle("c", "big", "queued"));
    for (let seq = 1; seq <= 50; seq++) bytes.record(agent("c", "big", seq));
    expect(bytes.stats().bytes).toBeLessThanOrEqual(2000);
    expect(bytes.replay("c", "big", 49)?.events).toHaveLength(1);
  });

  it("listens to every channel as an internal listener", () => {
    const team = new FakeTeam();
    team.addChannel("private", ["someone"]);
    const log = newLog().listen(team);
    team.emit(agent("private", "r", 1));
    expect(log.stats().events).toBe(1);
    log.close();
    expect(team.listenerCount).toBe(0);
  });
});

describe("the hub resuming runs (in-memory source)", () => {
  async function setUp(withLog = true, logOptions: ConstructorParameters<typeof RunEventLog>[0] = {}) {
    const team = new FakeTeam();
    // Listening before the hub's sockets, as the server wires it.
    const runLog = withLog ? newLog(logOptions).listen(team) : undefined;
    const started = await startServer({ events: team, ...(runLog ? { ws: { runs: runLog } } : {}) });
    const { owner, users } = await withUsers(started.url, ["member"]);
    const member = users.member!;
    team.addChannel("general", [owner.userId, member.userId]);
    team.addChannel("secret", [owner.userId]);
    const client = connect(started.url, { cookie: member.cookie });
    await client.next((f) => f.type === "ready");
    return { ...started, team, member, client };
  }

  /** The frames after the subscribe's backlog, short. */
  const sinceBacklog = (frames: readonly Frame[]) =>
    frames
      .slice(frames.findIndex((f) => f.type === "backlog") + 1)
      .filter((f) => f.type !== "pong")
      .map((f) =>
        f.type === "agent"
          ? `${f.runId}:${f.seq}`
          : f.type === "run"
            ? `run:${(f.run as { status: string }).status}`
            : f.type === "run_gap"
              ? `gap:${f.runId}:${f.after}:${f.resumesAt ?? "-"}`
              : f.type,
      );

  it("sends the missed events after the backlog, and live ones that raced with it exactly once", async () => {
    const { team, client } = await setUp();
    team.emit(lifecycle("general", "r", "queued"));
    team.emit(lifecycle("general", "r", "running"));
    for (let seq = 1; seq <= 5; seq++) team.emit(agent("general", "r", seq));
    team.post("general", "before");
    let release = () => {};
    team.gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    client.send({ type: "subscribe", channelId: "general", since: 0, runs: { r: 2 } });
    await until(() => team.listCalls.length === 1);
    // While the backlog loads: more events, the run's end, and another run starting.
    for (let seq = 6; seq <= 7; seq++) team.emit(agent("general", "r", seq));
    team.emit(lifecycle("general", "r", "done"));
    team.emit(agent("general", "other", 1));
    team.post("general", "during");
    team.gate = undefined;
    release();
    await client.next((f) => f.type === "backlog");
    team.emit(agent("general", "other", 2));
    await flush(client);
    // The message posted meanwhile is in the backlog, not sent again.
    expect(sinceBacklog(client.frames)).toEqual([
      "r:3",
      "r:4",
      "r:5",
      "r:6",
      "r:7",
      "run:done",
      "other:1",
      "other:2",
    ]);
    const backlog = client.frames.find((f) => f.type === "backlog");
    const messages = (backlog?.messages ?? []) as Array<{ text: string }>;
    expect(messages.map((m) => m.text)).toEqual(["before", "during"]);
    client.ws.close();
  });

  it("reports what the log no longer holds, then sends what it holds", async () => {
    const { team, client } = await setUp(true, { maxEventsPerRun: 3 });
    team.emit(lifecycle("general", "r", "queued"));
    for (let seq = 1; seq <= 6; seq++) team.emit(agent("general", "r", seq));
    client.send({ type: "subscribe", channelId: "general", runs: { r: 1, gone: 7 } });
    await client.next((f) => f.type === "backlog");
    team.emit(agent("general", "r", 7));
    await flush(client);
    expect(sinceBacklog(client.frames)).toEqual(["gap:r:1:4", "r:4", "r:5", "r:6", "gap:gone:7:-", "r:7"]);
    client.ws.close();
  });

  it("resumes only runs of the channel subscribed to, which the caller may see", async () => {
    const { team, client } = await setUp();
    team.emit(lifecycle("secret", "s", "queued"));
    team.emit(agent("secret", "s", 1));
    client.send({ type: "subscribe", channelId: "general", runs: { s: 0 } });
    await client.next((f) => f.type === "backlog");
    team.emit(agent("secret", "s", 2));
    await flush(client);
    expect(sinceBacklog(client.frames)).toEqual(["gap:s:0:-"]);
    client.send({ type: "subscribe", channelId: "secret", runs: { s: 0 } });
    expect(await client.next((f) => f.type === "error")).toMatchObject({
      channelId: "secret",
      code: "forbidden",
    });
    expect(client.frames.some((f) => f.type === "agent")).toBe(false);
    client.ws.close();
  });

  it("does not send again the events a client ahead of this instance already has", async () => {
    // No log at all (as with a source that is not the team): every run is a gap, and repeats are dropped.
    const { team, client } = await setUp(false);
    for (let seq = 1; seq <= 3; seq++) team.emit(agent("general", "r", seq));
    client.send({ type: "subscribe", channelId: "general", runs: { r: 5 } });
    await client.next((f) => f.type === "backlog");
    for (let seq = 4; seq <= 7; seq++) team.emit(agent("general", "r", seq));
    await flush(client);
    expect(sinceBacklog(client.frames)).toEqual(["gap:r:5:-", "r:6", "r:7"]);
    client.ws.close();
  });

  it("refuses a subscribe naming too many runs", async () => {
    const { client } = await setUp();
    const runs = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`r${i}`, 1]));
    client.send({ type: "subscribe", channelId: "general", runs });
    expect(await client.next((f) => f.type === "error")).toMatchObject({
      message: expect.stringContaining("at most 100 runs"),
    });
    client.ws.close();
  });
});

describe("a real server streaming a slow answer", () => {
  let llm: FakeLlmServer;

  beforeAll(async () => {
    llm = await startFakeLlmServer({ defaultTurn: { text: LONG_ANSWER }, chunkSize: 4, chunkDelayMs: 15 });
  });
  afterAll(async () => {
    await llm.close();
  });

  /** The run answering a post (started at once, or after the burst window of the `collect` mode). */
  async function runOf(watcher: TestClient, posted: PostResult): Promise<string> {
    const started = posted.runs[0]?.id;
    if (started) return started;
    const frame = await watcher.next(
      (f) => f.type === "run" && (f.run as TeamRun).triggerMessageId === posted.message.id,
    );
    return (frame.run as TeamRun).id;
  }

  async function world() {
    const s = await startTeamServer({ llmUrl: llm.url });
    const { owner } = await withUsers(s.url);
    const channel = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Resume", agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
    // Follows the whole run without interruption: the reference.
    const watcher = await openSocket(s, owner);
    await follow(watcher, channel.id);
    const post = async () =>
      expectJson<PostResult>(
        await call(s.url, `/api/channels/${channel.id}/messages`, {
          session: owner,
          body: { text: "@assistant tell me a long story" },
        }),
        201,
      );
    return { s, owner, channel, watcher, post };
  }

  it("a socket reconnecting with its last seq gets exactly the missed events in order, then the live rest", async () => {
    const { s, owner, channel, watcher, post } = await world();
    const first = await openSocket(s, owner);
    await follow(first, channel.id);
    const posted = await post();
    const runId = await runOf(watcher, posted);
    await until(() => agentFrames(first.frames, runId).length >= 10, 10_000, "the first events");
    first.ws.terminate();
    const seen = agentFrames(first.frames, runId);
    const last = seen.at(-1)!.seq;
    expect(seen.map((f) => f.seq)).toEqual(oneTo(last));
    // Away long enough to miss some, back before the answer ends.
    await until(() => lastSeqOf(watcher, runId) >= last + 5, 10_000, "events missed");
    expect(watcher.frames.some(runEnded(runId))).toBe(false);

    const second = await openSocket(s, owner);
    second.send({
      type: "subscribe",
      channelId: channel.id,
      since: posted.message.id,
      runs: { [runId]: last },
    });
    await second.next(runEnded(runId));
    await watcher.next(runEnded(runId));
    const all = agentFrames(watcher.frames, runId);
    expect(all.map((f) => f.seq)).toEqual(oneTo(all.length));
    const resumed = agentFrames(second.frames, runId);
    expect(resumed.map((f) => f.seq)).toEqual(oneTo(all.length).slice(last));
    expect(resumed).toEqual(all.slice(last));
    expect(textOf([...seen, ...resumed])).toBe(LONG_ANSWER);
    expect(second.frames.some((f) => f.type === "run_gap")).toBe(false);
    // The backlog came first; the run's end after its last event.
    const types = second.frames.map((f) => f.type);
    expect(types.indexOf("backlog")).toBeLessThan(types.indexOf("agent"));
    expect(second.frames.findIndex(runEnded(runId))).toBeGreaterThan(
      second.frames.lastIndexOf(resumed.at(-1) as unknown as Frame),
    );
    second.ws.close();
    watcher.ws.close();
  });

  it("the web UI's client resumes its runs on every reconnect by itself", async () => {
    const { s, owner, channel, watcher, post } = await world();
    const web = webClient([s.url], owner.cookie, channel.id);
    await until(() => web.frames.some((f) => f.type === "backlog"), 5000, "the backlog");
    const posted = await post();
    const runId = await runOf(watcher, posted);
    await until(() => agentFrames(web.frames, runId).length >= 8, 10_000, "the first events");
    web.drop();
    await until(() => web.frames.some(runEnded(runId)), 15_000, "the run's end");
    await watcher.next(runEnded(runId));
    const all = agentFrames(watcher.frames, runId);
    const got = agentFrames(web.frames, runId);
    expect(got.map((f) => f.seq)).toEqual(oneTo(all.length));
    expect(got).toEqual(all);
    const subscribes = web.sent.filter((f) => f.type === "subscribe");
    expect(subscribes).toHaveLength(2);
    const resumedFrom = ((subscribes[1]?.runs ?? {}) as Record<string, number>)[runId]!;
    expect(resumedFrom).toBeGreaterThanOrEqual(8);
    // It was away while the answer went on.
    expect(resumedFrom).toBeLessThan(all.length - 3);
    expect(subscribes[1]).toEqual({
      type: "subscribe",
      channelId: channel.id,
      since: expect.any(Number),
      runs: { [runId]: resumedFrom },
    });
    web.close();
    watcher.ws.close();
  });
});
