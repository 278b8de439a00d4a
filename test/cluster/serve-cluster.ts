/**
 * What the crash tests of several instances share: real `dimsum serve` processes over one PostgreSQL
 * database and one Redis, answering through one scripted fake model, started and killed by the
 * test; and the few API steps they all take (a direct chat with the assistant, waiting for a run to
 * settle, for the model to be asked). `useServeCluster` registers its hooks in the calling `describe`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, tempDir, waitFor } from "../server/helpers.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase } from "../support/postgres.js";
import { REDIS_URL } from "../support/redis.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");

export interface Instance {
  url: string;
  child: ChildProcess;
}

/** Polls `read` every 250 ms until it gives a value; fails naming `what` after `timeoutMs`. */
export async function until<T>(
  read: () => Promise<T | undefined>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The JSON body of a response, or an error with its status and text. */
export async function json<T>(res: Response | Promise<Response>): Promise<T> {
  const r = await res;
  if (r.status >= 400) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
  return (await r.json()) as T;
}

export interface ServeCluster {
  /** The fake model every instance asks (started before the first test). */
  readonly llm: FakeLlmServer;
  /** Starts one more instance and waits until it serves. */
  start(): Promise<Instance>;
  stop(instance: Instance, signal: NodeJS.Signals): Promise<void>;
  /** Posts `text` to a new direct chat on `url`; returns the chat and the run, once it runs there. */
  ask(url: string, owner: Session, text: string): Promise<{ channelId: string; runId: string }>;
  /** The run once it is done, failed or cancelled. */
  settled(url: string, owner: Session, runId: string): Promise<TeamRun>;
  /** Waits until the model was asked `count` times and the tool it called has started. */
  toolRunning(count: number): Promise<void>;
}

/** Instances whose owner signs in with `password`; each test's instances are killed after it. */
export function useServeCluster(options: { password: string; homePrefix: string }): ServeCluster {
  let llm: FakeLlmServer | undefined;
  let database: { url: string; drop(): Promise<void> } | undefined;
  const secretKey = randomBytes(32).toString("base64");
  const running: Instance[] = [];

  beforeAll(async () => {
    llm = await startFakeLlmServer({ defaultTurn: { text: "default answer" } });
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((i) => cluster.stop(i, "SIGKILL")));
  });
  afterAll(async () => {
    await llm?.close();
    await database?.drop();
  });

  const cluster: ServeCluster = {
    get llm() {
      if (!llm) throw new Error("the fake model starts before the first test");
      return llm;
    },

    async stop(instance, signal) {
      if (instance.child.exitCode !== null || instance.child.signalCode !== null) return;
      const exited = new Promise((r) => instance.child.once("exit", r));
      instance.child.kill(signal);
      await exited;
    },

    async start() {
      if (!database) throw new Error("the database is made before the first test");
      const home = tempDir(options.homePrefix);
      let output = "";
      const child = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
        cwd: home,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DIMSUM_HOME: home,
          DIMSUM_OWNER_PASSWORD: options.password,
          DIMSUM_DATABASE_URL: database.url,
          DIMSUM_REDIS_URL: REDIS_URL,
          DIMSUM_SECRET_KEY: secretKey,
          DIMSUM_MODEL: "openai:gpt-test",
          OPENAI_API_KEY: "sk-cluster-test",
          OPENAI_BASE_URL: `${cluster.llm.url}/v1`,
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
    },

    async ask(url, owner, text) {
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
    },

    settled(url, owner, runId) {
      return until(
        async () => {
          const run = await json<TeamRun>(call(url, `/api/runs/${runId}`, { session: owner }));
          return ["done", "error", "cancelled"].includes(run.status) ? run : undefined;
        },
        90_000,
        "the run to settle",
      );
    },

    async toolRunning(count) {
      await until(
        async () => (cluster.llm.requests.length >= count ? true : undefined),
        90_000,
        `model call ${count}`,
      );
      await new Promise((r) => setTimeout(r, 2000));
    },
  };
  return cluster;
}
