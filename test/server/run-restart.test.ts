/**
 * A chat answer outlives its process: `dimsum serve` (SQLite) is killed with SIGKILL in the middle of
 * an answer and started again over the same home; the answer goes on from its last checkpoint and
 * ends `done` in one message. A tool call that was running is not run again blindly: the model reads
 * that it was interrupted by a restart. A model call that was streaming is simply made again.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { ChannelMessage, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir, waitFor } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "run-restart-password";

let fake: FakeLlmServer;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  fake = await startFakeLlmServer({ defaultTurn: { text: "default answer" } });
});
afterAll(async () => fake.close());
afterEach(async () => kill());

async function start(home: string): Promise<{ url: string; owner: Session }> {
  serve = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-test-restart",
    OPENAI_BASE_URL: `${fake.url}/v1`,
  });
  return { url: serve.url, owner: await login(serve.url, "owner", PASSWORD) };
}

/** A crash: SIGKILL, no shutdown work. */
async function kill(): Promise<void> {
  const child = serve;
  serve = undefined;
  await child?.stop("SIGKILL");
}

async function json<T>(res: Response): Promise<T> {
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as T;
}

/** A direct chat with the starter assistant; posts `text` and returns the run id. */
async function ask(url: string, owner: Session, text: string): Promise<{ channelId: string; runId: string }> {
  const channel = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "Restart",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
  );
  const posted = await json<{ runs: TeamRun[] }>(
    await call(url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text } }),
  );
  return { channelId: channel.id, runId: posted.runs[0]!.id };
}

async function finished(url: string, owner: Session, runId: string): Promise<TeamRun> {
  for (;;) {
    const run = await json<TeamRun>(await call(url, `/api/runs/${runId}`, { session: owner }));
    if (["done", "error", "cancelled"].includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function toolResults(index: number): Array<{ tool_call_id: string; content: string }> {
  const body = fake.requests[index]?.body as {
    messages: Array<{ role: string; tool_call_id: string; content: string }>;
  };
  return body.messages.filter((m) => m.role === "tool");
}

it("resumes an answer killed during a tool call: the call is answered once, with the restart note", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-tool-");
  fake.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  fake.enqueue({ text: "done after the restart" });
  let { url, owner } = await start(home);
  const { channelId, runId } = await ask(url, owner, "run the long job");
  await waitFor(() => (fake.requests.length >= 1 ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
  await kill();

  ({ url, owner } = await start(home));
  const run = await finished(url, owner, runId);
  expect(run.status).toBe("done");
  expect(fake.requests).toHaveLength(2);
  const results = toolResults(1);
  expect(results).toHaveLength(1);
  expect(results[0]).toMatchObject({ tool_call_id: "call_sleep" });
  expect(results[0]?.content).toMatch(/Interrupted by a restart/);
  const messages = await json<ChannelMessage[]>(
    await call(url, `/api/channels/${channelId}/messages`, { session: owner }),
  );
  const answers = messages.filter((m) => m.runId === runId);
  expect(answers).toHaveLength(1);
  expect(answers[0]?.text).toContain("done after the restart");
  // The person sees that the answer was resumed.
  expect(answers[0]?.parts).toContainEqual({ type: "resumed", reason: "restart" });
}, 60_000);

it("resumes an answer killed while the model streamed: the model call is made again", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-stream-");
  fake.enqueue({ text: "a slow answer that never finishes", stall: { afterChunks: 2, mode: "silent" } });
  fake.enqueue({ text: "the answer, after the restart" });
  let { url, owner } = await start(home);
  const { runId } = await ask(url, owner, "tell me something");
  await waitFor(() => (fake.requests.length >= 1 ? true : undefined));
  await new Promise((r) => setTimeout(r, 500));
  await kill();

  ({ url, owner } = await start(home));
  const run = await finished(url, owner, runId);
  expect(run.status).toBe("done");
  expect(fake.requests).toHaveLength(2);
}, 60_000);
