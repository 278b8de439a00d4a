/** `manage_schedule` through a real tool registry, acting as one person over a real team. */

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createManageScheduleTool, MANAGE_SCHEDULE_TOOL } from "../../src/schedules/manage-schedule-tool.js";
import type { ScheduleView } from "../../src/schedules/schedule-service.js";
import { createSqliteScheduleStore } from "../../src/schedules/schedule-store.js";
import { createScheduling, type Scheduling } from "../../src/schedules/setup.js";
import type { ScheduleRunRecord } from "../../src/schedules/types.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { testToolContext } from "../support/tool-context.js";
import { AgentScripts, alice, bob, guest, TeamHarness } from "../team/harness.js";
import { FakeClock } from "./fake-clock.js";

let server: FakeLlmServer;
const scripts = new AgentScripts();
let h: TeamHarness;
let scheduling: Scheduling;
let group: ChannelRecord;

const ctx: ToolContext = {
  ...testToolContext({ runId: "r1" }),
};

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
  scheduling = createScheduling({
    store: createSqliteScheduleStore(h.db),
    team: h.team,
    actorOf: (id) => [alice, bob, guest].find((a) => a.userId === id),
    clock: new FakeClock("2025-06-02T00:00:00Z"),
  });
  await scheduling.scheduler.start();
  group = await h.team.createChannel(alice, {
    kind: "group",
    name: "Desk",
    agentIds: ["writer"],
    userIds: [],
  });
});
afterEach(async () => {
  await scheduling.scheduler.stop();
  await h.close();
});

/** Calls the tool as the model would: raw JSON arguments, validated by the registry. */
async function use(actor: typeof alice, args: Record<string, unknown>): Promise<ToolResult> {
  const registry = new ToolRegistry([createManageScheduleTool(scheduling.service, actor)]);
  const prepared = registry.prepareCall(MANAGE_SCHEDULE_TOOL, JSON.stringify(args));
  if (!prepared.ok) return { content: prepared.error, isError: true };
  return registry.execute(prepared, ctx);
}

describe("manage_schedule", () => {
  it("creates, lists, updates, disables, runs, reports and deletes schedules", async () => {
    const created = await use(alice, {
      action: "create",
      name: "Standup",
      cron: "0 9 * * 1-5",
      timezone: "Asia/Shanghai",
      channelId: group.id,
      agentId: "writer",
      prompt: "Post the standup reminder",
      missedPolicy: "run_once",
    });
    expect(created.isError).toBeFalsy();
    const schedule = created.data as ScheduleView;
    expect(schedule).toMatchObject({
      name: "Standup",
      ownerId: "alice",
      missedPolicy: "run_once",
      timing: { kind: "cron", expression: "0 9 * * 1-5", timezone: "Asia/Shanghai" },
      nextRunAt: Date.parse("2025-06-02T01:00:00Z"),
    });
    expect(created.content).toContain(`Created ${schedule.id}`);

    const listed = await use(alice, { action: "list" });
    expect(listed.content).toContain('"Standup"  cron "0 9 * * 1-5" (Asia/Shanghai) → @writer in');

    const updated = await use(alice, {
      action: "update",
      id: schedule.id,
      prompt: "Post the reminder, briefly",
    });
    expect((updated.data as ScheduleView).target).toEqual({
      type: "agent",
      agentId: "writer",
      channelId: group.id,
      prompt: "Post the reminder, briefly",
    });

    const disabled = await use(alice, { action: "disable", id: schedule.id });
    expect(disabled.data).toMatchObject({ enabled: false });

    scripts.add("writer", { text: "Reminder: standup at 10." });
    const started = await use(alice, { action: "run_now", id: schedule.id });
    expect(started.content).toContain("Started run");
    await scheduling.scheduler.waitForRun((started.data as ScheduleRunRecord).id);

    const status = await use(alice, { action: "status", id: schedule.id });
    expect(status.content).toContain("[disabled]");
    expect(status.content).toContain("done: Reminder: standup at 10.");

    expect((await use(alice, { action: "delete", id: schedule.id })).content).toBe(
      `Deleted schedule ${schedule.id}.`,
    );
    expect((await use(alice, { action: "list" })).content).toBe("No schedules.");
  });

  it("answers mistakes and denials with errors the model can act on", async () => {
    const tooFast = await use(alice, {
      action: "create",
      name: "Spam",
      everySeconds: 10,
      channelId: group.id,
      agentId: "writer",
      prompt: "x",
    });
    expect(tooFast).toMatchObject({ isError: true });
    expect(tooFast.content).toContain("at least 60 seconds");

    const two = await use(alice, { action: "create", name: "x", cron: "0 9 * * *", everySeconds: 60 });
    expect(two.content).toContain("exactly one of cron, at or everySeconds");

    const noTarget = await use(alice, { action: "create", name: "x", everySeconds: 60, channelId: group.id });
    expect(noTarget.content).toContain("agent target needs channelId, agentId and prompt");

    const notMember = await use(bob, {
      action: "create",
      name: "x",
      everySeconds: 60,
      channelId: group.id,
      agentId: "writer",
      prompt: "x",
    });
    expect(notMember).toMatchObject({ isError: true });
    expect(notMember.content).toContain("not a member");

    const asGuest = await use(guest, { action: "list" });
    expect(asGuest.content).toBe("No schedules.");

    const missingId = await use(alice, { action: "status" });
    expect(missingId.content).toContain('"status" needs the schedule id');

    const badAction = await use(alice, { action: "explode" });
    expect(badAction.isError).toBe(true);
  });
});
