/**
 * Budgets over a real server and SQLite file: a person with a hard limit of $0.01 is refused the
 * answer that would pass it (with what to do), and sees what remains; past a soft limit the answer
 * uses the budget's cheaper model; members cannot see or change others' budgets; every change is
 * in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, flush, openSocket, startTeamServer, type TeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;

// gpt-4o-mini: 40,000 input tokens at $0.15/M = $0.006 an answer.
beforeAll(async () => {
  llm = await startFakeLlmServer({
    defaultTurn: () => ({ text: "done", usage: { input: 40_000, output: 0 } }),
  });
});
afterAll(async () => {
  await llm.close();
});

async function ask(s: TeamServer, who: Session, text: string): Promise<TeamRun> {
  const channel = await expectJson<{ id: string }>(
    await call(s.url, "/api/channels", {
      session: who,
      body: { kind: "direct", name: text, leaderAgentId: "assistant", agentIds: ["assistant"], userIds: [] },
    }),
    201,
  );
  const posted = await expectJson<{ runs: TeamRun[] }>(
    await call(s.url, `/api/channels/${channel.id}/messages`, { session: who, body: { text } }),
    201,
  );
  for (;;) {
    const run = await expectJson<TeamRun>(
      await call(s.url, `/api/runs/${posted.runs[0]?.id}`, { session: who }),
      200,
    );
    if (run.status === "done" || run.status === "error") return run;
    await new Promise((r) => setTimeout(r, 25));
  }
}

interface Status {
  id: string;
  spent: number;
  remaining: number | null;
  hardLimit: number | null;
}

describe("budgets", () => {
  it("refuse the answer that would pass a hard limit of $0.01, and move past a soft limit to the cheaper model", async () => {
    const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
    const { owner, users } = await withUsers(s.url, ["member", "admin"]);
    const member = users.member!;
    const other = users.admin!;

    const hard = { scope: "person", scopeId: member.userId, period: "day", unit: "usd", hardLimit: 0.01 };
    expect((await call(s.url, "/api/budgets", { session: member, body: hard })).status).toBe(403);
    const bad = await call(s.url, "/api/budgets", { session: owner, body: { ...hard, hardLimit: null } });
    expect(bad.status).toBe(400);
    const budget = await expectJson<{ id: string }>(
      await call(s.url, "/api/budgets", { session: owner, body: hard }),
      201,
    );
    expect((await call(s.url, "/api/budgets", { session: owner, body: hard })).status).toBe(409);

    const first = await ask(s, member, "first");
    expect(first).toMatchObject({ status: "done", costUsd: expect.closeTo(0.006, 6) });
    const mine = await expectJson<Status[]>(await call(s.url, "/api/budgets/mine", { session: member }), 200);
    expect(mine).toEqual([
      expect.objectContaining({
        id: budget.id,
        spent: expect.closeTo(0.006, 6),
        remaining: expect.closeTo(0.004, 6),
      }),
    ]);

    // The next answer would cost about as much: $0.012 > $0.01. Refused before any model call.
    const calls = llm.requests.length;
    const refused = await ask(s, member, "second");
    expect(refused.status).toBe("error");
    expect(refused.error).toContain("your daily budget of $0.01 is spent ($0.006 used");
    expect(llm.requests.length).toBe(calls);
    const chat = await expectJson<
      Array<{ parts?: Array<{ type: string; message?: string; hint?: string }> }>
    >(await call(s.url, `/api/channels/${refused.channelId}/messages`, { session: member }), 200);
    expect(JSON.stringify(chat)).toContain("Settings → Spend");
    // The same through `/v1`: a 429 that says why.
    const token = await expectJson<{ token: string }>(
      await call(s.url, "/api/tokens", { session: member, body: { name: "script" } }),
      201,
    );
    const completion = await fetch(`${s.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "hello" }] }),
    });
    expect(completion.status).toBe(429);
    expect(await completion.text()).toContain("daily budget of $0.01 is spent");
    // Someone else is not held to it.
    expect((await ask(s, other, "other")).status).toBe("done");

    // Soft limit: past $0.005, answers use the cheaper model.
    const soft = await expectJson<{ id: string }>(
      await call(s.url, "/api/budgets", {
        session: owner,
        body: {
          scope: "person",
          scopeId: other.userId,
          period: "month",
          unit: "usd",
          softLimit: 0.005,
          hardLimit: 1,
          cheaperModel: "openai:gpt-test-cheap",
        },
      }),
      201,
    );
    const before = llm.requests.length;
    await ask(s, other, "still the usual model");
    expect((llm.requests[before]?.body as { model?: string } | undefined)?.model).toBe("gpt-4o-mini");
    const cheap = await ask(s, other, "now the cheaper one");
    expect(cheap.status).toBe("done");
    expect((llm.requests.at(-1)?.body as { model?: string } | undefined)?.model).toBe("gpt-test-cheap");
    expect(cheap.model).toBe("openai:gpt-test-cheap");
    // The answer says why it moved.
    const answer = await expectJson<Array<{ runId?: string; parts?: Array<Record<string, unknown>> }>>(
      await call(s.url, `/api/channels/${cheap.channelId}/messages`, { session: other }),
      200,
    );
    expect(answer.flatMap((m) => m.parts ?? [])).toContainEqual(
      expect.objectContaining({
        type: "model_fallback",
        to: "openai:gpt-test-cheap",
        skipped: true,
        reason: expect.stringContaining("your monthly budget passed its soft limit of $0.005 ($0.006 used)"),
      }),
    );

    // Raised: the member answers again. Removed: no limit.
    await expectJson(
      await call(s.url, `/api/budgets/${budget.id}`, {
        session: owner,
        method: "PUT",
        body: { ...hard, hardLimit: 0.02 },
      }),
      200,
    );
    expect((await ask(s, member, "third")).status).toBe("done");
    expect((await call(s.url, `/api/budgets/${soft.id}`, { session: owner, method: "DELETE" })).status).toBe(
      204,
    );
    const all = await expectJson<Status[]>(await call(s.url, "/api/budgets", { session: owner }), 200);
    expect(all.map((b) => b.id)).toEqual([budget.id]);
    expect(all[0]?.spent).toBeCloseTo(0.012, 6);

    const audit = await expectJson<{ entries: Array<{ action: string; before: unknown }> }>(
      await call(s.url, "/api/audit?action=budget", { session: owner }),
      200,
    );
    expect(audit.entries.map((e) => e.action)).toEqual([
      "budget.delete",
      "budget.update",
      "budget.create",
      "budget.create",
    ]);
    expect(audit.entries[1]?.before).toMatchObject({ hardLimit: 0.01 });
  }, 60_000);

  it("tell a soft limit passed to the person and to owners and admins live, once, and to nobody else", async () => {
    const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
    const { owner, users } = await withUsers(s.url, ["member", "admin", "guest"]);
    const member = users.member!;
    await expectJson(
      await call(s.url, "/api/budgets", {
        session: owner,
        body: {
          scope: "person",
          scopeId: member.userId,
          period: "month",
          unit: "tokens",
          softLimit: 30_000,
          cheaperModel: "openai:gpt-test-cheap",
        },
      }),
      201,
    );
    const sockets = {
      owner: await openSocket(s, owner),
      admin: await openSocket(s, users.admin!),
      member: await openSocket(s, member),
      guest: await openSocket(s, users.guest!),
    };
    // 40,000 tokens an answer: the first passes 30,000; the second is past it already.
    await ask(s, member, "first");
    await ask(s, member, "second");
    for (const socket of Object.values(sockets)) await flush(socket);
    const notices = (who: keyof typeof sockets) =>
      sockets[who].frames.filter((f) => f.type === "budget_notice");
    for (const who of ["owner", "admin", "member"] as const) {
      expect(notices(who)).toEqual([
        expect.objectContaining({
          notice: expect.objectContaining({
            scope: "person",
            scopeId: member.userId,
            unit: "tokens",
            softLimit: 30_000,
            spent: 40_000,
            cheaperModel: "openai:gpt-test-cheap",
          }),
        }),
      ]);
    }
    expect(notices("guest")).toEqual([]);
    for (const socket of Object.values(sockets)) socket.ws.close();
  }, 60_000);
});
