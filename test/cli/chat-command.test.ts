import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, runCli } from "../support/cli.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

describe("dimsum chat (piped stdin)", () => {
  it("chats, lists sessions, reloads history, clears and exits", async () => {
    const env = cleanEnv({
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `${server.url}/v1`,
      DIMSUM_MODEL: "openai:gpt-4o",
    });
    server.enqueue({ text: "Nice to meet you, Ada." }, { text: "Noted the second thing." });
    const first = await runCli(["chat", "--user", "A", "--session", "window1"], {
      env,
      input: "My name is Ada\nsecond thing\n/sessions\n/exit\nthis line is never sent\n",
    });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("Nice to meet you, Ada.");
    expect(first.stdout).toContain("Noted the second thing.");
    expect(first.stdout).toMatch(/\* window1 .*4 messages/);
    expect(server.requests).toHaveLength(2);
    expect(first.stderr).toMatch(/tokens/);

    // A second session of the same user starts fresh.
    server.enqueue({ text: "fresh" });
    const other = await runCli(["chat", "--user", "A", "--session", "window2"], {
      env,
      input: "hello\n/sessions\n",
    });
    expect(other.stderr).not.toContain("earlier in this session");
    expect(JSON.stringify(server.requests.at(-1)?.body)).not.toContain("Ada");
    expect(other.stdout).toMatch(/\* window2/);
    expect(other.stdout).toMatch(/ {2}window1/);

    // Reopening window1 shows the last turns and sends the history to the model.
    server.enqueue({ text: "You are Ada." });
    const reopened = await runCli(["chat", "--user", "A", "--session", "window1"], {
      env,
      input: "who am I?\n",
    });
    expect(reopened.stderr).toContain("earlier in this session");
    expect(reopened.stderr).toContain("you› My name is Ada");
    expect(reopened.stderr).toContain("Nice to meet you, Ada.");
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain("My name is Ada");

    // /clear: the model no longer sees the earlier turns.
    server.enqueue({ text: "I don't know." });
    await runCli(["chat", "--user", "A", "--session", "window1"], { env, input: "/clear\nwho am I?\n" });
    const afterClear = JSON.stringify(server.requests.at(-1)?.body);
    expect(afterClear).not.toContain("My name is Ada");
    expect(afterClear).toContain("who am I?");

    // Another user never sees A's sessions.
    const b = await runCli(["chat", "--user", "B"], { env, input: "/sessions\n" });
    expect(b.stdout).not.toContain("window1");
  });

  it("reports a configuration problem and exits non-zero", async () => {
    const result = await runCli(["chat", "--user", "A"], { env: cleanEnv(), input: "hi\n" });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/no model chosen/);
  });
});
