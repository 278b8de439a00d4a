/**
 * `dimsum schedule` on the database of a running server: what the CLI adds, the server picks up on its
 * next look; `run` queues a run the server starts, and waits for its answer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ScheduleCommandOptions, scheduleCommand } from "../../src/cli/commands/schedule.js";
import type { ScheduleRecord } from "../../src/schedules/types.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "../server/helpers.js";
import { expectJson } from "../server/team-helpers.js";
import { AgentScripts } from "../team/harness.js";
import { type ScheduleServer, startScheduleServer } from "./schedule-server.js";

let llm: FakeLlmServer;
const scripts = new AgentScripts();

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: scripts.turn });
});
afterAll(async () => {
  await llm.close();
});

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

function cli(
  s: ScheduleServer,
  action: string,
  args: string[],
  options: ScheduleCommandOptions,
): Promise<Output> {
  const out = { stdout: "", stderr: "" };
  return scheduleCommand(action, args, options, {
    stdout: { write: (t: string) => (out.stdout += t) },
    stderr: { write: (t: string) => (out.stderr += t) },
    env: { DIMSUM_HOME: s.home },
    cwd: s.home,
    pollMs: 10,
  }).then((code) => ({ code, ...out }));
}

describe("dimsum schedule", () => {
  it("adds, lists, runs through the running server, and removes schedules", async () => {
    // The scheduler's fake clock starts at the wall clock, which the CLI uses to compute next runs.
    const s = await startScheduleServer(llm.url, Date.now());
    const { owner, users } = await withUsers(s.url, ["member"]);
    const member = users.member!;
    const room = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: member,
        body: { kind: "group", name: "Room", agentIds: ["writer"], userIds: [] },
      }),
      201,
    );
    const secret = await expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session: owner,
        body: { kind: "group", name: "Secret", agentIds: ["writer"], userIds: [] },
      }),
      201,
    );

    const added = await cli(s, "add", [], {
      name: "Pulse",
      every: 60,
      channel: room.id,
      agent: "@writer",
      prompt: "Check the pulse",
      owner: "member-user",
      json: true,
    });
    expect(added).toMatchObject({ code: 0, stderr: "" });
    const schedule = JSON.parse(added.stdout) as ScheduleRecord;
    expect(schedule).toMatchObject({
      ownerId: member.userId,
      name: "Pulse",
      timing: { kind: "interval", seconds: 60 },
    });

    const listed = await cli(s, "list", [], {});
    expect(listed.stdout).toContain(`${schedule.id}  on   Pulse  every 60 s → @writer in ${room.id}`);
    const viaApi = await expectJson<ScheduleRecord[]>(
      await call(s.url, "/api/schedules", { session: member }),
      200,
    );
    expect(viaApi.map((x) => x.id)).toEqual([schedule.id]);

    // The running server notices the new schedule on its next poll once it is due.
    scripts.add("writer", { text: "pulse is steady" }, { text: "pulse on demand" });
    await s.clock.advance(60_000 + s.pollMs);
    await s.scheduling.scheduler.settled();
    expect(await s.scheduling.store.listRuns(schedule.id)).toMatchObject([
      { status: "done", trigger: "schedule", output: "pulse is steady" },
    ]);

    const running = cli(s, "run", [schedule.id], { timeout: 30 });
    await s.clock.advance(s.pollMs);
    const ran = await running;
    expect(ran).toMatchObject({ code: 0, stdout: "done: pulse on demand\n" });

    const queued = await cli(s, "run", [schedule.id], { wait: false });
    expect(queued.stdout).toContain("queued a run");
    expect((await s.scheduling.store.get(schedule.id))?.runRequestedAt).toBeDefined();

    expect(await cli(s, "rm", [schedule.id], {})).toMatchObject({
      code: 0,
      stdout: `deleted ${schedule.id}\n`,
    });
    const again = await cli(s, "rm", [schedule.id], {});
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No schedule with id "${schedule.id}"`);

    const intrude = await cli(s, "add", [], {
      name: "Peek",
      every: 60,
      channel: secret.id,
      agent: "writer",
      prompt: "x",
      owner: "member-user",
    });
    expect(intrude.code).toBe(1);
    expect(intrude.stderr).toContain("Channel not found, or you are not a member of it.");
    expect(intrude.stderr).not.toContain("Secret");
  });

  it("explains usage mistakes with exit code 2", async () => {
    const s = await startScheduleServer(llm.url, Date.now());
    await withUsers(s.url);
    const noName = await cli(s, "add", [], { every: 60, channel: "c", agent: "writer", prompt: "x" });
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain("--name is required");
    const twoTimings = await cli(s, "add", [], { name: "x", every: 60, cron: "0 9 * * *", channel: "c" });
    expect(twoTimings.stderr).toContain("exactly one of --cron, --at or --every");
    const badPolicy = await cli(s, "add", [], {
      name: "x",
      every: 60,
      channel: "c",
      agent: "writer",
      prompt: "x",
      missed: "sometimes",
    });
    expect(badPolicy.stderr).toContain("--missed must be skip or run_once");
    const fast = await cli(s, "add", [], {
      name: "x",
      every: 30,
      channel: "c",
      agent: "writer",
      prompt: "x",
    });
    expect(fast).toMatchObject({ code: 2 });
    expect(fast.stderr).toContain("An interval must be a whole number of seconds from 60");
    expect((await cli(s, "explode", [], {})).code).toBe(2);
    expect((await cli(s, "run", [], {})).stderr).toContain("run needs exactly one schedule id");
  });
});
