/**
 * Answers that outlive their instance on PostgreSQL (issue 34, items 1 and 2): real `dimsum serve`
 * processes over one database and one Redis; the instance running an answer is killed with SIGKILL
 * and another takes it over once its lease ran out. The answer it finishes keeps the tool call of the
 * step before the crash; an answer whose instances die three times is given up, and kept in the chat
 * with its error, what it said and the tool calls that ran.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ChannelMessage, MessagePart, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir, waitFor } from "../server/helpers.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "cluster-resume-password";

interface Instance {
  url: string;
  child: ChildProcess;
}

async function until<T>(read: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function json<T>(res: Response | Promise<Response>): Promise<T> {
  const r = await res;
  if (r.status >= 400) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

/** The answer's parts, tool parts as `tool:<call id>:<status>`, others by type. */
function shapeOf(parts: readonly MessagePart[]): string[] {
  return parts.map((p) => (p.type === "tool" ? `tool:${p.callId}:${p.status}` : p.type));
}

describe.skipIf(!postgresAvailable || !redisAvailable)("answers resumed by another instance", () => {
  let llm: FakeLlmServer;
  let database: { url: string; drop(): Promise<void> };
  const secretKey = randomBytes(32).toString("base64");
  const running: Instance[] = [];

  beforeAll(async () => {
    llm = await startFakeLlmServer({ defaultTurn: { text: "default answer" } });
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((i) => stop(i, "SIGKILL")));
  });
  afterAll(async () => {
    await llm?.close();
    await database?.drop();
  });

  async function stop(instance: Instance, signal: NodeJS.Signals): Promise<void> {
    if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
    const exited = new Promise((r) => instance.child.once("exit", r));
    instance.child.kill(signal);
    await exited;
  }

  async function start(): Promise<Instance> {
    const home = tempDir("dimsum-cluster-resume-");
    let output = "";
    const child = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
      cwd: home,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DIMSUM_HOME: home,
        DIMSUM_OWNER_PASSWORD: PASSWORD,
        DIMSUM_DATABASE_URL: database.url,
        DIMSUM_REDIS_URL: REDIS_URL,
        DIMSUM_SECRET_KEY: secretKey,
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-cluster-test",
        OPENAI_BASE_URL: `${llm.url}/v1`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
    const url = await waitFor(() => {
      if (child.exitCode !== null) throw new Error(`dimsum serve exited: ${output}`);
      return /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    });
    const instance = { url, child };
    running.push(instance);
    return instance;
  }

  /** Posts `text` to a new direct chat on `url`; returns the chat and the run, once it runs there. */
  async function ask(
    url: string,
    owner: Session,
    text: string,
  ): Promise<{ channelId: string; runId: string }> {
    const channel = await json<{ id: string }>(
      call(url, "/api/channels", {
        session: owner,
        body: {
          kind: "direct",
          name: "Resume",
          leaderAgentId: "assistant",
          agentIds: ["assistant"],
          userIds: [],
        },
      }),
    );
    const posted = await json<{ runs: TeamRun[] }>(
      call(url, `/api/channels/${channel.id}/messages`, { session: owner, body: { text } }),
    );
    return { channelId: channel.id, runId: posted.runs[0]?.id as string };
  }

  async function settled(url: string, owner: Session, runId: string): Promise<TeamRun> {
    return until(
      async () => {
        const run = await json<TeamRun>(call(url, `/api/runs/${runId}`, { session: owner }));
        return ["done", "error", "cancelled"].includes(run.status) ? run : undefined;
      },
      90_000,
      "the run to settle",
    );
  }

  /**
   * The run's one answer in the chat. An answer given up on a lost instance is posted just after its
   * run is marked failed (the instance that took the lease over posts it), so it is waited for.
   */
  async function answerOf(
    url: string,
    owner: Session,
    channelId: string,
    runId: string,
    final: (answer: ChannelMessage) => boolean = () => true,
  ) {
    const answers = await until(
      async () => {
        const messages = await json<ChannelMessage[]>(
          call(url, `/api/channels/${channelId}/messages`, { session: owner }),
        );
        const found = messages.filter((m) => m.runId === runId);
        return found.some(final) ? found : undefined;
      },
      30_000,
      "the run's answer in the chat",
    );
    expect(answers).toHaveLength(1);
    return answers[0] as ChannelMessage;
  }

  /** Waits until the model was asked `count` times and the tool it called has started. */
  async function toolRunning(count: number): Promise<void> {
    await until(async () => (llm.requests.length >= count ? true : undefined), 90_000, `model call ${count}`);
    await new Promise((r) => setTimeout(r, 2000));
  }

  it("keeps the earlier step's tool call in an answer another instance resumed", async () => {
    llm.reset();
    llm.enqueue({
      text: "First I look.",
      toolCalls: [{ id: "call_first", name: "execute_command", args: { command: "echo step-one-ran" } }],
    });
    llm.enqueue({
      toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
    });
    llm.enqueue({ text: "done on the other instance" });
    // Alone at first, so A runs the answer.
    const a = await start();
    const owner = await login(a.url, "owner", PASSWORD);
    const { channelId, runId } = await ask(a.url, owner, "two steps please");
    const b = await start();
    await toolRunning(2);
    await stop(a, "SIGKILL");
    expect((await settled(b.url, owner, runId)).status).toBe("done");
    const answer = await answerOf(b.url, owner, channelId, runId);
    expect(shapeOf(answer.parts)).toEqual([
      "text",
      "tool:call_first:ok",
      expect.stringMatching(/^tool:call_sleep:/),
      "resumed",
      "text",
    ]);
    expect((answer.parts[1] as Extract<MessagePart, { type: "tool" }>).output).toContain("step-one-ran");
  }, 180_000);

  it("keeps in the chat an answer given up after its instances died three times", async () => {
    llm.reset();
    for (let i = 1; i <= 3; i++) {
      llm.enqueue({
        text: `Attempt ${i}.`,
        toolCalls: [{ id: `call_${i}`, name: "execute_command", args: { command: `sleep 4${i}` } }],
      });
    }
    let holder = await start();
    const owner = await login(holder.url, "owner", PASSWORD);
    const { channelId, runId } = await ask(holder.url, owner, "a job that keeps killing instances");
    for (let kills = 1; kills <= 3; kills++) {
      // The holder (the only instance alive) runs the tool; the next one starts, then the holder dies
      // and the next takes the answer over once the lease runs out.
      await toolRunning(kills);
      const next = await start();
      await stop(holder, "SIGKILL");
      holder = next;
    }
    const run = await settled(holder.url, owner, runId);
    expect(run.status).toBe("error");
    expect(llm.requests).toHaveLength(3);
    const answer = await answerOf(
      holder.url,
      owner,
      channelId,
      runId,
      (m) => m.parts.at(-1)?.type === "error",
    );
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
  }, 400_000);
});
