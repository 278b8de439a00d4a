/**
 * End to end: a real team over SQLite whose agents talk to the fake LLM server over HTTP, a scheduler
 * on a fake clock, and schedules that make an agent post into a channel or run a chain.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSqliteScheduleStore } from "../../src/schedules/schedule-store.js";
import { createScheduling, type Scheduling } from "../../src/schedules/setup.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, agentOf, alice, bob, lastUserText, owner, TeamHarness } from "../team/harness.js";
import { FakeClock } from "./fake-clock.js";

let server: FakeLlmServer;
const scripts = new AgentScripts();
let h: TeamHarness;
let clock: FakeClock;
let scheduling: Scheduling;
let group: ChannelRecord;

const accounts = new Map([alice, bob, owner].map((a) => [a.userId, a]));

beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.reset();
  scripts.clear();
  h = new TeamHarness(server);
  clock = new FakeClock("2025-06-02T00:00:00Z");
  scheduling = createScheduling({
    store: createSqliteScheduleStore(h.db),
    team: h.team,
    actorOf: (id) => accounts.get(id),
    clock,
    pollMs: 24 * 3600_000,
  });
  group = await h.team.createChannel(alice, {
    kind: "group",
    name: "Newsroom",
    agentIds: ["writer", "editor"],
    userIds: [],
  });
});
afterEach(async () => {
  await scheduling.scheduler.stop();
  await h.close();
});

describe("a schedule makes an agent post into a channel", () => {
  it("posts the prompt at 09:00 Shanghai time; the agent's answer lands in the channel and in the run", async () => {
    scripts.add("writer", { text: "Morning digest: three launches, no incidents." });
    const { service, scheduler, store } = scheduling;
    const schedule = await service.create(alice, {
      name: "Morning digest",
      timing: { kind: "cron", expression: "0 9 * * *", timezone: "Asia/Shanghai" },
      target: {
        type: "agent",
        agentId: "writer",
        channelId: group.id,
        prompt: "Write the digest; ignore @editor",
      },
    });
    expect(schedule.nextRunAt).toBe(Date.parse("2025-06-02T01:00:00Z"));
    await scheduler.start();
    await clock.advanceTo("2025-06-02T01:00:00Z");
    await scheduler.settled();

    const messages = await h.team.listMessages(alice, group.id);
    expect(messages.map((m) => [m.author, m.text])).toEqual([
      [{ type: "user", id: "alice" }, "⏰ @writer Write the digest; ignore @\u200beditor"],
      [{ type: "agent", id: "writer" }, "Morning digest: three launches, no incidents."],
    ]);
    // Only the targeted agent ran, and it saw the prompt.
    expect(server.requests.map(agentOf)).toEqual(["writer"]);
    expect(lastUserText(server.requests[0])).toContain("Write the digest");

    const [run] = await store.listRuns(schedule.id);
    expect(run).toMatchObject({
      status: "done",
      trigger: "schedule",
      scheduledFor: Date.parse("2025-06-02T01:00:00Z"),
      output: "Morning digest: three launches, no incidents.",
      teamRunId: messages[1]?.runId,
      messageId: messages[0]?.id,
    });
    expect((await h.team.getRun(alice, run!.teamRunId!)).status).toBe("done");
    expect((await store.get(schedule.id))?.nextRunAt).toBe(Date.parse("2025-06-03T01:00:00Z"));
  });

  it("records the agent's failure as the run's error", async () => {
    scripts.add("writer", { error: { status: 400 } });
    const { service, scheduler } = scheduling;
    const schedule = await service.create(alice, {
      name: "Broken",
      timing: { kind: "interval", seconds: 600 },
      target: { type: "agent", agentId: "writer", channelId: group.id, prompt: "hello" },
    });
    await scheduler.start();
    const started = await service.runNow(alice, schedule.id);
    expect(started.status).toBe("running");
    const ended = await scheduler.waitForRun(started.id);
    expect(ended).toMatchObject({ status: "error", trigger: "manual" });
    expect(ended?.error).not.toBe("");
    expect(ended?.teamRunId).toBeDefined();
  });

  it("runs a group's collaboration chain and keeps the last step's output", async () => {
    await h.team.setChain(alice, group.id, [
      { agentId: "writer", requiresApproval: false },
      { agentId: "editor", requiresApproval: false },
    ]);
    scripts.add("writer", { text: "draft" });
    scripts.add("editor", { text: "polished weekly note" });
    const { service, scheduler } = scheduling;
    const schedule = await service.create(alice, {
      name: "Weekly note",
      timing: { kind: "interval", seconds: 3600 },
      target: { type: "chain", channelId: group.id, input: "weekly note" },
    });
    await scheduler.start();
    const run = await scheduler.waitForRun((await service.runNow(alice, schedule.id)).id);
    expect(run).toMatchObject({ status: "done", output: "polished weekly note" });
    expect((await h.team.getFlow(alice, run!.flowId!)).status).toBe("done");
    expect(server.requests.map(agentOf)).toEqual(["writer", "editor"]);
    expect(lastUserText(server.requests[0])).toContain("weekly note");
  });
});

describe("who may schedule what", () => {
  it("keeps members to their own schedules and channels they belong to; admins see all", async () => {
    const { service } = scheduling;
    const mine = await service.create(alice, {
      name: "Mine",
      timing: { kind: "interval", seconds: 3600 },
      target: { type: "agent", agentId: "writer", channelId: group.id, prompt: "hi" },
    });
    await expect(
      service.create(bob, {
        name: "Intrude",
        timing: { kind: "interval", seconds: 3600 },
        target: { type: "agent", agentId: "writer", channelId: group.id, prompt: "hi" },
      }),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(service.get(bob, mine.id)).rejects.toThrow(/No schedule with id/);
    await expect(service.runNow(bob, mine.id)).rejects.toThrow(/No schedule with id/);
    expect(await service.list(bob)).toEqual([]);
    expect((await service.list(owner)).map((s) => s.id)).toEqual([mine.id]);
    await expect(
      service.create(alice, {
        name: "Not here",
        timing: { kind: "interval", seconds: 3600 },
        target: { type: "agent", agentId: "coder", channelId: group.id, prompt: "hi" },
      }),
    ).rejects.toThrow(/@coder is not in the channel "Newsroom"/);
    await expect(
      service.create(alice, {
        name: "No chain",
        timing: { kind: "interval", seconds: 3600 },
        target: { type: "chain", channelId: group.id, input: "x" },
      }),
    ).rejects.toThrow(/has no collaboration chain/);
  });
});
