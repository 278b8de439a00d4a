/**
 * Flow steps and call_agent runs outlive their instance on PostgreSQL (issue 34, item 18): real
 * `dimsum serve` processes over one database and one Redis; the instance running the run is killed
 * with SIGKILL and another takes it over once its lease ran out. A flow step goes on from its
 * checkpoint there and the flow runs its next step; a call_agent run goes on inside its caller's
 * resumed call, its finished tool call not run again.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ChannelMessage, FlowRecord, TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir, waitFor } from "../server/helpers.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "cluster-kinds-password";

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

describe.skipIf(!postgresAvailable || !redisAvailable)(
  "flow steps and nested runs resumed by another instance",
  () => {
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
      const home = tempDir("dimsum-cluster-kinds-");
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

    async function answerOf(url: string, owner: Session, channelId: string, runId: string) {
      const messages = await json<ChannelMessage[]>(
        call(url, `/api/channels/${channelId}/messages`, { session: owner }),
      );
      const answers = messages.filter((m) => m.runId === runId);
      expect(answers).toHaveLength(1);
      return answers[0] as ChannelMessage;
    }

    /** Waits until the model was asked `count` times and the tool it called has started. */
    async function toolRunning(count: number): Promise<void> {
      await until(
        async () => (llm.requests.length >= count ? true : undefined),
        90_000,
        `model call ${count}`,
      );
      await new Promise((r) => setTimeout(r, 2000));
    }

    function toolResults(index: number): Array<{ tool_call_id: string; content: string }> {
      const body = llm.requests[index]?.body as {
        messages: Array<{ role: string; tool_call_id: string; content: string }>;
      };
      return body.messages.filter((m) => m.role === "tool");
    }

    it("resumes a flow step on another instance, which then runs the next step", async () => {
      llm.reset();
      llm.enqueue({
        text: "Looking.",
        toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo step-zero-ran" } }],
      });
      llm.enqueue({
        toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
      });
      llm.enqueue({ text: "step zero done" });
      llm.enqueue({ text: "step one done" });
      // Alone at first, so A runs the step.
      const a = await start();
      const owner = await login(a.url, "owner", PASSWORD);
      const group = await json<{ id: string }>(
        call(a.url, "/api/channels", {
          session: owner,
          body: { kind: "group", name: "Chain", agentIds: ["assistant", "coder"], userIds: [] },
        }),
      );
      await json(
        call(a.url, `/api/channels/${group.id}/chain`, {
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
        call(a.url, `/api/channels/${group.id}/messages`, {
          session: owner,
          body: { text: "/flow build it" },
        }),
      );
      const flowId = posted.flow.id;
      const stepRun = posted.runs[0]?.id as string;
      // B starts while A runs the step: the flow stays running.
      const b = await start();
      await toolRunning(2);
      await stop(a, "SIGKILL");
      const flow = await until(
        async () => {
          const read = await json<FlowRecord>(call(b.url, `/api/flows/${flowId}`, { session: owner }));
          return read.status === "running" ? undefined : read;
        },
        90_000,
        "the flow to end",
      );
      expect(flow.status).toBe("done");
      expect(flow.steps.map((s) => [s.status, s.output])).toEqual([
        ["completed", "step zero done"],
        ["completed", "step one done"],
      ]);
      expect(flow.steps[0]?.runId).toBe(stepRun);
      expect(llm.requests).toHaveLength(4);
      const results = toolResults(2);
      expect(results.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
      expect(results[1]?.content).toMatch(/Interrupted by a restart/);
    }, 180_000);

    it("resumes a call_agent run on another instance inside its caller's resumed answer", async () => {
      llm.reset();
      llm.enqueue({
        toolCalls: [
          { id: "call_ask", name: "call_agent", args: { agentId: "coder", task: "count the files" } },
        ],
      });
      llm.enqueue({
        toolCalls: [{ id: "call_echo", name: "execute_command", args: { command: "echo nested-ran" } }],
      });
      llm.enqueue({
        toolCalls: [{ id: "call_sleep", name: "execute_command", args: { command: "sleep 40" } }],
      });
      llm.enqueue({ text: "coder's answer" });
      llm.enqueue({ text: "the final answer" });
      const a = await start();
      const owner = await login(a.url, "owner", PASSWORD);
      const { channelId, runId } = await ask(a.url, owner, "ask coder");
      const b = await start();
      await toolRunning(3);
      await stop(a, "SIGKILL");
      expect((await settled(b.url, owner, runId)).status).toBe("done");
      expect(llm.requests).toHaveLength(5);
      const nested = toolResults(3);
      expect(nested.map((r) => r.tool_call_id)).toEqual(["call_echo", "call_sleep"]);
      expect(nested[0]?.content).toContain("nested-ran");
      expect(nested[1]?.content).toMatch(/Interrupted by a restart/);
      expect(toolResults(4)).toEqual([
        expect.objectContaining({ tool_call_id: "call_ask", content: "coder's answer" }),
      ]);
      const runs = await json<TeamRun[]>(call(b.url, `/api/channels/${channelId}/runs`, { session: owner }));
      expect(runs.filter((r) => r.parentRunId === runId).map((r) => r.status)).toEqual(["done"]);
      const answer = await answerOf(b.url, owner, channelId, runId);
      expect(answer.text).toContain("the final answer");
    }, 180_000);
  },
);
