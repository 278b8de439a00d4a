/**
 * The bundled CLI (dist/bundle/cli, which bin/dimsum.js runs) behaves as the compiled modules do:
 * the same request to the model, tool schemas included (the bundle carries them precomputed).
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ defaultTurn: { text: "ok" } });
});
afterAll(async () => {
  await server.close();
});

/** `dimsum <args>` on the compiled modules of dist/cli, not the bundle. */
function runCompiled(
  args: string[],
  env: Record<string, string | undefined>,
  cwd: string,
): Promise<number | null> {
  const main = pathToFileURL(join(projectRoot, "dist/cli/main.js")).href;
  const code = `const { main } = await import(${JSON.stringify(main)}); process.exitCode = await main(["node", "dimsum", ...process.argv.slice(1)]);`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code, ...args], {
      env,
      cwd,
      stdio: "ignore",
    });
    child.on("error", reject);
    child.on("close", resolve);
  });
}

it("sends the same request, tool schemas and all, from the bundle as from the compiled modules", async () => {
  const env = cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
  const cwd = mkdtempSync(join(tmpdir(), "dimsum-cwd-"));
  server.reset();
  const bundled = await runCli(["run", "--json", "what is 2+2?"], { env, cwd });
  expect(bundled.code).toBe(0);
  expect(await runCompiled(["run", "--json", "what is 2+2?"], env, cwd)).toBe(0);
  const [fromBundle, fromModules] = server.requests.map((r) => r.body as { tools: unknown[] });
  expect(fromBundle?.tools.length).toBeGreaterThan(5);
  expect(fromBundle).toEqual(fromModules);
});
