/** `dimsum run` where the sandbox cannot work: one warning, then every command needs a yes. */
import { mkdtempSync, writeFileSync } from "node:fs";
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

function workspaceWithoutBwrap(): string {
  const cwd = mkdtempSync(join(tmpdir(), "dimsum-nobwrap-"));
  writeFileSync(
    join(cwd, "dimsum.config.json"),
    JSON.stringify({ tools: { shell: { sandbox: { bwrapPath: join(cwd, "missing-bwrap") } } } }),
  );
  return cwd;
}

const env = () =>
  cleanEnv({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1`, DIMSUM_MODEL: "openai:gpt-4o" });

const twoCommands = () =>
  server.enqueue(
    {
      toolCalls: [
        { name: "execute_command", args: { command: "echo first > a.txt" } },
        { name: "execute_command", args: { command: "echo second" } },
      ],
    },
    { text: "done" },
  );

describe("dimsum run without a sandbox", () => {
  it("says so once and refuses every command when nobody can answer", async () => {
    const cwd = workspaceWithoutBwrap();
    twoCommands();
    const result = await runCli(["run", "--json", "--tools", "execute_command", "go"], { env: env(), cwd });
    expect(result.code).toBe(0);
    expect(result.stderr.match(/no sandbox for execute_command/g)).toHaveLength(1);
    expect(result.stderr).toContain("missing-bwrap");
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    expect(results).toHaveLength(2);
    for (const r of results) {
      expect(r.ok).toBe(false);
      expect(String(r.output)).toContain("no sandbox is available");
    }
  });

  it("runs them with --yes", async () => {
    const cwd = workspaceWithoutBwrap();
    twoCommands();
    const result = await runCli(["run", "--json", "--yes", "--tools", "execute_command", "go"], {
      env: env(),
      cwd,
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("every command is asked about");
    const results = jsonLines(result.stdout).filter((e) => e.type === "tool_result");
    expect(results.map((r) => r.ok)).toEqual([true, true]);
    expect(String(results[1]?.output)).toContain("second");
  });
});
