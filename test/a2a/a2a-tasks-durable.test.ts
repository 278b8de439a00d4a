/**
 * A2A tasks live in the server's database: a task sent to a real `dimsum serve` (SQLite) is read back
 * with `tasks/get` after the server was stopped and started again, and with PostgreSQL a task sent to
 * one instance is read on another. Another person's token never finds it.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, login, type Session, tempDir } from "../server/helpers.js";
import { type ServeProcess, startServe } from "../server/serve-process.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

const PASSWORD = "a2a-tasks-password";
let llm: FakeLlmServer;
const running: ServeProcess[] = [];

beforeAll(async () => {
  llm = await startFakeLlmServer({ defaultTurn: { text: "The answer, kept." } });
});
afterAll(async () => llm.close());
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(home: string, env: Record<string, string> = {}): Promise<ServeProcess> {
  const started = await startServe(home, {
    DIMSUM_OWNER_PASSWORD: PASSWORD,
    DIMSUM_MODEL: "openai:gpt-test",
    OPENAI_API_KEY: "sk-a2a-tasks",
    OPENAI_BASE_URL: `${llm.url}/v1`,
    ...env,
  });
  running.push(started);
  return started;
}

async function apiToken(url: string, session: Session): Promise<string> {
  const res = await call(url, "/api/tokens", { session, body: { name: "a2a" } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

/** One A2A 0.3 JSON-RPC call to the starter assistant. */
async function rpc(url: string, token: string, method: string, params: unknown) {
  const res = await fetch(`${url}/a2a/assistant`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { result?: { id?: string; status?: { state?: string } }; error?: unknown };
}

async function sendTask(url: string, token: string): Promise<string> {
  const sent = await rpc(url, token, "message/send", {
    message: {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [{ kind: "text", text: "hi" }],
    },
  });
  expect(sent.error).toBeUndefined();
  expect(sent.result?.status?.state).toBe("completed");
  return sent.result?.id ?? "";
}

describe("A2A tasks in the server's database", () => {
  it("SQLite: a task is read back after the server restarts, and only by its person", async () => {
    const home = tempDir("dimsum-a2a-tasks-");
    let server = await serve(home);
    const owner = await login(server.url, "owner", PASSWORD);
    const token = await apiToken(server.url, owner);
    const created = await call(server.url, "/api/users", {
      session: owner,
      body: { username: "other-person", password: "other-password-1", role: "member" },
    });
    expect(created.status).toBe(201);
    const otherToken = await apiToken(
      server.url,
      await login(server.url, "other-person", "other-password-1"),
    );
    const taskId = await sendTask(server.url, token);

    await server.stop();
    running.splice(running.indexOf(server), 1);
    server = await serve(home);

    const got = await rpc(server.url, token, "tasks/get", { id: taskId });
    expect(got.result).toMatchObject({ id: taskId, status: { state: "completed" } });
    expect(JSON.stringify(got.result)).toContain("The answer, kept.");
    // Tasks are the person's: another token does not find it.
    const theirs = await rpc(server.url, otherToken, "tasks/get", { id: taskId });
    expect(theirs.result).toBeUndefined();
    expect(JSON.stringify(theirs.error)).toMatch(/not found/i);
  }, 60_000);

  it.skipIf(!postgresAvailable || !redisAvailable)(
    "PostgreSQL: a task sent to one instance is read on another",
    async () => {
      const database = await createTestDatabase();
      try {
        const env = {
          DIMSUM_DATABASE_URL: database.url,
          DIMSUM_REDIS_URL: REDIS_URL,
          DIMSUM_SECRET_KEY: randomBytes(32).toString("base64"),
        };
        const a = await serve(tempDir("dimsum-a2a-tasks-a-"), env);
        const b = await serve(tempDir("dimsum-a2a-tasks-b-"), env);
        const token = await apiToken(a.url, await login(a.url, "owner", PASSWORD));
        const taskId = await sendTask(a.url, token);
        const got = await rpc(b.url, token, "tasks/get", { id: taskId });
        expect(got.result).toMatchObject({ id: taskId, status: { state: "completed" } });
        expect(JSON.stringify(got.result)).toContain("The answer, kept.");
      } finally {
        await Promise.all(running.splice(0).map((s) => s.stop()));
        await database.drop();
      }
    },
    60_000,
  );
});
