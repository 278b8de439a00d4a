/**
 * `GET /api/runs/queue`: the answers waiting to start on this instance, their wait and what holds them,
 * for owners and admins only.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { RunQueueStats } from "../../src/team/run-admission.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

let llm: FakeLlmServer;
beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => {
  await llm.close();
});

it("shows the run queue to owners and admins, and refuses members", async () => {
  const s = await startTeamServer({ llmUrl: llm.url, env: { DIMSUM_MODEL: "openai:gpt-4o-mini" } });
  try {
    const { owner, users } = await withUsers(s.url, ["member"]);
    const queue = await expectJson<RunQueueStats>(
      await call(s.url, "/api/runs/queue", { session: owner }),
      200,
    );
    expect(queue).toMatchObject({
      queued: 0,
      oldestWaitMs: 0,
      limits: { maxLive: 1000, maxLoopDelayMs: 50 },
    });
    expect(typeof queue.load.loopDelayMs).toBe("number");
    expect(queue.load.heapShare).toBeGreaterThan(0);
    const refused = await call(s.url, "/api/runs/queue", { session: users.member! });
    expect(refused.status).toBe(403);
  } finally {
    await s.team.close();
  }
});
