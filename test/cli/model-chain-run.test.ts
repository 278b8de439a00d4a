/**
 * `dimsum run` with a fallback chain and a reasoning effort, as a real process against two fake
 * providers: `--json` says which model answered and why the call moved; `--reasoning` reaches each
 * protocol's own control.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";

let primary: FakeLlmServer;
let secondary: FakeLlmServer;

beforeAll(async () => {
  primary = await startFakeLlmServer({ strict: true });
  secondary = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await Promise.all([primary.close(), secondary.close()]);
});
beforeEach(() => {
  primary.reset();
  secondary.reset();
});

const env = () =>
  cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${primary.url}/v1`,
    ANTHROPIC_API_KEY: "ak-test",
    ANTHROPIC_BASE_URL: secondary.url,
  });

const rateLimited = { error: { status: 429, headers: { "retry-after-ms": "1" } } };

describe("dimsum run --model a,b --reasoning", () => {
  it("answers with the second model once the first is rate limited, and says so in --json", async () => {
    primary.enqueue(rateLimited, rateLimited, rateLimited, rateLimited, rateLimited);
    secondary.enqueue({ text: "from claude" });
    const result = await runCli(
      [
        "run",
        "--json",
        "--tools",
        "calculator",
        "--reasoning",
        "high",
        "--model",
        "openai:gpt-5,anthropic:claude-sonnet-4-5",
        "hi",
      ],
      { env: env() },
    );
    expect(result.stderr).not.toContain("error");
    expect(result.code).toBe(0);
    expect(primary.requests).toHaveLength(5); // the first try and its 4 retries
    expect(secondary.requests).toHaveLength(1);
    const events = jsonLines(result.stdout);
    expect(events.find((e) => e.type === "model_fallback")).toMatchObject({
      from: "openai:gpt-5",
      to: "anthropic:claude-sonnet-4-5",
      code: "rate_limit",
    });
    expect(events.at(-1)).toMatchObject({
      type: "done",
      answer: "from claude",
      model: "anthropic:claude-sonnet-4-5",
    });
    // The same effort, in each protocol's words.
    expect(primary.requests[0]?.body).toMatchObject({ reasoning_effort: "high" });
    expect(secondary.requests[0]?.body).toMatchObject({
      thinking: { type: "enabled", budget_tokens: 24576 },
    });
  });

  it("prints the move on stderr for people", async () => {
    primary.enqueue({ error: { status: 401 } });
    secondary.enqueue({ text: "fine" });
    const result = await runCli(
      ["run", "--tools", "calculator", "--model", "openai:gpt-5,anthropic:claude-sonnet-4-5", "hi"],
      {
        env: env(),
      },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("fine\n");
    expect(result.stderr).toContain("openai:gpt-5 failed");
    expect(result.stderr).toContain("answering with anthropic:claude-sonnet-4-5");
  });

  it("refuses an unknown effort", async () => {
    const result = await runCli(["run", "--reasoning", "max", "hi"], { env: env() });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("off, low, medium, high");
  });
});
