/**
 * A live answer resumed by a restarted `dimsum serve` (SQLite, SIGKILL) numbers its events after
 * everything the dead process sent (issue 34, item 9): a page that saw the old process stream, and
 * resubscribes with the last number it saw, is sent the new process's events from its first one
 * (the restart mark), none taken for a repeat, and their text is the resumed answer's.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { RESTART_SEQ_BLOCK } from "../../src/team/agent-runner.js";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";
import { connect, type Frame, type TestClient } from "./ws-helpers.js";

const PASSWORD = "run-restart-password";
let fake: FakeLlmServer;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  fake = await startFakeLlmServer({ defaultTurn: { text: "default answer" }, chunkSize: 4 });
});
afterAll(async () => fake.close());
afterEach(async () => {
  await serve?.stop("SIGKILL");
  serve = undefined;
});

async function start(home: string): Promise<{ url: string; owner: Session }> {
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-test-restart",
    OPENAI_BASE_URL: `${fake.url}/v1`,
  });
  return { url: serve.url, owner: await login(serve.url, "owner", PASSWORD) };
}

async function socket(url: string, owner: Session): Promise<TestClient> {
  const client = connect(url, { cookie: owner.cookie, origin: new URL(url).origin });
  await client.next((f) => f.type === "ready");
  return client;
}

const agentFrames = (client: TestClient, runId: string) =>
  client.frames.filter(
    (f): f is Frame & { seq: number; event: { type: string; text?: string } } =>
      f.type === "agent" && f.runId === runId,
  );

it("numbers the resumed answer's events after the dead process's, so a resubscribed page gets them all", async () => {
  const home = tempDir("dimsum-restart-seq-");
  fake.enqueue({
    text: "Slow line 1 of 50. Slow line 2 of 50. Slow line 3 of 50.",
    stall: { afterChunks: 6, mode: "silent" },
  });
  fake.enqueue({ text: "the answer, after the restart" });
  let { url, owner } = await start(home);
  const channel = (await (
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "Restart",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    })
  ).json()) as { id: string };
  const before = await socket(url, owner);
  before.send({ type: "subscribe", channelId: channel.id });
  const posted = (await (
    await call(url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text: "count" } })
  ).json()) as { runs: TeamRun[] };
  const runId = posted.runs[0]!.id;
  // The page saw the old process stream some text.
  await before.next(
    (f) => f.type === "agent" && f.runId === runId && (f.event as { type: string }).type === "text_delta",
  );
  const seen = Math.max(...agentFrames(before, runId).map((f) => f.seq));
  await serve?.stop("SIGKILL");

  ({ url, owner } = await start(home));
  const after = await socket(url, owner);
  // Resubscribes as the page does: the last message id and the last event number it saw of the run.
  after.send({ type: "subscribe", channelId: channel.id, since: 0, runs: { [runId]: seen } });
  await after.next(
    (f) => f.type === "run" && (f.run as TeamRun).id === runId && (f.run as TeamRun).status === "done",
  );
  const frames = agentFrames(after, runId);
  expect(frames.length).toBeGreaterThan(0);
  expect(Math.min(...frames.map((f) => f.seq))).toBeGreaterThan(RESTART_SEQ_BLOCK);
  // From its start on: the run's start, then the restart mark the page resets on.
  expect(frames.slice(0, 2).map((f) => f.event)).toMatchObject([
    { type: "run_start" },
    { type: "resumed", reason: "restart" },
  ]);
  const text = frames.flatMap((f) => (f.event.type === "text_delta" ? [f.event.text] : [])).join("");
  expect(text).toBe("the answer, after the restart");
  after.ws.close();
  before.ws.close();
}, 60_000);
