/**
 * A chat answer outlives its process: `dimsum serve` (SQLite) is killed with SIGKILL in the middle of
 * an answer and started again over the same home; the answer goes on from its last checkpoint and
 * ends `done` in one message. A tool call that was running is not run again blindly: the model reads
 * that it was interrupted by a restart. A model call that was streaming is simply made again.
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { ChannelMessage, MessagePart, TeamRun } from "../../src/team/types.js";
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

/** The stored answer of the run (exactly one). */
async function answerOf(
  url: string,
  owner: Session,
  channelId: string,
  runId: string,
): Promise<ChannelMessage> {
  const messages = await json<ChannelMessage[]>(
    await call(url, `/api/channels/${channelId}/messages`, { session: owner }),
  );
  const answers = messages.filter((m) => m.runId === runId);
  expect(answers).toHaveLength(1);
  return answers[0] as ChannelMessage;
}

/** The answer's parts, tool parts as `tool:<call id>:<status>`, others by type. */
function shapeOf(parts: readonly MessagePart[]): string[] {
  return parts.map((p) => (p.type === "tool" ? `tool:${p.callId}:${p.status}` : p.type));
}

it("keeps in the resumed answer the tool call of the step before the crash", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-steps-");
  fake.enqueue({
    text: "First I look.",
    toolCalls: [{ id: "call_first", name: "execute_command", args: { command: "echo step-one-ran" } }],
  });
  fake.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  fake.enqueue({ text: "done after the restart" });
  let { url, owner } = await start(home);
  const { channelId, runId } = await ask(url, owner, "two steps please");
  await waitFor(() => (fake.requests.length >= 2 ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
  await kill();

  ({ url, owner } = await start(home));
  expect((await finished(url, owner, runId)).status).toBe("done");
  const answer = await answerOf(url, owner, channelId, runId);
  expect(shapeOf(answer.parts)).toEqual([
    "text",
    "tool:call_first:ok",
    expect.stringMatching(/^tool:call_sleep:/),
    "resumed",
    "text",
  ]);
  const first = answer.parts[1] as Extract<MessagePart, { type: "tool" }>;
  expect(first).toMatchObject({ name: "execute_command", args: { command: "echo step-one-ran" } });
  expect(first.output).toContain("step-one-ran");
  expect(answer.text).toContain("First I look.");
  expect(answer.text).toContain("done after the restart");
}, 60_000);

it("keeps in the resumed answer parallel tool calls that both finished before the crash", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-parallel-");
  fake.enqueue({
    toolCalls: [
      { id: "call_a", name: "execute_command", args: { command: "echo alpha" } },
      { id: "call_b", name: "execute_command", args: { command: "echo beta" } },
    ],
  });
  fake.enqueue({ text: "a slow summary that never finishes", stall: { afterChunks: 2, mode: "silent" } });
  fake.enqueue({ text: "the summary, after the restart" });
  let { url, owner } = await start(home);
  const { channelId, runId } = await ask(url, owner, "two things at once");
  await waitFor(() => (fake.requests.length >= 2 ? true : undefined));
  await new Promise((r) => setTimeout(r, 500));
  await kill();

  ({ url, owner } = await start(home));
  expect((await finished(url, owner, runId)).status).toBe("done");
  const answer = await answerOf(url, owner, channelId, runId);
  expect(shapeOf(answer.parts)).toEqual(["tool:call_a:ok", "tool:call_b:ok", "resumed", "text"]);
  expect(answer.text).toBe("the summary, after the restart");
}, 60_000);

it("keeps a given-up answer in the chat with its error, partial text and tool calls after three kills", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-give-up-");
  for (let i = 1; i <= 3; i++) {
    fake.enqueue({
      text: `Attempt ${i}.`,
      // Other arguments each time: the repeated-call guard would refuse the same call a third time.
      toolCalls: [{ id: `call_${i}`, name: "execute_command", args: { command: `sleep 3${i}` } }],
    });
  }
  let { url, owner } = await start(home);
  const { channelId, runId } = await ask(url, owner, "a job that keeps crashing the server");
  for (let kills = 1; kills <= 3; kills++) {
    // Killed while the tool of the model's `kills`-th answer runs.
    await waitFor(() => (fake.requests.length >= kills ? true : undefined));
    await new Promise((r) => setTimeout(r, 1500));
    await kill();
    ({ url, owner } = await start(home));
  }
  const run = await finished(url, owner, runId);
  expect(run.status).toBe("error");
  expect(run.error).toMatch(/given up after 2 resumes/);
  expect(fake.requests).toHaveLength(3);
  const answer = await answerOf(url, owner, channelId, runId);
  // Each call the restarts interrupted is there with its result; the last one never got one.
  expect(shapeOf(answer.parts)).toEqual([
    "text",
    expect.stringMatching(/^tool:call_1:/),
    "text",
    expect.stringMatching(/^tool:call_2:/),
    "text",
    "tool:call_3:error",
    "error",
  ]);
  expect(answer.parts.at(-1)).toMatchObject({
    type: "error",
    message: expect.stringMatching(/runs\.maxResumes/),
  });
  expect(answer.text).toContain("Attempt 1.");
  expect(answer.text).toContain("Attempt 3.");
  expect(answer.replyTo).toBeDefined();
}, 120_000);
