import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";

let server: FakeLlmServer;

beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const openaiEnv = () =>
  cleanEnv({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1`, DIMSUM_MODEL: "openai:gpt-4o" });

describe("dimsum run", () => {
  it("streams the answer to stdout and tool activity to stderr", async () => {
    server.enqueue(
      { toolCalls: [{ name: "calculator", args: { expression: "6*7" } }] },
      { text: "It is 42." },
    );
    const result = await runCli(["run", "what is 6*7?"], { env: openaiEnv() });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("It is 42.\n");
    expect(result.stderr).toContain("→ calculator");
    expect(result.stderr).toMatch(/✓ calculator .*42/);
  });

  it("prints JSON Lines with --json, one typed event per line", async () => {
    server.enqueue(
      { reasoning: "thinking", toolCalls: [{ name: "calculator", args: { expression: "2^10" } }] },
      { text: "1024" },
    );
    const result = await runCli(["run", "--json", "2^10?"], { env: openaiEnv() });
    expect(result.code).toBe(0);
    const events = jsonLines(result.stdout);
    const types = new Set(events.map((e) => e.type));
    for (const t of ["reasoning_delta", "tool_call", "tool_result", "usage", "text_delta", "done"]) {
      expect(types).toContain(t);
    }
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({
      name: "calculator",
      args: { expression: "2^10" },
    });
    expect(events.find((e) => e.type === "tool_result")).toMatchObject({ ok: true, output: "1024" });
    expect(events.at(-1)).toMatchObject({ type: "done", answer: "1024", iterations: 2 });
  });

  it("works over the Anthropic and Gemini protocols", async () => {
    for (const [provider, env] of [
      ["anthropic:claude-sonnet-4-5", { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: server.url }],
      ["gemini:gemini-2.5-flash", { GEMINI_API_KEY: "k", GEMINI_BASE_URL: server.url }],
    ] as const) {
      server.enqueue({ toolCalls: [{ name: "calculator", args: { expression: "1+2" } }] }, { text: "three" });
      const result = await runCli(["run", "--model", provider, "1+2"], { env: cleanEnv(env) });
      expect(result.stderr).not.toContain("error");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("three\n");
    }
  });

  it("uses --tools to narrow the set and --workspace for file tools", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "ws-"));
    writeFileSync(join(workspace, "note.txt"), "secret plan");
    server.enqueue({ toolCalls: [{ name: "read_file", args: { path: "note.txt" } }] }, { text: "read it" });
    const result = await runCli(
      ["run", "--json", "--tools", "read_file", "--workspace", workspace, "read note"],
      {
        env: openaiEnv(),
      },
    );
    expect(result.code).toBe(0);
    const body = server.requests[0]?.body as { tools: Array<{ function: { name: string } }> };
    expect(body.tools.map((t) => t.function.name)).toEqual(["read_file"]);
    expect(jsonLines(result.stdout).find((e) => e.type === "tool_result")?.output).toContain("secret plan");
  });

  it("refuses dangerous commands without a terminal unless --yes is given", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "ws-"));
    writeFileSync(join(workspace, "doomed.txt"), "x");
    const call = { toolCalls: [{ name: "execute_command", args: { command: "rm doomed.txt" } }] };
    server.enqueue(call, { text: "refused" });
    const refused = await runCli(["run", "--json", "--workspace", workspace, "delete it"], {
      env: openaiEnv(),
    });
    const refusal = jsonLines(refused.stdout).find((e) => e.type === "tool_result");
    expect(refusal).toMatchObject({ ok: false });
    expect(String(refusal?.output)).toMatch(/--yes/);
    expect(readFileSync(join(workspace, "doomed.txt"), "utf8")).toBe("x");

    server.enqueue(call, { text: "deleted" });
    const allowed = await runCli(["run", "--json", "--yes", "--workspace", workspace, "delete it"], {
      env: openaiEnv(),
    });
    expect(jsonLines(allowed.stdout).find((e) => e.type === "tool_result")).toMatchObject({ ok: true });
    expect(() => readFileSync(join(workspace, "doomed.txt"))).toThrow();
  });

  it("reads .env from the working directory", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cwd-"));
    writeFileSync(join(cwd, ".env"), `OPENAI_API_KEY=from-dotenv\nOPENAI_BASE_URL=${server.url}/v1\n`);
    server.enqueue({ text: "hello" });
    const result = await runCli(["run", "--model", "openai:gpt-4o", "hi"], { env: cleanEnv(), cwd });
    expect(result.code).toBe(0);
    expect(server.requests[0]?.headers.authorization).toBe("Bearer from-dotenv");
  });

  it("adds an OpenAI-compatible endpoint from the config file", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "cwd-"));
    writeFileSync(
      join(cwd, "dimsum.config.json"),
      JSON.stringify({ providers: { local: { baseUrl: `${server.url}/v1`, apiKeyEnv: "LOCAL_KEY" } } }),
    );
    server.enqueue({ text: "from local" });
    const result = await runCli(["run", "--model", "local:my-model", "hi"], {
      env: cleanEnv({ LOCAL_KEY: "abc" }),
      cwd,
    });
    expect(result.stdout).toBe("from local\n");
    expect(server.requests[0]?.model).toBe("my-model");
  });
});

describe("dimsum run errors: one clear line and a non-zero exit code, no stack trace", () => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    ["missing key", ["run", "--model", "openai:gpt-4o", "hi"], {}, /no API key for openai.*OPENAI_API_KEY/],
    [
      "unknown provider",
      ["run", "--model", "nosuch:model", "hi"],
      {},
      /unknown provider "nosuch".*known providers/,
    ],
    ["bad model string", ["run", "--model", "gpt-4o", "hi"], {}, /bad model "gpt-4o".*provider:model/],
    ["no model at all", ["run", "hi"], {}, /no model chosen.*DIMSUM_MODEL/],
  ];
  for (const [name, args, env, pattern] of cases) {
    it(name, async () => {
      const result = await runCli(args, { env: cleanEnv(env) });
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    });
  }

  it("names the env var on a 401", async () => {
    server.enqueue({ error: { status: 401 } });
    const result = await runCli(["run", "hi"], { env: openaiEnv() });
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(1);
  });

  it("reports an unreachable base URL", async () => {
    const port = await freePort();
    const env = cleanEnv({ OPENAI_API_KEY: "k", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` });
    const result = await runCli(["run", "--json", "--model", "openai:gpt-4o", "hi"], {
      env,
      timeoutMs: 30_000,
    });
    expect(result.code).toBe(4);
    const last = jsonLines(result.stdout).at(-1);
    expect(last).toMatchObject({ type: "error", code: "provider_unavailable" });
    expect(String(last?.message)).toContain(`127.0.0.1:${port}`);
  }, 40_000);

  it("exits with a usage error on bad flags", async () => {
    const result = await runCli(["run", "--max-iterations", "zero", "hi"], { env: openaiEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/positive integer/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const address = s.address();
      s.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
