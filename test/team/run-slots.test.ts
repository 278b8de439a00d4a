/**
 * One instance holds at most `runs.concurrency` live chat answers (the backstop); the others wait (in
 * order), as jobs do on several instances.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { alice, TeamHarness } from "./harness.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => server.close());

it("holds a chat answer until a slot is free when runs.concurrency answers are running", async () => {
  const h = new TeamHarness(server, {}, (config) => {
    config.runs = { ...config.runs, concurrency: 1 };
  });
  try {
    server.enqueue({ text: "first", delayMs: 300 }, { text: "second" });
    const chat = (name: string) =>
      h.team.createChannel(alice, {
        kind: "direct",
        name,
        leaderAgentId: "writer",
        agentIds: ["writer"],
        userIds: [],
      });
    const one = await chat("one");
    const two = await chat("two");
    const first = (await h.team.postMessage(alice, one.id, "first")).runs[0]!.id;
    const second = (await h.team.postMessage(alice, two.id, "second")).runs[0]!.id;
    expect((await h.finished(second)).status).toBe("done");
    // The second answer's turn began only once the first answer had ended.
    const at = (runId: string, test: (type: string) => boolean) =>
      h.events.findIndex((e) => e.type === "agent" && e.runId === runId && test(e.event.type));
    const firstEnded = at(first, (t) => t === "done");
    const secondBegan = at(second, (t) => t === "run_start");
    expect(firstEnded).toBeGreaterThanOrEqual(0);
    expect(secondBegan).toBeGreaterThan(firstEnded);
  } finally {
    await h.close();
  }
});
