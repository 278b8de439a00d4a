/**
 * Runs other than chat answers outlive their process too (issue 34, item 18): `dimsum serve` (SQLite)
 * is killed with SIGKILL and started again over the same home. A flow step goes on from its
 * checkpoint and the flow then runs its next step; a call_agent run goes on inside its caller's
 * resumed call (its finished tool call is not run again, its interrupted one is said to be); a /v1
 * completion, whose client connection died with the process, ends with an error saying so.
 */

import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import type { ChannelMessage, FlowRecord, MessagePart, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir } from "./helpers.js";
import { type ServeProcess, startServe } from "./serve-process.js";

const PASSWORD = "run-restart-kinds-password";

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
    OPENAI_API_KEY: "sk-test-restart-kinds",
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

/** Reads until `read` gives a value; fails after `timeoutMs`. */
async function until<T>(read: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until the model was asked `count` times, then a little longer (the tool it called runs). */
async function asked(count: number): Promise<void> {
  await until(() => (fake.requests.length >= count ? true : undefined));
  await new Promise((r) => setTimeout(r, 1500));
}

function toolResults(index: number): Array<{ tool_call_id: string; content: string }> {
  const body = fake.requests[index]?.body as {
    messages: Array<{ role: string; tool_call_id: string; content: string }>;
  };
  return body.messages.filter((m) => m.role === "tool");
}

/** The answer's parts, tool parts as `tool:<call id>:<status>`, others by type. */
function shapeOf(parts: readonly MessagePart[]): string[] {
  return parts.map((p) => (p.type === "tool" ? `tool:${p.callId}:${p.status}` : p.type));
}

it("resumes a flow step killed during a tool call, then runs the next step", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-flow-");
  fake.enqueue({
    text: "Looking.",
    toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo step-zero-ran" } }],
  });
  fake.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  fake.enqueue({ text: "step zero done" });
  fake.enqueue({ text: "step one done" });
  let { url, owner } = await start(home);
  const group = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: { kind: "group", name: "Chain", agentIds: ["assistant", "coder"], userIds: [] },
    }),
  );
  await json(
    await call(url, `/api/channels/${group.id}/chain`, {
      session: owner,
      method: "PUT",
      body: {
        steps: [
          { agentId: "assistant", requiresApproval: false },
          { agentId: "coder", requiresApproval: false },
        ],
      },
    }),
  );
  const posted = await json<{ flow: FlowRecord; runs: TeamRun[] }>(
    await call(url, `/api/channels/${group.id}/messages`, {
      session: owner,
      body: { text: "/flow build it" },
    }),
  );
  const flowId = posted.flow.id;
  const stepRun = posted.runs[0]!.id;
  await asked(2);
  await kill();

  ({ url, owner } = await start(home));
  const flow = await until(async () => {
    const read = await json<FlowRecord>(await call(url, `/api/flows/${flowId}`, { session: owner }));
    return read.status === "running" ? undefined : read;
  });
  expect(flow.status).toBe("done");
  expect(flow.steps.map((s) => [s.status, s.output])).toEqual([
    ["completed", "step zero done"],
    ["completed", "step one done"],
  ]);
  // The step went on in the same run, from its checkpoint: the echo ran once, the sleep was cut off.
  expect(flow.steps[0]?.runId).toBe(stepRun);
  expect(fake.requests).toHaveLength(4);
  const results = toolResults(2);
  expect(results.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
  expect(results[1]?.content).toMatch(/Interrupted by a restart/);
  expect((await json<TeamRun>(await call(url, `/api/runs/${stepRun}`, { session: owner }))).status).toBe(
    "done",
  );
  const messages = await json<ChannelMessage[]>(
    await call(url, `/api/channels/${group.id}/messages`, { session: owner }),
  );
  const step = messages.filter((m) => m.runId === stepRun);
  expect(step).toHaveLength(1);
  expect(shapeOf(step[0]!.parts)).toEqual([
    "text",
    "tool:call_echo:ok",
    expect.stringMatching(/^tool:call_sleep:/),
    "resumed",
    "text",
  ]);
}, 90_000);

it("resumes a call_agent run killed during its tool call inside its caller's resumed answer", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-nested-");
  fake.enqueue({
    toolCalls: [{ id: "call_ask", name: "call_agent", args: { agentId: "coder", task: "count the files" } }],
  });
  fake.enqueue({
    toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo nested-ran" } }],
  });
  fake.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  fake.enqueue({ text: "coder's answer" });
  fake.enqueue({ text: "the final answer" });
  let { url, owner } = await start(home);
  const channel = await json<{ id: string }>(
    await call(url, "/api/channels", {
      session: owner,
      body: {
        kind: "direct",
        name: "Nested",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      },
    }),
  );
  const posted = await json<{ runs: TeamRun[] }>(
    await call(url, `/api/channels/${channel.id}/messages`, {
      session: owner,
      body: { text: "ask coder" },
    }),
  );
  const runId = posted.runs[0]!.id;
  await asked(3);
  await kill();

  ({ url, owner } = await start(home));
  const run = await until(async () => {
    const read = await json<TeamRun>(await call(url, `/api/runs/${runId}`, { session: owner }));
    return ["done", "error", "cancelled"].includes(read.status) ? read : undefined;
  });
  expect(run.status).toBe("done");
  expect(fake.requests).toHaveLength(5);
  // The called agent went on first: its echo is not run again, its sleep was cut off.
  const nested = toolResults(3);
  expect(nested.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
  expect(nested[0]?.content).toContain("nested-ran");
  expect(nested[1]?.content).toMatch(/Interrupted by a restart/);
  // Then the caller read its answer as the call's result.
  const outer = toolResults(4);
  expect(outer).toEqual([expect.objectContaining({ tool_call_id: "call_ask", content: "coder's answer" })]);
  // One run of the called agent, the one that began before the crash.
  const runs = await json<TeamRun[]>(await call(url, `/api/channels/${channel.id}/runs`, { session: owner }));
  const called = runs.filter((r) => r.parentRunId === runId);
  expect(called.map((r) => r.status)).toEqual(["done"]);
  const messages = await json<ChannelMessage[]>(
    await call(url, `/api/channels/${channel.id}/messages`, { session: owner }),
  );
  const answers = messages.filter((m) => m.runId === runId);
  expect(answers).toHaveLength(1);
  expect(answers[0]?.text).toContain("the final answer");
}, 90_000);

it("ends a /v1 completion killed mid-way with an error saying the client sends it again", async () => {
  fake.reset();
  const home = tempDir("dimsum-restart-v1-");
  fake.enqueue({ toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 20" } }] });
  let { url, owner } = await start(home);
  const token = (
    await json<{ token: string }>(
      await call(url, "/api/tokens", { session: owner, body: { name: "script" } }),
    )
  ).token;
  const request = fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ model: "assistant", messages: [{ role: "user", content: "run the job" }] }),
  });
  request.catch(() => undefined);
  await asked(1);
  await kill();
  // The client's connection died with the process.
  await expect(request).rejects.toThrow();

  ({ url, owner } = await start(home));
  const db = new Database(join(home, "dimsum.db"), { readonly: true });
  try {
    const rows = db
      .prepare("SELECT status, error FROM team_runs WHERE channel_id = '' AND depth = 0")
      .all() as Array<{ status: string; error: string }>;
    expect(rows).toEqual([
      { status: "error", error: expect.stringMatching(/\/v1 completion.*sends the request again/) },
    ]);
  } finally {
    db.close();
  }
  // Nobody is waiting for it: the model is not asked again.
  await new Promise((r) => setTimeout(r, 1000));
  expect(fake.requests).toHaveLength(1);
}, 90_000);
