/**
 * Chat answers are not held behind a small number of slots while they wait for their model: they start
 * at once unless the process is busy or short of memory (or at the backstop of live answers), and
 * queued ones start in order once the load falls; the queue's length and wait are reported.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Database } from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import type { LoadProbe, LoadReading } from "../../src/team/run-admission.js";
import { type RunBody, RunManager, type RunRequest } from "../../src/team/run-manager.js";
import { createSqliteTeamStore, type RunJob } from "../../src/team/team-store.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { alice, TeamHarness } from "./harness.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => server.close());

it("starts 100 answers whose model takes 3 s at once with the default config", async () => {
  const h = new TeamHarness(server);
  try {
    server.reset();
    for (let i = 0; i < 100; i++) server.enqueue({ text: `answer ${i}`, delayMs: 3000 });
    const posted: string[] = [];
    for (let i = 0; i < 100; i++) {
      const chat = await h.team.createChannel(alice, {
        kind: "direct",
        name: `chat ${i}`,
        leaderAgentId: "writer",
        agentIds: ["writer"],
        userIds: [],
      });
      posted.push((await h.team.postMessage(alice, chat.id, `question ${i}`)).runs[0]!.id);
    }
    const ended = await Promise.all(posted.map((id) => h.finished(id)));
    expect(ended.map((r) => r.status)).toEqual(posted.map(() => "done"));
    // Every answer's turn began before the first one ended: none waited for another's model.
    const at = (runId: string, type: string) =>
      h.events.findIndex((e) => e.type === "agent" && e.runId === runId && e.event.type === type);
    const firstDone = Math.min(...posted.map((id) => at(id, "done")));
    const lastStart = Math.max(...posted.map((id) => at(id, "run_start")));
    expect(firstDone).toBeGreaterThanOrEqual(0);
    expect(lastStart).toBeLessThan(firstDone);
  } finally {
    await h.close();
  }
});

let db: Database;
let manager: RunManager | undefined;
beforeEach(() => {
  db = openDatabase(join(mkdtempSync(join(tmpdir(), "dimsum-admission-")), "team.db"));
});
afterEach(async () => {
  await manager?.cancelAll("test over");
  manager = undefined;
  db.close();
});

function managerWith(options: { load?: LoadProbe; concurrency?: number } = {}): RunManager {
  const store = createSqliteTeamStore(db);
  manager = new RunManager({
    runs: store.runs,
    emit: () => {},
    now: Date.now,
    onError: (err) => {
      throw err;
    },
    ...options,
  });
  return manager;
}

function request(i: number): RunRequest {
  return {
    channelId: "c1",
    agentId: "writer",
    triggerMessageId: i,
    depth: 0,
    ref: { userId: "alice", sessionId: `s${i}` },
    requestedBy: "alice",
    lane: `lane ${i}`,
  };
}

/** A load the test sets. */
function settableLoad(initial: LoadReading): LoadProbe & { set(reading: LoadReading): void } {
  let reading = initial;
  return { read: () => reading, close: () => {}, set: (r) => (reading = r) };
}

/** Runs `submit` bodies; resolves each body's start order. */
function recorder() {
  const started: number[] = [];
  const body =
    (i: number, work: () => Promise<void> = async () => {}): RunBody =>
    async () => {
      started.push(i);
      await work();
      return {};
    };
  return { started, body };
}

it("holds new answers while the event loop is busy and starts them in order once it is not", async () => {
  const load = settableLoad({ loopDelayMs: 200, loopUtilization: 1, heapShare: 0.1 });
  const runs = managerWith({ load });
  const { started, body } = recorder();
  const job: RunJob = { kind: "answer" };
  const handles = await Promise.all([0, 1, 2].map((i) => runs.submit(request(i), job, body(i))));
  await new Promise((r) => setTimeout(r, 150));
  expect(started).toEqual([]);
  const held = runs.queueStats();
  expect(held).toMatchObject({ queued: 3, live: 0, pressure: "cpu" });
  expect(held.oldestWaitMs).toBeGreaterThan(0);

  load.set({ loopDelayMs: 2, loopUtilization: 0.3, heapShare: 0.1 });
  const ended = await Promise.all(handles.map((h) => h.finished));
  expect(ended.map((r) => r.status)).toEqual(["done", "done", "done"]);
  expect(started).toEqual([0, 1, 2]);
  const after = runs.queueStats();
  expect(after).toMatchObject({ queued: 0, live: 0, started: 3, startedAfterWaiting: 3 });
  expect(after.pressure).toBeUndefined();
  expect(after.waitP99Ms).toBeGreaterThan(0);
});

it("does not hold answers when the loop is late only because other processes hold the CPU", async () => {
  const load = settableLoad({ loopDelayMs: 300, loopUtilization: 0.2, heapShare: 0.1 });
  const runs = managerWith({ load });
  const { started, body } = recorder();
  const handle = await runs.submit(request(0), { kind: "answer" }, body(0));
  expect((await handle.finished).status).toBe("done");
  expect(started).toEqual([0]);
  expect(runs.queueStats()).toMatchObject({ startedAfterWaiting: 0 });
  expect(runs.queueStats().pressure).toBeUndefined();
});

it("holds new answers while the heap is over its share, and at the backstop of live answers", async () => {
  const load = settableLoad({ loopDelayMs: 0, loopUtilization: 0.1, heapShare: 0.95 });
  const runs = managerWith({ load, concurrency: 2 });
  const job: RunJob = { kind: "answer" };
  let release: () => void = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const { started, body } = recorder();
  const first = await runs.submit(
    request(0),
    job,
    body(0, () => gate),
  );
  await new Promise((r) => setTimeout(r, 100));
  expect(runs.queueStats()).toMatchObject({ pressure: "memory", queued: 1 });

  load.set({ loopDelayMs: 0, loopUtilization: 0.1, heapShare: 0.2 });
  const rest = await Promise.all(
    [1, 2].map((i) =>
      runs.submit(
        request(i),
        job,
        body(i, () => gate),
      ),
    ),
  );
  await new Promise((r) => setTimeout(r, 150));
  // Two live answers (waiting on their "model") fill the backstop of 2: the third waits.
  expect(started).toEqual([0, 1]);
  expect(runs.queueStats()).toMatchObject({ pressure: "live", live: 2, queued: 1 });
  release();
  await Promise.all([first, ...rest].map((h) => h.finished));
  expect(started).toEqual([0, 1, 2]);
});

it("a cancelled answer leaves the queue without starting", async () => {
  const load = settableLoad({ loopDelayMs: 500, loopUtilization: 1, heapShare: 0 });
  const runs = managerWith({ load });
  const { started, body } = recorder();
  const handle = await runs.submit(request(0), { kind: "answer" }, body(0));
  await new Promise((r) => setTimeout(r, 60));
  expect(runs.queueStats().queued).toBe(1);
  const cancelled = await runs.cancel(handle.run.id, "stopped by the test");
  expect(cancelled?.status).toBe("cancelled");
  expect(runs.queueStats()).toMatchObject({ queued: 0, live: 0 });
  expect(started).toEqual([]);
});

it("a CPU-heavy phase of one answer holds the next one until the loop is free again (real load)", async () => {
  const runs = managerWith();
  const order: string[] = [];
  const job: RunJob = { kind: "answer" };
  let halfway: () => void = () => {};
  const reached = new Promise<void>((r) => (halfway = r));
  // 12 blocks of 100 ms of CPU with only a turn of the loop between them.
  const heavy: RunBody = async () => {
    order.push("heavy start");
    for (let k = 0; k < 12; k++) {
      const until = performance.now() + 100;
      while (performance.now() < until) {}
      if (k === 6) halfway();
      await new Promise((r) => setImmediate(r));
    }
    order.push("heavy end");
    return {};
  };
  const light: RunBody = async () => {
    order.push("light start");
    return {};
  };
  const first = await runs.submit(request(0), job, heavy);
  await reached;
  const second = await runs.submit(request(1), job, light);
  await Promise.all([first.finished, second.finished]);
  expect(order).toEqual(["heavy start", "heavy end", "light start"]);
  expect(runs.queueStats().startedAfterWaiting).toBe(1);
});
