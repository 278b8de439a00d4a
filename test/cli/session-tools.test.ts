/**
 * The process tools and network requests in the real CLI (`node bin/dimsum.js`, built) against the
 * scripted fake LLM: `--processes` offers process_start/process_list, and the processes end when the
 * command ends, after its answer or on Ctrl-C; `request_network` is approved with `--yes` and then
 * the run's command reaches the registry, and refused when nobody can answer.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { isAddressAllowed, systemLookup } from "../../src/tools/builtin/network-guard.js";
import { detectSandbox } from "../../src/tools/builtin/sandbox/detect.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

const built = existsSync(join(projectRoot, "dist/cli/main.js"));
const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;
const registryIsPublic = (await systemLookup("registry.npmjs.org").catch(() => [])).every(
  (a) => isAddressAllowed(a.address).allowed,
);

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.reset());

const env = () =>
  cleanEnv({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1`, DIMSUM_MODEL: "openai:gpt-4o" });

// Writes the time into `tick` (and says so) five times a second for as long as it lives.
const TICKER = "while true; do date +%s%N > tick; echo ticked; sleep 0.2; done";

function workspace(config: unknown = {}): string {
  const cwd = mkdtempSync(join(tmpdir(), "dimsum-cli-proc-"));
  writeFileSync(join(cwd, "dimsum.config.json"), JSON.stringify(config));
  return cwd;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when `tick` stopped changing (the ticker is gone). */
async function stoppedTicking(cwd: string): Promise<boolean> {
  const before = readFileSync(join(cwd, "tick"), "utf8");
  await sleep(1200);
  return readFileSync(join(cwd, "tick"), "utf8") === before;
}

describe.skipIf(!built || !sandboxed)("dimsum run --processes", () => {
  it("starts a process the model lists, and ends it when the run ends", async () => {
    const cwd = workspace();
    server.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "ticker", command: TICKER } }] },
      {
        toolCalls: [
          { name: "process_read", args: { name: "ticker", waitForPattern: "ticked", timeoutSeconds: 20 } },
        ],
      },
      { toolCalls: [{ name: "process_list", args: {} }] },
      { text: "started it" },
    );
    const result = await runCli(["run", "--json", "--processes", "start a ticker"], { env: env(), cwd });
    expect(result.code, result.stderr).toBe(0);
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    expect(results.map((r) => [r.name, r.ok])).toEqual([
      ["process_start", true],
      ["process_read", true],
      ["process_list", true],
    ]);
    expect(String(results[2]?.output)).toMatch(/ticker: running/);
    expect(existsSync(join(cwd, "tick"))).toBe(true);
    expect(await stoppedTicking(cwd)).toBe(true);
  }, 60_000);

  it("without --processes the process tools are not offered", async () => {
    const cwd = workspace();
    server.enqueue({ text: "no tools" });
    const result = await runCli(["run", "--json", "hello"], { env: env(), cwd });
    expect(result.code, result.stderr).toBe(0);
    const body = server.requests[0]?.body as { tools?: Array<{ function: { name: string } }> } | undefined;
    const tools = body?.tools ?? [];
    const names = tools.map((t) => t.function.name);
    expect(names).toContain("execute_command");
    expect(names).not.toContain("process_start");
  }, 30_000);

  it("ends the processes on Ctrl-C", async () => {
    const cwd = workspace();
    server.enqueue(
      { toolCalls: [{ name: "process_start", args: { name: "ticker", command: TICKER } }] },
      { toolCalls: [{ name: "execute_command", args: { command: "sleep 60" } }] },
      { text: "never" },
    );
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin/dimsum.js"), "run", "--json", "--processes", "go"],
      {
        cwd,
        env: env(),
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    child.stdin.end();
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    for (let i = 0; i < 150 && !existsSync(join(cwd, "tick")); i++) await sleep(100);
    expect(existsSync(join(cwd, "tick"))).toBe(true);
    await sleep(500);
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(await stoppedTicking(cwd)).toBe(true);
  }, 60_000);
});

describe.skipIf(!built || !sandboxed)("dimsum run and request_network", () => {
  const npmView = {
    toolCalls: [
      {
        name: "execute_command",
        args: { command: "npm view ms version --cache ./.npm-cache --fetch-retries=0" },
      },
    ],
  };
  const ask = { toolCalls: [{ name: "request_network", args: { hosts: ["registry.npmjs.org"] } }] };
  // Where the registry is reached through a mirror on a reserved address, the operator allows private ones.
  const config = { tools: { fetch: { allowPrivateNetwork: !registryIsPublic } } };

  it("approved (--yes): the run's command reaches the registry", async () => {
    const cwd = workspace(config);
    server.enqueue(ask, npmView, { text: "done" });
    const result = await runCli(["run", "--json", "--yes", "check ms"], {
      env: env(),
      cwd,
      timeoutMs: 60_000,
    });
    expect(result.code, result.stderr).toBe(0);
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    expect(results[0]).toMatchObject({ name: "request_network", ok: true });
    expect(String(results[1]?.output)).toMatch(/exit code 0\n\[stdout\]\n\d+\.\d+\.\d+/);
  }, 90_000);

  it("nobody to answer: the request is refused and the command cannot reach the registry", async () => {
    const cwd = workspace(config);
    server.enqueue(ask, npmView, { text: "done" });
    const result = await runCli(["run", "--json", "check ms"], { env: env(), cwd, timeoutMs: 60_000 });
    expect(result.code, result.stderr).toBe(0);
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    expect(results[0]).toMatchObject({ name: "request_network", ok: false });
    expect(String(results[0]?.output)).toMatch(/needs approval because/);
    expect(String(results[1]?.output)).not.toMatch(/exit code 0\n/);
  }, 90_000);
});
