/** `/api/schedules` over HTTP: authentication, validation, member isolation, runs with their output. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ScheduleView } from "../../src/schedules/schedule-service.js";
import type { ScheduleRunRecord } from "../../src/schedules/types.js";
import type { ChannelMessage, ChannelRecord } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, withUsers } from "../server/helpers.js";
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

interface World {
  s: ScheduleServer;
  owner: Session;
  member: Session;
  other: Session;
  guest: Session;
  /** The member's group with @writer. */
  room: ChannelRecord;
  /** The owner's group the member is not in. */
  secret: ChannelRecord;
}

async function group(s: ScheduleServer, session: Session, name: string): Promise<ChannelRecord> {
  return expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session,
      body: { kind: "group", name, agentIds: ["writer"], userIds: [] },
    }),
    201,
  );
}

async function world(): Promise<World> {
  const s = await startScheduleServer(llm.url);
  const { owner, users } = await withUsers(s.url, ["member", "guest"]);
  const otherRes = await call(s.url, "/api/users", {
    session: owner,
    body: { username: "other-user", password: "other-password-1", role: "member" },
  });
  expect(otherRes.status).toBe(201);
  const other = await login(s.url, "other-user", "other-password-1");
  return {
    s,
    owner,
    member: users.member!,
    other,
    guest: users.guest!,
    room: await group(s, users.member!, "Room"),
    secret: await group(s, owner, "Secret"),
  };
}

const hourly = { kind: "interval", seconds: 3600 };

function agentSchedule(channelId: string, extra: Record<string, unknown> = {}) {
  return {
    name: "Digest",
    timing: hourly,
    target: { type: "agent", agentId: "writer", channelId, prompt: "Write the digest" },
    ...extra,
  };
}

describe("schedules API", () => {
  it("needs a session, and a CSRF token for cookie-authenticated changes", async () => {
    const w = await world();
    expect((await call(w.s.url, "/api/schedules")).status).toBe(401);
    const noCsrf = await call(w.s.url, "/api/schedules", {
      session: w.member,
      noCsrf: true,
      body: agentSchedule(w.room.id),
    });
    expect(noCsrf.status).toBe(403);
    const bearer = await call(w.s.url, "/api/schedules", {
      session: w.member,
      as: "bearer",
      body: agentSchedule(w.room.id),
    });
    expect(bearer.status).toBe(201);
  });

  it("validates input: shapes, the one-minute floor, time zones, cron syntax, past one-shots", async () => {
    const w = await world();
    const post = (body: unknown) => call(w.s.url, "/api/schedules", { session: w.member, body });
    const missing = await expectJson<{ error: { code: string; issues: Array<{ path: string }> } }>(
      await post({ name: "x" }),
      400,
    );
    expect(missing.error.code).toBe("invalid");
    expect(missing.error.issues.map((i) => i.path).sort()).toEqual(["target", "timing"]);

    const fast = await expectJson<{ error: { issues: Array<{ path: string; message: string }> } }>(
      await post(agentSchedule(w.room.id, { timing: { kind: "interval", seconds: 30 } })),
      400,
    );
    expect(fast.error.issues).toEqual([{ path: "timing.seconds", message: "at least 60 seconds" }]);

    const zone = await expectJson<{ error: { message: string } }>(
      await post(
        agentSchedule(w.room.id, {
          timing: { kind: "cron", expression: "0 9 * * *", timezone: "Moon/Base" },
        }),
      ),
      400,
    );
    expect(zone.error.message).toContain('Unknown time zone "Moon/Base"');

    const everySecond = await expectJson<{ error: { message: string } }>(
      await post(
        agentSchedule(w.room.id, { timing: { kind: "cron", expression: "* * * * * *", timezone: "UTC" } }),
      ),
      400,
    );
    expect(everySecond.error.message).toContain("more often than once a minute");

    const past = await expectJson<{ error: { message: string } }>(
      await post(agentSchedule(w.room.id, { timing: { kind: "once", at: "2020-01-01T00:00:00Z" } })),
      400,
    );
    expect(past.error.message).toContain("has already passed");

    const emptyPatch = await call(w.s.url, "/api/schedules/sch_x", {
      session: w.member,
      method: "PATCH",
      body: {},
    });
    expect(emptyPatch.status).toBe(400);
    expect((await call(w.s.url, "/api/schedules/sch_missing", { session: w.member })).status).toBe(404);
  });

  it("keeps members to their own schedules and their own channels; admins manage everyone's", async () => {
    const w = await world();
    const mine = await expectJson<ScheduleView>(
      await call(w.s.url, "/api/schedules", { session: w.member, body: agentSchedule(w.room.id) }),
      201,
    );
    expect(mine).toMatchObject({
      ownerId: w.member.userId,
      enabled: true,
      missedPolicy: "skip",
      running: false,
      nextRunAt: Date.parse("2025-06-02T01:00:00Z"),
    });

    const intrude = await call(w.s.url, "/api/schedules", {
      session: w.member,
      body: agentSchedule(w.secret.id),
    });
    expect(intrude.status).toBe(404);
    const guest = await call(w.s.url, "/api/schedules", { session: w.guest, body: agentSchedule(w.room.id) });
    expect(guest.status).toBe(403);

    const path = `/api/schedules/${mine.id}`;
    expect(
      await expectJson<ScheduleView[]>(await call(w.s.url, "/api/schedules", { session: w.other }), 200),
    ).toEqual([]);
    for (const [method, suffix] of [
      ["GET", ""],
      ["PATCH", ""],
      ["DELETE", ""],
      ["POST", "/run"],
      ["GET", "/runs"],
    ] as const) {
      const res = await call(w.s.url, path + suffix, {
        session: w.other,
        method,
        ...(method === "PATCH" ? { body: { enabled: false } } : {}),
      });
      // Someone else's schedule answers as a missing one.
      expect(res.status, `${method} ${suffix}`).toBe(404);
    }

    const all = await expectJson<ScheduleView[]>(
      await call(w.s.url, "/api/schedules", { session: w.owner }),
      200,
    );
    expect(all.map((s) => s.id)).toEqual([mine.id]);
    const disabled = await expectJson<ScheduleView>(
      await call(w.s.url, path, { session: w.owner, method: "PATCH", body: { enabled: false } }),
      200,
    );
    expect(disabled.enabled).toBe(false);
    expect(disabled.nextRunAt).toBeUndefined();

    // Moving the target to a channel the owner of the schedule cannot see is refused, even by an admin.
    const moved = await call(w.s.url, path, {
      session: w.owner,
      method: "PATCH",
      body: { target: { type: "agent", agentId: "writer", channelId: w.secret.id, prompt: "x" } },
    });
    expect(moved.status).toBe(404);

    const retimed = await expectJson<ScheduleView>(
      await call(w.s.url, path, {
        session: w.member,
        method: "PATCH",
        body: {
          enabled: true,
          timing: { kind: "cron", expression: "30 8 * * *", timezone: "Europe/Berlin" },
        },
      }),
      200,
    );
    expect(retimed.nextRunAt).toBe(Date.parse("2025-06-02T06:30:00Z"));

    expect((await call(w.s.url, path, { session: w.member, method: "DELETE" })).status).toBe(204);
    expect((await call(w.s.url, path, { session: w.member })).status).toBe(404);
  });

  it("runs on time and on demand; the runs list the agent's answer, and the answer is in the channel", async () => {
    const w = await world();
    scripts.add("writer", { text: "first digest" }, { text: "second digest" });
    const schedule = await expectJson<ScheduleView>(
      await call(w.s.url, "/api/schedules", { session: w.member, body: agentSchedule(w.room.id) }),
      201,
    );
    const { scheduler } = w.s.scheduling;
    await w.s.clock.advanceTo("2025-06-02T01:00:00Z");
    await scheduler.settled();

    const started = await expectJson<ScheduleRunRecord>(
      await call(w.s.url, `/api/schedules/${schedule.id}/run`, { session: w.member, method: "POST" }),
      202,
    );
    expect(started).toMatchObject({ status: "running", trigger: "manual" });
    await scheduler.waitForRun(started.id);

    const runs = await expectJson<ScheduleRunRecord[]>(
      await call(w.s.url, `/api/schedules/${schedule.id}/runs?limit=10`, { session: w.member }),
      200,
    );
    expect(runs.map((r) => [r.trigger, r.status, r.output])).toEqual([
      ["manual", "done", "second digest"],
      ["schedule", "done", "first digest"],
    ]);
    const messages = await expectJson<ChannelMessage[]>(
      await call(w.s.url, `/api/channels/${w.room.id}/messages`, { session: w.member }),
      200,
    );
    expect(messages.filter((m) => m.author.type === "agent").map((m) => m.text)).toEqual([
      "first digest",
      "second digest",
    ]);
    const badLimit = await call(w.s.url, `/api/schedules/${schedule.id}/runs?limit=0`, { session: w.member });
    expect(badLimit.status).toBe(400);
  });
});
