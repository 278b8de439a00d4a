/**
 * `dimsum chat` with a model chain, as a real process against two fake providers: a provider that
 * answered 429 cools down for the rest of the process, so the chat's next question goes straight to
 * the next model instead of spending its retries on the first again (as `dimsum run` and the server do).
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, runCli } from "../support/cli.js";

let primary: FakeLlmServer;
let backup: FakeLlmServer;

beforeAll(async () => {
  primary = await startFakeLlmServer({ strict: true });
  backup = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await Promise.all([primary.close(), backup.close()]);
});

const rateLimited = { error: { status: 429, headers: { "retry-after-ms": "1" } } };

it("skips the rate-limited primary on the chat's second question (cooldowns shared across turns)", async () => {
  primary.enqueue(rateLimited, rateLimited, rateLimited, rateLimited, rateLimited);
  backup.enqueue({ text: "first from backup" }, { text: "second from backup" });
  const result = await runCli(["chat", "--user", "A", "--session", "chain"], {
    env: cleanEnv({
      DIMSUM_MODEL: "openai:primary,anthropic:backup",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${primary.url}/v1`,
      ANTHROPIC_API_KEY: "ak-test",
      ANTHROPIC_BASE_URL: backup.url,
    }),
    input: "first question\nsecond question\n",
  });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("first from backup");
  expect(result.stdout).toContain("second from backup");
  // The first question: the first try and its 4 retries; the second: none, the primary cools down.
  expect(primary.requests).toHaveLength(5);
  expect(backup.requests).toHaveLength(2);
});

it("honours modelFallback's cooldown length from the config file", async () => {
  primary.reset();
  backup.reset();
  // No cooldown at all: the second question tries the primary again (and finds it answering).
  primary.enqueue(rateLimited, rateLimited, rateLimited, rateLimited, rateLimited, {
    text: "primary is back",
  });
  backup.enqueue({ text: "first from backup" });
  const { mkdtempSync, writeFileSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const home = mkdtempSync(join(tmpdir(), "dimsum-chat-chain-"));
  writeFileSync(join(home, "config.json"), JSON.stringify({ modelFallback: { cooldownSeconds: 0.001 } }));
  const result = await runCli(["chat", "--user", "A", "--session", "chain"], {
    env: cleanEnv({
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:primary,anthropic:backup",
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${primary.url}/v1`,
      ANTHROPIC_API_KEY: "ak-test",
      ANTHROPIC_BASE_URL: backup.url,
    }),
    input: "first question\nsecond question\n",
  });
  expect(result.code, result.stderr).toBe(0);
  expect(result.stdout).toContain("primary is back");
  expect(primary.requests).toHaveLength(6);
  expect(backup.requests).toHaveLength(1);
});
