/**
 * The schedules repository contract, on SQLite and on PostgreSQL, and the multi-instance guarantee it
 * exists for: two schedulers polling one database fire each due time exactly once.
 */
import { expect, it } from "vitest";

import type { RunOutcome, TargetExecutor } from "../../src/schedules/run-target.js";
import {
  PostgresScheduleStore,
  RUNS_KEPT_PER_SCHEDULE,
  type ScheduleStore,
  SqliteScheduleStore,
} from "../../src/schedules/schedule-store.js";
import { Scheduler } from "../../src/schedules/scheduler.js";
import { firstRunAt } from "../../src/schedules/timing.js";
import type { Clock, ScheduleRecord, ScheduleRunRecord, ScheduleTiming } from "../../src/schedules/types.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { type Backend, describeBackends } from "./backends.js";

const T0 = Date.parse("2025-03-07T00:00:00Z");
const MIN = 60_000;
const HOUR = 60 * MIN;

function storeOf(backend: Backend): ScheduleStore {
  return backend.kind === "sqlite"
    ? new SqliteScheduleStore(backend.db)
    : new PostgresScheduleStore(backend.db);
}

/**
 * A second store on the same database, as another instance would have: on SQLite another connection
 * to the file, on PostgreSQL another repository over the pool (its own connections).
 */
function secondStore(backend: Backend, close: Array<() => void>): ScheduleStore {
  if (backend.kind === "postgres") return new PostgresScheduleStore(backend.db);
  const other: Database = openDatabase(backend.file);
  close.push(() => other.close());
  return new SqliteScheduleStore(other);
}

function schedule(id: string, extra: Partial<ScheduleRecord> = {}): ScheduleRecord {
  return {
    id,
    name: `name of ${id}`,
    ownerId: "alice",
    enabled: true,
    timing: { kind: "interval", seconds: 3600 },
    target: { type: "agent", agentId: "writer", prompt: "report", channelId: "c1" },
    missedPolicy: "skip",
    createdAt: T0,
    updatedAt: T0,
    ...extra,
  };
}

function run(id: string, scheduleId: string, extra: Partial<ScheduleRunRecord> = {}): ScheduleRunRecord {
  return { id, scheduleId, trigger: "schedule", startedAt: T0, status: "running", ...extra };
}

describeBackends("schedule store", (open) => {
  it("inserts, reads back every field, lists oldest first by owner, counts and deletes", async () => {
    const store = storeOf(await open());
    const full = schedule("s-full", {
      timing: { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" },
      target: { type: "chain", channelId: "g1", input: "go" },
      missedPolicy: "run_once",
      createdAt: T0 + 2,
      lastRunAt: T0 - 5,
      nextRunAt: T0 + HOUR,
      runRequestedAt: T0 + 1,
    });
    await store.insert(full);
    await store.insert(schedule("s-b", { createdAt: T0 + 1, ownerId: "bob", enabled: false }));
    await store.insert(schedule("s-a", { createdAt: T0 + 1 }));
    expect(await store.get("s-full")).toEqual(full);
    expect(await store.get("s-b")).toEqual(
      schedule("s-b", { createdAt: T0 + 1, ownerId: "bob", enabled: false }),
    );
    expect(await store.get("missing")).toBeUndefined();
    expect((await store.list()).map((s) => s.id)).toEqual(["s-a", "s-b", "s-full"]);
    expect((await store.list("alice")).map((s) => s.id)).toEqual(["s-a", "s-full"]);
    expect(await store.list("nobody")).toEqual([]);
    expect(await store.countByOwner("alice")).toBe(2);
    expect(await store.countByOwner("nobody")).toBe(0);
    await expect(store.insert(schedule("s-a"))).rejects.toThrow();

    await store.insertRun(run("r1", "s-a"));
    expect(await store.delete("s-a")).toBe(true);
    expect(await store.delete("s-a")).toBe(false);
    expect(await store.get("s-a")).toBeUndefined();
    // Runs go with their schedule.
    expect(await store.getRun("r1")).toBeUndefined();
    expect(await store.countByOwner("alice")).toBe(1);
  });

  it("updates own fields; next_run_at only when retimed; never last run or a pending request", async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s", { nextRunAt: T0 + HOUR }));
    await store.setLastRun("s", T0 + 7);
    await store.requestRun("s", T0 + 8);
    const edited = schedule("s", {
      name: "renamed",
      missedPolicy: "run_once",
      target: { type: "agent", agentId: "editor", prompt: "new", channelId: "c2" },
      updatedAt: T0 + 9,
      nextRunAt: T0 + 5 * HOUR,
    });
    expect(await store.update(edited, false)).toBe(true);
    expect(await store.get("s")).toEqual({
      ...edited,
      nextRunAt: T0 + HOUR,
      lastRunAt: T0 + 7,
      runRequestedAt: T0 + 8,
    });
    const retimed = {
      ...edited,
      timing: { kind: "interval", seconds: 60 } as ScheduleTiming,
      nextRunAt: T0 + MIN,
    };
    expect(await store.update(retimed, true)).toBe(true);
    expect((await store.get("s"))?.nextRunAt).toBe(T0 + MIN);
    const { nextRunAt: _next, ...disabled } = { ...retimed, enabled: false };
    expect(await store.update(disabled, true)).toBe(true);
    expect(await store.get("s")).toMatchObject({ enabled: false, lastRunAt: T0 + 7 });
    expect((await store.get("s"))?.nextRunAt).toBeUndefined();
    expect(await store.update(schedule("gone"), true)).toBe(false);
  });

  it("lists due schedules soonest first, with requested runs even when disabled, and the next wake", async () => {
    const store = storeOf(await open());
    expect(await store.nextWake()).toBeUndefined();
    expect(await store.listDue(T0)).toEqual([]);
    await store.insert(schedule("later", { nextRunAt: T0 + 2 * HOUR }));
    await store.insert(schedule("b-soon", { nextRunAt: T0 + HOUR }));
    await store.insert(schedule("a-soon", { nextRunAt: T0 + HOUR }));
    await store.insert(schedule("off", { enabled: false, nextRunAt: T0 }));
    await store.insert(schedule("none"));
    expect(await store.nextWake()).toBe(T0 + HOUR);
    expect(await store.listDue(T0 + HOUR - 1)).toEqual([]);
    expect((await store.listDue(T0 + HOUR)).map((s) => s.id)).toEqual(["a-soon", "b-soon"]);
    expect((await store.listDue(T0 + 3 * HOUR)).map((s) => s.id)).toEqual(["a-soon", "b-soon", "later"]);

    expect(await store.requestRun("off", T0 + 30 * MIN)).toBe(true);
    expect(await store.requestRun("missing", T0)).toBe(false);
    expect(await store.nextWake()).toBe(T0 + 30 * MIN);
    // A requested run is listed whatever the time (the disabled schedule's stale next_run_at sorts it).
    expect((await store.listDue(T0)).map((s) => s.id)).toEqual(["off"]);

    await store.setNextRun("a-soon", undefined);
    await store.setNextRun("b-soon", T0 + 4 * HOUR);
    expect((await store.listDue(T0 + 3 * HOUR)).map((s) => s.id)).toEqual(["off", "later"]);
  });

  it("claims a due time once: a stale, repeated or disabled claim fails", async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s", { nextRunAt: T0 + HOUR }));
    expect(await store.claimDue("s", T0, T0 + HOUR)).toBe(false);
    expect(await store.claimDue("s", T0 + HOUR, T0 + 2 * HOUR)).toBe(true);
    expect(await store.claimDue("s", T0 + HOUR, T0 + 2 * HOUR)).toBe(false);
    expect((await store.get("s"))?.nextRunAt).toBe(T0 + 2 * HOUR);
    // A one-shot's claim leaves nothing due.
    expect(await store.claimDue("s", T0 + 2 * HOUR, undefined)).toBe(true);
    expect((await store.get("s"))?.nextRunAt).toBeUndefined();
    expect(await store.claimDue("s", T0 + 2 * HOUR, undefined)).toBe(false);

    await store.insert(schedule("off", { enabled: false, nextRunAt: T0 }));
    expect(await store.claimDue("off", T0, T0 + HOUR)).toBe(false);
    expect(await store.claimDue("missing", T0, T0 + HOUR)).toBe(false);
  });

  it("of concurrent claims by two instances exactly one wins, for due times and run requests", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    try {
      const a = storeOf(backend);
      const b = secondStore(backend, close);
      const ids = Array.from({ length: 20 }, (_, i) => `s${String(i).padStart(2, "0")}`);
      for (const id of ids) await a.insert(schedule(id, { nextRunAt: T0 }));
      const claims = await Promise.all(
        ids.flatMap((id) => [a.claimDue(id, T0, T0 + HOUR), b.claimDue(id, T0, T0 + HOUR)]),
      );
      for (let i = 0; i < ids.length; i++)
        expect([claims[2 * i], claims[2 * i + 1]].sort()).toEqual([false, true]);

      for (const id of ids) await a.requestRun(id, T0 + 5);
      const taken = await Promise.all(
        ids.flatMap((id) => [a.takeRunRequest(id, T0 + 5), b.takeRunRequest(id, T0 + 5)]),
      );
      expect(taken.filter(Boolean)).toHaveLength(ids.length);
      expect((await a.get(ids[0]!))?.runRequestedAt).toBeUndefined();
    } finally {
      for (const c of close) c();
    }
  });

  it("takes a run request only as made: a newer request survives a stale take", async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s"));
    expect(await store.takeRunRequest("s", T0)).toBe(false);
    await store.requestRun("s", T0);
    await store.requestRun("s", T0 + 1);
    expect(await store.takeRunRequest("s", T0)).toBe(false);
    expect((await store.get("s"))?.runRequestedAt).toBe(T0 + 1);
    expect(await store.takeRunRequest("s", T0 + 1)).toBe(true);
    expect((await store.get("s"))?.runRequestedAt).toBeUndefined();
  });

  it("records runs with every field, newest first, updates them and interrupts running ones", async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s"));
    await store.insert(schedule("other"));
    const done = run("r-done", "s", {
      trigger: "missed",
      scheduledFor: T0 - HOUR,
      startedAt: T0 + 1,
      endedAt: T0 + 2,
      status: "done",
      output: "the answer",
      teamRunId: "tr1",
      flowId: "f1",
      messageId: 42,
    });
    await store.insertRun(run("r-old", "s"));
    await store.insertRun(done);
    // Same start time as r-done: the later recorded comes first.
    await store.insertRun(run("r-same", "s", { startedAt: T0 + 1, trigger: "manual" }));
    await store.insertRun(run("r-other", "other"));
    expect(await store.getRun("r-done")).toEqual(done);
    expect(await store.getRun("missing")).toBeUndefined();
    expect((await store.listRuns("s")).map((r) => r.id)).toEqual(["r-same", "r-done", "r-old"]);
    expect((await store.listRuns("s", 2)).map((r) => r.id)).toEqual(["r-same", "r-done"]);
    await expect(store.insertRun(run("r-old", "s"))).rejects.toThrow();
    await expect(store.insertRun(run("r-orphan", "missing"))).rejects.toThrow();

    const finished = { ...run("r-old", "s"), status: "error" as const, endedAt: T0 + 3, error: "model down" };
    expect(await store.updateRun(finished)).toBe(true);
    expect(await store.getRun("r-old")).toEqual(finished);
    expect(await store.updateRun(run("missing", "s"))).toBe(false);

    expect(await store.interruptRunning(T0 + 10, "interrupted: stop")).toBe(2);
    expect(await store.getRun("r-same")).toMatchObject({
      status: "error",
      endedAt: T0 + 10,
      error: "interrupted: stop",
    });
    expect(await store.getRun("r-other")).toMatchObject({ status: "error" });
    expect(await store.getRun("r-done")).toEqual(done);
    expect(await store.interruptRunning(T0 + 11, "again")).toBe(0);
  });

  it("keeps heartbeats of running runs: only stale ones are interrupted; a fresh one is found running", async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s"));
    await store.insertRun(run("live", "s", { startedAt: T0 }));
    await store.insertRun(run("dead", "s", { startedAt: T0 + 1 }));
    await store.insertRun(run("finished", "s", { startedAt: T0 + 2, status: "done" }));
    await store.heartbeat(["live", "finished", "missing"], T0 + 10 * MIN);
    await store.heartbeat([], T0 + 11 * MIN);
    // The newest running run whose heartbeat is fresh enough.
    expect((await store.runningRun("s", T0))?.id).toBe("dead");
    expect((await store.runningRun("s", T0 + 2))?.id).toBe("live");
    expect(await store.runningRun("s", T0 + 10 * MIN + 1)).toBeUndefined();
    expect(await store.runningRun("other", T0)).toBeUndefined();

    expect(await store.interruptRunning(T0 + 20 * MIN, "interrupted: gone", T0 + 5 * MIN)).toBe(1);
    expect(await store.getRun("dead")).toMatchObject({ status: "error", error: "interrupted: gone" });
    expect(await store.getRun("live")).toMatchObject({ status: "running" });
    expect(await store.getRun("finished")).toMatchObject({ status: "done" });
    expect(await store.interruptRunning(T0 + 20 * MIN, "again", T0 + 10 * MIN)).toBe(0);
    expect(await store.interruptRunning(T0 + 20 * MIN, "again", T0 + 10 * MIN + 1)).toBe(1);
  });

  it(`keeps the newest ${RUNS_KEPT_PER_SCHEDULE} finished runs of a schedule, and every running one`, async () => {
    const store = storeOf(await open());
    await store.insert(schedule("s"));
    await store.insert(schedule("other"));
    await store.insertRun(run("other-run", "other", { status: "done" }));
    await store.insertRun(run("still-running", "s", { startedAt: T0 - 1 }));
    for (let i = 0; i < RUNS_KEPT_PER_SCHEDULE + 5; i++) {
      await store.insertRun(run(`r${i}`, "s", { startedAt: T0 + i, status: "done" }));
    }
    const kept = await store.listRuns("s", 1000);
    expect(kept).toHaveLength(RUNS_KEPT_PER_SCHEDULE + 1);
    expect(kept[0]?.id).toBe(`r${RUNS_KEPT_PER_SCHEDULE + 4}`);
    expect(kept.some((r) => r.id === "r4")).toBe(false);
    expect(kept.some((r) => r.id === "r5")).toBe(true);
    expect(kept.at(-1)?.id).toBe("still-running");
    expect(await store.getRun("other-run")).toBeDefined();
  });
});

/** A clock whose timers due at the same instant fire together, as two processes' timers would. */
class SharedClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: number) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + Math.max(0, ms), fn });
    return seq;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Moves to `to`, firing every group of timers due on the way; `settle` runs after each group. */
  async advanceTo(to: number, settle: () => Promise<void>): Promise<void> {
    for (;;) {
      const due = [...this.#timers.entries()].filter(([, t]) => t.at <= to);
      if (due.length === 0) break;
      const at = Math.min(...due.map(([, t]) => t.at));
      this.#now = Math.max(this.#now, at);
      for (const [seq, timer] of due.filter(([, t]) => t.at === at)) {
        this.#timers.delete(seq);
        timer.fn();
      }
      await settle();
    }
    this.#now = Math.max(this.#now, to);
  }
}

describeBackends("two schedulers on one database", (open) => {
  it("leave each other's runs alone while alive, skip overlapping them, and end them once their instance died", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    const stores = [storeOf(backend), secondStore(backend, close)] as const;
    // Separate clocks: A's stops moving when A "dies"; B's goes on.
    const clocks = [new SharedClock(T0), new SharedClock(T0 + HOUR + MIN)] as const;
    const fired: string[] = [];
    const hang: TargetExecutor = (s, _actor, signal) =>
      new Promise<RunOutcome>((resolve) => {
        fired.push(`A ${s.id}`);
        signal.addEventListener("abort", () => resolve({ status: "error", error: "aborted" }), {
          once: true,
        });
      });
    const answer: TargetExecutor = async (s) => {
      fired.push(`B ${s.id}`);
      return { status: "done", output: "ok" };
    };
    const [a, b] = [hang, answer].map(
      (execute, i) =>
        new Scheduler({
          store: stores[i]!,
          execute,
          actorOf: (userId) => ({ userId, role: "member" }),
          clock: clocks[i]!,
          pollMs: 15 * MIN,
        }),
    ) as [Scheduler, Scheduler];
    try {
      await stores[0].insert(schedule("hourly", { nextRunAt: T0 + HOUR }));
      await a.start();
      await clocks[0].advanceTo(T0 + HOUR, () => a.idle());
      expect(fired).toEqual(["A hourly"]);
      const [first] = await stores[0].listRuns("hourly");
      expect(first?.status).toBe("running");

      // B starting does not end A's run: A is alive (its heartbeat is fresh).
      await b.start();
      expect((await stores[1].getRun(first!.id))?.status).toBe("running");
      // The next due time comes while A's run goes on: B skips it.
      await clocks[1].advanceTo(T0 + 2 * HOUR, () => b.settled());
      const [skipped] = await stores[1].listRuns("hourly");
      expect(skipped).toMatchObject({ status: "skipped", scheduledFor: T0 + 2 * HOUR });
      expect(skipped?.error).toContain(`The previous run ${first!.id}`);

      // A has not beaten since 01:00: after an hour (four polls) B ends its run; the 03:00 run is B's.
      await clocks[1].advanceTo(T0 + 3 * HOUR, () => b.settled());
      expect(await stores[1].getRun(first!.id)).toMatchObject({
        status: "error",
        error: expect.stringMatching(/^interrupted/),
      });
      expect(fired).toEqual(["A hourly", "B hourly"]);
      expect((await stores[1].listRuns("hourly"))[0]).toMatchObject({
        status: "done",
        scheduledFor: T0 + 3 * HOUR,
      });
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      for (const c of close) c();
    }
  });

  it("fire each due time of a one-shot and an interval schedule exactly once, and a requested run once", async () => {
    const backend = await open();
    const close: Array<() => void> = [];
    const clock = new SharedClock(T0);
    const fired: Array<{ instance: string; scheduleId: string; at: number }> = [];
    const executor =
      (instance: string): TargetExecutor =>
      async (s): Promise<RunOutcome> => {
        fired.push({ instance, scheduleId: s.id, at: clock.now() });
        return { status: "done", output: "ok" };
      };
    const stores = [storeOf(backend), secondStore(backend, close)] as const;
    const schedulers = stores.map(
      (store, i) =>
        new Scheduler({
          store,
          execute: executor(i === 0 ? "A" : "B"),
          actorOf: (userId) => ({ userId, role: "member" }),
          clock,
          pollMs: 15 * MIN,
        }),
    );
    const settle = async () => {
      await Promise.all(schedulers.map((s) => s.settled()));
    };
    try {
      const add = async (id: string, timing: ScheduleTiming) => {
        const next = firstRunAt(timing, T0);
        await stores[0].insert(schedule(id, { timing, ...(next !== undefined ? { nextRunAt: next } : {}) }));
      };
      await add("hourly", { kind: "interval", seconds: 3600 });
      await add("once", { kind: "once", at: new Date(T0 + 90 * MIN).toISOString() });
      await Promise.all(schedulers.map((s) => s.start()));
      await clock.advanceTo(T0 + 3 * HOUR + 30 * MIN, settle);
      await stores[1].requestRun("once", clock.now());
      await clock.advanceTo(T0 + 4 * HOUR + 30 * MIN, settle);
      await settle();

      const times = (id: string) =>
        fired
          .filter((f) => f.scheduleId === id)
          .map((f) => new Date(f.at).toISOString())
          .sort();
      expect(times("hourly")).toEqual([
        "2025-03-07T01:00:00.000Z",
        "2025-03-07T02:00:00.000Z",
        "2025-03-07T03:00:00.000Z",
        "2025-03-07T04:00:00.000Z",
      ]);
      // The one-shot at 01:30, then the run asked for at 03:30 (picked up on the next poll).
      expect(times("once")).toEqual(["2025-03-07T01:30:00.000Z", "2025-03-07T03:45:00.000Z"]);
      const runs = await stores[1].listRuns("hourly");
      expect(runs).toHaveLength(4);
      expect(runs.every((r) => r.status === "done" && r.trigger === "schedule")).toBe(true);
      expect(new Set(runs.map((r) => r.scheduledFor)).size).toBe(4);
      expect((await stores[0].listRuns("once")).map((r) => r.trigger).sort()).toEqual(["manual", "schedule"]);
      expect((await stores[0].get("once"))?.nextRunAt).toBeUndefined();
    } finally {
      await Promise.all(schedulers.map((s) => s.stop()));
      for (const c of close) c();
    }
  });
});
