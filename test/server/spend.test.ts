/**
 * Cost on every answer and spend from stored usage, over HTTP: each run keeps the model that answered
 * and its cost; a channel's runs are readable by whoever sees the channel; `/api/spend` sums a
 * member's own runs and, for admins, everyone's, per day and provider and per day and agent.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SpendReport } from "../../src/team/spend.js";
import type { ChannelRecord, PostResult, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok", usage: { input: 2000, output: 100 } } });
});
afterAll(async () => {
  await llm.close();
});

async function ask(base: string, session: Session, channel: string, text: string): Promise<TeamRun> {
  const posted = await expectJson<PostResult>(
    await call(base, `/api/channels/${channel}/messages`, { session, body: { text } }),
    201,
  );
  const runId = posted.runs[0]!.id;
  for (let i = 0; i < 200; i++) {
    const run = await expectJson<TeamRun>(await call(base, `/api/runs/${runId}`, { session }), 200);
    if (run.status === "done" || run.status === "error") return run;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`run ${runId} did not end`);
}

it("keeps each answer's model and cost and sums spend with rights checks", async () => {
  const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
  const { owner, users } = await withUsers(s.url, ["member"]);
  const member = users.member!;
  const channel = async (session: Session, name: string) =>
    expectJson<ChannelRecord>(
      await call(s.url, "/api/channels", {
        session,
        body: { kind: "group", name, agentIds: ["assistant"], userIds: [] },
      }),
      201,
    );
  const mine = await channel(member, "Mine");
  const theirs = await channel(owner, "Theirs");

  const answered = await ask(s.url, member, mine.id, "@assistant hello");
  expect(answered.status).toBe("done");
  await ask(s.url, owner, theirs.id, "@assistant hello too");
  await ask(s.url, owner, theirs.id, "@assistant and again");

  // gpt-4o-mini: 2,000 input tokens at $0.15/M and 100 output at $0.60/M.
  const runs = await expectJson<TeamRun[]>(
    await call(s.url, `/api/channels/${mine.id}/runs`, { session: member }),
    200,
  );
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ id: answered.id, model: "openai:gpt-4o-mini", agentId: "assistant" });
  expect(runs[0]?.usage).toMatchObject({ inputTokens: 2000, outputTokens: 100 });
  expect(runs[0]?.costUsd).toBeCloseTo(0.00036, 8);
  expect(runs[0]?.endedAt).toBeGreaterThanOrEqual(runs[0]?.startedAt ?? Number.POSITIVE_INFINITY);

  // A channel the member is not in: no runs for them.
  expect((await call(s.url, `/api/channels/${theirs.id}/runs`, { session: member })).status).toBe(404);

  const own = await expectJson<SpendReport>(await call(s.url, "/api/spend?days=7", { session: member }), 200);
  expect(own.scope).toBe("own");
  expect(own.totals.runs).toBe(1);
  expect(own.byProvider).toEqual([expect.objectContaining({ key: "openai", runs: 1, inputTokens: 2000 })]);

  const all = await expectJson<SpendReport>(await call(s.url, "/api/spend?days=7", { session: owner }), 200);
  expect(all.scope).toBe("all");
  expect(all.totals.runs).toBe(3);
  expect(all.totals.costUsd).toBeCloseTo(3 * 0.00036, 8);
  expect(all.byAgent).toEqual([expect.objectContaining({ key: "assistant", runs: 3, outputTokens: 300 })]);
  expect(all.byAgent[0]?.day).toBe(new Date().toISOString().slice(0, 10));

  expect((await call(s.url, "/api/spend?days=0", { session: owner })).status).toBe(400);
  expect((await call(s.url, "/api/spend")).status).toBe(401);
});
