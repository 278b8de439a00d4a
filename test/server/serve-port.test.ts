/**
 * `PORT` (the seed's, and hosting platforms', way to set the port) is honoured by `dimsum serve`
 * below `--port` (issue 34, item 15): from the environment or `.env`; a PORT that is not a port is a
 * configuration error naming it.
 */
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_CONFIG, EXIT_OK } from "../../src/cli/exit-codes.js";
import { sink, tempDir, waitFor } from "./helpers.js";

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts serve with those options and environment; resolves to the URL it serves on, then stops it. */
async function servedUrl(
  options: { port?: number },
  env: Record<string, string>,
  cwd?: string,
): Promise<string> {
  const home = tempDir();
  const stdout = sink();
  const stderr = sink();
  const stop = new AbortController();
  const running = serveCommand(options, {
    stdout,
    stderr,
    env: { DIMSUM_HOME: home, ...env },
    cwd: cwd ?? home,
    signal: stop.signal,
  });
  const url = await waitFor(
    () =>
      /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout.text)?.[1] ?? (stderr.text ? "failed" : undefined),
  );
  expect(stderr.text).toBe("");
  expect((await fetch(`${url}/api/auth/status`)).status).toBe(200);
  stop.abort();
  expect(await running).toBe(EXIT_OK);
  return url;
}

describe("dimsum serve and PORT", () => {
  it("listens on PORT when --port is not given, from the environment or .env", async () => {
    const port = await freePort();
    expect(await servedUrl({}, { PORT: String(port) })).toBe(`http://127.0.0.1:${port}`);

    const cwd = tempDir();
    const fromFile = await freePort();
    writeFileSync(join(cwd, ".env"), `PORT=${fromFile}\n`);
    expect(await servedUrl({}, {}, cwd)).toBe(`http://127.0.0.1:${fromFile}`);
  }, 60_000);

  it("lets --port win over PORT", async () => {
    const [flag, env] = [await freePort(), await freePort()];
    expect(await servedUrl({ port: flag }, { PORT: String(env) })).toBe(`http://127.0.0.1:${flag}`);
  }, 60_000);

  it("refuses a PORT that is not a port, naming it", async () => {
    const home = tempDir();
    const stderr = sink();
    const code = await serveCommand(
      {},
      { stdout: sink(), stderr, env: { DIMSUM_HOME: home, PORT: "eighty" }, cwd: home },
    );
    expect(code).toBe(EXIT_CONFIG);
    expect(stderr.text).toContain('PORT is "eighty", not a port number');
  }, 60_000);
});
