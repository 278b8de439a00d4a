/**
 * Every run keeps the model it used, whatever kind it is and however it ends: a collaboration flow's
 * steps (so Spend counts them under their provider, with their cost) and an answer stopped midway
 * (Esc in the chat), not only chat answers that finished.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { SpendReport } from "../../src/team/spend.js";
import type { ChannelRecord, FlowRecord, PostResult, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok", usage: { input: 2000, output: 100 } } });
});
afterAll(async () => {
  await llm.close();
});

it("keeps the model and cost of each flow step, counted under its provider in Spend", async () => {
  const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
  const { owner } = await withUsers(s.url);
  const group = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Flow", agentIds: ["assistant"], userIds: [] },
    }),
    201,
  );
  await expectJson(
    await call(s.url, `/api/channels/${group.id}/chain`, {
      session: owner,
      method: "PUT",
      body: { steps: [{ agentId: "assistant" }, { agentId: "assistant" }] },
    }),
    200,
  );
  const posted = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${group.id}/messages`, {
      session: owner,
      body: { text: "/flow launch a plan" },
    }),
    201,
  );
  const flowId = posted.flow?.id as string;
  for (let i = 0; i < 400; i++) {
    const flow = await expectJson<FlowRecord>(
      await call(s.url, `/api/flows/${flowId}`, { session: owner }),
      200,
    );
    if (flow.status === "done") break;
    expect(flow.status).not.toBe("failed");
    await new Promise((r) => setTimeout(r, 25));
  }
  const runs = await expectJson<TeamRun[]>(
    await call(s.url, `/api/channels/${group.id}/runs`, { session: owner }),
    200,
  );
  const steps = runs.filter((r) => r.flowId === flowId);
  expect(steps).toHaveLength(2);
  for (const step of steps) {
    expect(step).toMatchObject({ status: "done", model: "openai:gpt-4o-mini" });
    // gpt-4o-mini: 2,000 input tokens at $0.15/M and 100 output at $0.60/M.
    expect(step.costUsd).toBeCloseTo(0.00036, 8);
  }
  const spend = await expectJson<SpendReport>(
    await call(s.url, "/api/spend?days=7", { session: owner }),
    200,
  );
  expect(spend.byProvider.map((p) => p.key)).toEqual(["openai"]);
  expect(spend.totals.costUsd).toBeCloseTo(2 * 0.00036, 8);
});

it("keeps the model of an answer stopped while it streamed", async () => {
  const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
  const { owner } = await withUsers(s.url);
  const chat = await expectJson<ChannelRecord>(
    await call(s.url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "Stop",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
    201,
  );
  const before = llm.requests.length;
  llm.enqueue({ text: "a very slow answer", delayMs: 60_000 });
  const posted = await expectJson<PostResult>(
    await call(s.url, `/api/channels/${chat.id}/messages`, { session: owner, body: { text: "go slowly" } }),
    201,
  );
  const runId = posted.runs[0]?.id as string;
  for (let i = 0; i < 400 && llm.requests.length === before; i++) await new Promise((r) => setTimeout(r, 25));
  const stopped = await expectJson<TeamRun>(
    await call(s.url, `/api/runs/${runId}/cancel`, { session: owner, method: "POST" }),
    200,
  );
  expect(stopped.status).toBe("cancelled");
  const run = await expectJson<TeamRun>(await call(s.url, `/api/runs/${runId}`, { session: owner }), 200);
  expect(run).toMatchObject({ status: "cancelled", model: "openai:gpt-4o-mini" });
});
