import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunOutcome, TargetExecutor } from "../../src/schedules/run-target.js";
import { type ScheduleStore, SqliteScheduleStore } from "../../src/schedules/schedule-store.js";
import { Scheduler } from "../../src/schedules/scheduler.js";
import { firstRunAt } from "../../src/schedules/timing.js";
import type { MissedPolicy, ScheduleRecord, ScheduleTiming } from "../../src/schedules/types.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { FakeClock } from "./fake-clock.js";

interface Call {
  scheduleId: string;
  at: string;
  finish: (outcome: RunOutcome) => void;
}

/** An executor whose runs end when the test says so (or at once, when `auto` is set). */
class ScriptedExecutor {
  readonly calls: Call[] = [];
  auto: RunOutcome | undefined = { status: "done", output: "ok" };

  constructor(private readonly clock: FakeClock) {}

  readonly execute: TargetExecutor = (schedule, _actor, signal) =>
    new Promise<RunOutcome>((resolve) => {
      const call = { scheduleId: schedule.id, at: new Date(this.clock.now()).toISOString(), finish: resolve };
      this.calls.push(call);
      signal.addEventListener("abort", () => resolve({ status: "error", error: "aborted" }), { once: true });
      if (this.auto) resolve(this.auto);
    });

  at(scheduleId: string): string[] {
    return this.calls.filter((c) => c.scheduleId === scheduleId).map((c) => c.at);
  }
}

const DAY = 24 * 3600_000;
let dir: string;
let db: Database;
let store: ScheduleStore;
let clock: FakeClock;
let executor: ScriptedExecutor;
let scheduler: Scheduler;
const logs: string[] = [];

function newScheduler(): Scheduler {
  return new Scheduler({
    store,
    execute: executor.execute,
    actorOf: (userId) => (userId === "gone" ? undefined : { userId, role: "member" }),
    clock,
    // Long polls keep the fake timeline to the due instants only.
    pollMs: DAY,
    log: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
  });
}

async function addSchedule(
  id: string,
  timing: ScheduleTiming,
  missedPolicy: MissedPolicy = "skip",
  extra: Partial<ScheduleRecord> = {},
): Promise<ScheduleRecord> {
  const now = clock.now();
  const schedule: ScheduleRecord = {
    id,
    name: id,
    ownerId: "alice",
    enabled: true,
    timing,
    target: { type: "agent", agentId: "writer", prompt: "report", channelId: "c1" },
    missedPolicy,
    createdAt: now,
    updatedAt: now,
    ...extra,
  };
  const next = firstRunAt(timing, now);
  if (next !== undefined && schedule.enabled) schedule.nextRunAt = next;
  await store.insert(schedule);
  return schedule;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "dimsum-schedules-"));
  db = openDatabase(join(dir, "dimsum.db"));
  store = new SqliteScheduleStore(db);
  clock = new FakeClock("2025-03-07T00:00:00Z");
  executor = new ScriptedExecutor(clock);
  scheduler = newScheduler();
  logs.length = 0;
});

afterEach(async () => {
  await scheduler.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("firing on time", () => {
  it("fires 0 9 * * * at 09:00 Shanghai and 09:00 New York time, across New York's DST change", async () => {
    await addSchedule("sh", { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" });
    await addSchedule("ny", { kind: "cron", expression: "0 9 * * *", timezone: "America/New_York" });
    await scheduler.start();
    await clock.advanceTo("2025-03-11T00:00:00Z");
    await scheduler.settled();
    expect(executor.at("sh")).toEqual([
      "2025-03-07T01:00:00.000Z",
      "2025-03-08T01:00:00.000Z",
      "2025-03-09T01:00:00.000Z",
      "2025-03-10T01:00:00.000Z",
    ]);
    expect(executor.at("ny")).toEqual([
      "2025-03-07T14:00:00.000Z",
      "2025-03-08T14:00:00.000Z",
      "2025-03-09T13:00:00.000Z",
      "2025-03-10T13:00:00.000Z",
    ]);
    const runs = (await store.listRuns("ny")).reverse();
    expect(runs.map((r) => [r.status, r.trigger, new Date(r.scheduledFor ?? 0).toISOString()])).toEqual([
      ["done", "schedule", "2025-03-07T14:00:00.000Z"],
      ["done", "schedule", "2025-03-08T14:00:00.000Z"],
      ["done", "schedule", "2025-03-09T13:00:00.000Z"],
      ["done", "schedule", "2025-03-10T13:00:00.000Z"],
    ]);
    expect(runs[0]).toMatchObject({ output: "ok", endedAt: Date.parse("2025-03-07T14:00:00Z") });
    expect(await store.get("ny")).toMatchObject({
      lastRunAt: Date.parse("2025-03-10T13:00:00Z"),
      nextRunAt: Date.parse("2025-03-11T13:00:00Z"),
    });
  });

  it("fires an interval on its cadence and a one-shot exactly once", async () => {
    await addSchedule("hourly", { kind: "interval", seconds: 3600 });
    await addSchedule("once", { kind: "once", at: "2025-03-07T02:30:00.000Z" });
    await scheduler.start();
    await clock.advanceTo("2025-03-07T03:30:00Z");
    await scheduler.settled();
    expect(executor.at("hourly")).toEqual([
      "2025-03-07T01:00:00.000Z",
      "2025-03-07T02:00:00.000Z",
      "2025-03-07T03:00:00.000Z",
    ]);
    expect(executor.at("once")).toEqual(["2025-03-07T02:30:00.000Z"]);
    expect((await store.get("once"))?.nextRunAt).toBeUndefined();
    await clock.advanceTo("2025-03-09T00:00:00Z");
    await scheduler.settled();
    expect(executor.at("once")).toHaveLength(1);
  });

  it("never fires disabled schedules, and records a run error when the owner's account is gone", async () => {
    await addSchedule("off", { kind: "interval", seconds: 60 }, "skip", { enabled: false });
    await addSchedule("orphan", { kind: "interval", seconds: 600 }, "skip", { ownerId: "gone" });
    await scheduler.start();
    await clock.advance(11 * 60_000);
    await scheduler.settled();
    expect(executor.at("off")).toEqual([]);
    expect(executor.at("orphan")).toEqual([]);
    const [run] = await store.listRuns("orphan");
    expect(run).toMatchObject({ status: "error" });
    expect(run?.error).toContain('owner "gone" no longer has an account');
  });
});

describe("overlap", () => {
  it("skips and records a run that would overlap its still-running predecessor", async () => {
    executor.auto = undefined;
    await addSchedule("minutely", { kind: "interval", seconds: 60 });
    await scheduler.start();
    await clock.advance(60_000);
    expect(executor.calls).toHaveLength(1);
    const first = (await store.listRuns("minutely"))[0]!;
    expect(first.status).toBe("running");

    await clock.advance(60_000);
    expect(executor.calls).toHaveLength(1);
    const manual = await scheduler.runNow("minutely");
    expect(manual.status).toBe("skipped");
    const skipped = (await store.listRuns("minutely")).filter((r) => r.status === "skipped");
    expect(skipped.map((r) => r.trigger).sort()).toEqual(["manual", "schedule"]);
    expect(skipped[0]?.error).toContain(`The previous run ${first.id}`);
    expect(skipped[0]?.error).toContain("was still running");
    expect(logs.some((l) => l.includes("skipped") && l.includes(first.id))).toBe(true);

    executor.calls[0]!.finish({ status: "done", output: "slow answer" });
    await scheduler.settled();
    expect(await store.getRun(first.id)).toMatchObject({ status: "done", output: "slow answer" });

    await clock.advance(60_000);
    expect(executor.calls).toHaveLength(2);
    executor.calls[1]!.finish({ status: "error", error: "model down" });
    await scheduler.settled();
    expect((await store.listRuns("minutely"))[0]).toMatchObject({ status: "error", error: "model down" });
  });
});

describe("missed runs after downtime", () => {
  it("skips missed runs under `skip` and runs once under `run_once`, however many were missed", async () => {
    const hourly: ScheduleTiming = { kind: "cron", expression: "0 * * * *", timezone: "UTC" };
    await addSchedule("skipper", hourly, "skip");
    await addSchedule("catcher", hourly, "run_once");
    await scheduler.start();
    await clock.advanceTo("2025-03-07T01:30:00Z");
    await scheduler.settled();
    expect(executor.calls).toHaveLength(2);

    // The server goes down for five hours: 02:00 .. 06:00 are missed.
    await scheduler.stop();
    await clock.advanceTo("2025-03-07T06:45:00Z");
    expect(executor.calls).toHaveLength(2);
    scheduler = newScheduler();
    await scheduler.start();
    await scheduler.settled();

    expect(executor.at("skipper")).toEqual(["2025-03-07T01:00:00.000Z"]);
    const [skip] = await store.listRuns("skipper");
    expect(skip).toMatchObject({
      status: "skipped",
      trigger: "missed",
      scheduledFor: Date.parse("2025-03-07T02:00:00Z"),
    });
    expect(skip?.error).toContain("Missed 5 runs due from 2025-03-07T02:00:00.000Z");

    expect(executor.at("catcher")).toEqual(["2025-03-07T01:00:00.000Z", "2025-03-07T06:45:00.000Z"]);
    expect((await store.listRuns("catcher"))[0]).toMatchObject({ status: "done", trigger: "missed" });

    for (const id of ["skipper", "catcher"]) {
      expect((await store.get(id))?.nextRunAt).toBe(Date.parse("2025-03-07T07:00:00Z"));
    }
    await clock.advanceTo("2025-03-07T07:00:00Z");
    await scheduler.settled();
    expect(executor.at("skipper").at(-1)).toBe("2025-03-07T07:00:00.000Z");
    expect(executor.at("catcher").at(-1)).toBe("2025-03-07T07:00:00.000Z");
  });

  it("runs a schedule that is only a little late (within the grace period) as an ordinary run", async () => {
    await addSchedule("daily", { kind: "cron", expression: "0 9 * * *", timezone: "UTC" }, "skip");
    await clock.advanceTo("2025-03-07T09:00:30Z");
    await scheduler.start();
    await scheduler.settled();
    expect((await store.listRuns("daily"))[0]).toMatchObject({ status: "done", trigger: "schedule" });
  });

  it("ends runs cut off by a stop or a crash as interrupted", async () => {
    executor.auto = undefined;
    await addSchedule("long", { kind: "interval", seconds: 60 });
    await scheduler.start();
    await clock.advance(60_000);
    const running = (await store.listRuns("long"))[0]!;
    await scheduler.stop();
    expect(await store.getRun(running.id)).toMatchObject({ status: "error" });
    expect((await store.getRun(running.id))?.error).toMatch(/^interrupted/);

    // A crash leaves a run marked running in the database.
    await store.insertRun({
      id: "crashed",
      scheduleId: "long",
      trigger: "schedule",
      startedAt: 1,
      status: "running",
    });
    scheduler = newScheduler();
    await scheduler.start();
    expect(await store.getRun("crashed")).toMatchObject({
      status: "error",
      error: expect.stringMatching(/^interrupted/),
    });
  });
});

describe("changes from another process", () => {
  it("runs a requested run (dimsum schedule run) on its next look, even when the schedule is disabled", async () => {
    await addSchedule("manual", { kind: "interval", seconds: 3600 }, "skip", { enabled: false });
    scheduler = new Scheduler({
      store,
      execute: executor.execute,
      actorOf: (userId) => ({ userId, role: "member" }),
      clock,
      pollMs: 15_000,
    });
    await scheduler.start();
    await clock.advance(20_000);
    expect(executor.calls).toHaveLength(0);
    expect(await store.requestRun("manual", clock.now())).toBe(true);
    await clock.advance(15_000);
    await scheduler.settled();
    expect(executor.at("manual")).toHaveLength(1);
    expect((await store.listRuns("manual"))[0]).toMatchObject({ status: "done", trigger: "manual" });
    expect((await store.get("manual"))?.runRequestedAt).toBeUndefined();
  });

  it("picks up a schedule inserted into the database while running", async () => {
    scheduler = new Scheduler({
      store,
      execute: executor.execute,
      actorOf: (userId) => ({ userId, role: "member" }),
      clock,
      pollMs: 15_000,
    });
    await scheduler.start();
    await clock.advance(60_000);
    await addSchedule("late", { kind: "interval", seconds: 60 });
    await clock.advance(75_000);
    await scheduler.settled();
    expect(executor.at("late")).toEqual(["2025-03-07T00:02:00.000Z"]);
  });
});
