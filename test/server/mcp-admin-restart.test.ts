/**
 * A server added in Settings → MCP servers survives a restart of the real `dimsum serve` process
 * over the same home: the second process starts it with the saved (decrypted) env and offers its
 * tools; removing it there keeps it gone after the next restart. With private networks allowed in
 * the config, a remote server on 127.0.0.1 (the everything server over Streamable HTTP) is added.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { join, resolve } from "node:path";
import { afterEach, expect, it } from "vitest";
import type { CatalogueEntry } from "../../src/capabilities/index.js";
import type { McpServerView } from "../../src/mcp/server-pool.js";
import { EVERYTHING, startEverythingHttp } from "../mcp/helpers.js";
import { projectRoot } from "../support/fixtures.js";
import { call, login, type Session, tempDir, waitFor } from "./helpers.js";

const CLI = resolve(projectRoot, "bin/dimsum.js");
const PASSWORD = "mcp-admin-restart-password";

let serve: ChildProcess | undefined;

afterEach(async () => stop());

async function stop(): Promise<void> {
  const child = serve;
  serve = undefined;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await exited;
}

async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  const { port } = probe.address() as AddressInfo;
  await new Promise((r) => probe.close(r));
  return port;
}

async function start(home: string): Promise<{ url: string; owner: Session }> {
  let output = "";
  serve = spawn(process.execPath, [CLI, "serve", "--port", String(await freePort())], {
    cwd: home,
    env: { ...process.env, DIMSUM_HOME: home, DIMSUM_OWNER_PASSWORD: PASSWORD },
    stdio: ["ignore", "pipe", "pipe"],
  });
  serve.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  serve.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const url = await waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]);
  return { url, owner: await login(url, "owner", PASSWORD) };
}

async function servers(url: string, owner: Session): Promise<McpServerView[]> {
  return (await (await call(url, "/api/mcp", { session: owner })).json()) as McpServerView[];
}

async function tools(url: string, owner: Session): Promise<string[]> {
  const catalogue = (await (await call(url, "/api/tools", { session: owner })).json()) as CatalogueEntry[];
  return catalogue.map((e) => e.name);
}

it("keeps a server added in Settings over a restart of dimsum serve, and forgets a removed one", async () => {
  const home = tempDir("dimsum-mcp-admin-");
  let { url, owner } = await start(home);
  const added = await call(url, "/api/mcp", {
    session: owner,
    body: {
      name: "everything",
      transport: "stdio",
      command: process.execPath,
      args: [EVERYTHING, "stdio"],
      env: { EV_TOKEN: "secret-restart-1" },
    },
  });
  expect(added.status).toBe(201);
  expect(await tools(url, owner)).toContain("everything_echo");

  await stop();
  ({ url, owner } = await start(home));
  // Started in the background at boot: wait for its first connection.
  let listed: McpServerView[] = [];
  for (let i = 0; i < 400; i++) {
    listed = await servers(url, owner);
    if (listed[0]?.status === "connected") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(listed.map((s) => [s.name, s.status, s.removable])).toEqual([["everything", "connected", true]]);
  expect(await tools(url, owner)).toContain("everything_echo");
  expect(JSON.stringify(listed)).not.toContain("secret-restart-1");

  expect((await call(url, "/api/mcp/everything", { session: owner, method: "DELETE" })).status).toBe(204);
  await stop();
  ({ url, owner } = await start(home));
  expect(await servers(url, owner)).toEqual([]);
  expect(await tools(url, owner)).not.toContain("everything_echo");
}, 60_000);

it("adds a remote server on a loopback URL when the config allows private networks", async () => {
  const home = tempDir("dimsum-mcp-admin-");
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ tools: { fetch: { allowPrivateNetwork: true } } }),
  );
  const remote = await startEverythingHttp("streamableHttp");
  try {
    const { url, owner } = await start(home);
    const res = await call(url, "/api/mcp", { session: owner, body: { name: "remote", url: remote.url } });
    const view = (await res.json()) as McpServerView;
    expect(res.status, JSON.stringify(view)).toBe(201);
    expect(view).toMatchObject({ name: "remote", transport: "streamable-http", status: "connected" });
    expect(await tools(url, owner)).toContain("remote_echo");
  } finally {
    await stop();
    await remote.stop();
  }
}, 60_000);
