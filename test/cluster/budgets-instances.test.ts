/**
 * Budgets across instances: two real `dimsum serve` processes on one PostgreSQL database (and Redis)
 * are asked at the same time for answers of a person with a hard limit of $0.01. The admissions are
 * counted in the database, so together they never let the person spend past the limit; the answers
 * refused say why.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TeamRun } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir, waitFor } from "../server/helpers.js";
import { freePort } from "../server/serve-process.js";
import { projectRoot } from "../support/fixtures.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "budget-owner-password";
/** gpt-4o-mini: 20,000 input tokens at $0.15/M. */
const ANSWER_USD = 0.003;

interface Instance {
  url: string;
  child: ChildProcess;
}

describe.skipIf(!postgresAvailable || !redisAvailable)("budgets on two instances", () => {
  let llm: FakeLlmServer;
  let database: { url: string; drop(): Promise<void> };
  const secretKey = randomBytes(32).toString("base64");
  const running: Instance[] = [];

  beforeAll(async () => {
    llm = await startFakeLlmServer({
      defaultTurn: () => ({ text: "done", usage: { input: 20_000, output: 0 }, delayMs: 100 }),
    });
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(
      running.map(async (i) => {
        if (i.child.exitCode !== null) return;
        const exited = new Promise((r) => i.child.once("exit", r));
        i.child.kill("SIGTERM");
        await exited;
      }),
    );
    await llm?.close();
    await database?.drop();
  });

  async function start(): Promise<Instance> {
    const home = tempDir("dimsum-budget-home-");
    writeFileSync(join(home, "config.json"), JSON.stringify({ queue: { group: "followup" } }));
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
        DIMSUM_MODEL: "openai:gpt-4o-mini",
        OPENAI_API_KEY: "sk-budget-test",
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

  async function json<T>(res: Response | Promise<Response>): Promise<T> {
    const r = await res;
    if (r.status >= 400) throw new Error(`HTTP ${r.status}: ${await r.text()}`);
    return (await r.json()) as T;
  }

  /** Asks the assistant in a new chat on `url`; the run once it ended. */
  async function ask(url: string, who: Session, text: string): Promise<TeamRun> {
    const channel = await json<{ id: string }>(
      call(url, "/api/channels", {
        session: who,
        body: {
          kind: "direct",
          name: text,
          leaderAgentId: "assistant",
          agentIds: ["assistant"],
          userIds: [],
        },
      }),
    );
    const posted = await json<{ runs: TeamRun[] }>(
      call(url, `/api/channels/${channel.id}/messages`, { session: who, body: { text } }),
    );
    for (;;) {
      const run = await json<TeamRun>(call(url, `/api/runs/${posted.runs[0]?.id}`, { session: who }));
      if (run.status === "done" || run.status === "error") return run;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("answers asked at once on both never spend past a hard limit of $0.01", async () => {
    const [a, b] = await Promise.all([start(), start()]);
    if (!a || !b) throw new Error("instances did not start");
    const owner = await login(a.url, "owner", PASSWORD);
    const created = await json<{ id: string }>(
      call(a.url, "/api/users", {
        session: owner,
        body: { username: "mia", password: "member-password-1", role: "member" },
      }),
    );
    const mia = await login(b.url, "mia", "member-password-1");
    await json(
      call(a.url, "/api/budgets", {
        session: owner,
        body: { scope: "person", scopeId: created.id, period: "day", unit: "usd", hardLimit: 0.01 },
      }),
    );

    // One answer first, so the next ones are expected to cost as much.
    expect((await ask(a.url, mia, "first")).status).toBe("done");
    const together = await Promise.all([
      ask(a.url, mia, "a1"),
      ask(b.url, mia, "b1"),
      ask(a.url, mia, "a2"),
      ask(b.url, mia, "b2"),
      ask(b.url, mia, "b3"),
    ]);
    const done = together.filter((r) => r.status === "done");
    const refused = together.filter((r) => r.status === "error");
    expect(done.length + refused.length).toBe(5);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    for (const run of refused) expect(run.error).toContain("daily budget of $0.01 is spent");

    const [status] = await json<Array<{ spent: number; remaining: number }>>(
      call(b.url, "/api/budgets/mine", { session: mia }),
    );
    expect(status?.spent).toBeCloseTo(ANSWER_USD * (1 + done.length), 9);
    expect(status?.spent).toBeLessThanOrEqual(0.01);
    // And afterwards, on either instance, the next one is refused too.
    expect((await ask(b.url, mia, "after")).status).toBe("error");
  }, 120_000);
});
