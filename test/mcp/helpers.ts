/** Shared helpers for the MCP tests: real server processes from node_modules, temp dirs, waiting. */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { McpHttpServerConfig, McpStdioServerConfig } from "../../src/mcp/config.js";
import { defaultToolsConfig } from "../../src/tools/builtin/defaults.js";
import { memoryTodoStore } from "../../src/tools/memory-todo-store.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { projectRoot } from "../support/fixtures.js";

export const EVERYTHING = resolve(
  projectRoot,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const FILESYSTEM = resolve(
  projectRoot,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);
export const FIXTURES = resolve(projectRoot, "test/mcp/fixtures");
/** The MCP Apps example "basic-server-vanillajs" (a get-time tool with an app; run with `--stdio`). */
export const BASIC_APP = resolve(
  projectRoot,
  "node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js",
);

/** A stdio server entry as loadMcpConfig would produce it. */
export function stdioServer(
  name: string,
  args: string[],
  overrides: Partial<McpStdioServerConfig> = {},
): McpStdioServerConfig {
  return {
    name,
    transport: "stdio",
    command: process.execPath,
    args,
    env: {},
    enabled: true,
    include: [],
    exclude: [],
    source: "test",
    ...overrides,
  };
}

/** An HTTP server entry. */
export function httpServer(
  name: string,
  url: string,
  overrides: Partial<McpHttpServerConfig> = {},
): McpHttpServerConfig {
  return {
    name,
    transport: "http",
    url,
    headers: {},
    enabled: true,
    include: [],
    exclude: [],
    source: "test",
    ...overrides,
  };
}

export const everything = (name = "everything", overrides: Partial<McpStdioServerConfig> = {}) =>
  stdioServer(name, [EVERYTHING, "stdio"], overrides);

export const filesystem = (dir: string, name = "fs", overrides: Partial<McpStdioServerConfig> = {}) =>
  stdioServer(name, [FILESYSTEM, dir], overrides);

/** The process env the servers need (PATH and friends), as the CLI would pass it. */
export const testEnv: Record<string, string | undefined> = { ...process.env };

export async function makeTempDir(prefix = "dimsum-mcp-"): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

export function toolContext(workspace = tmpdir(), signal = new AbortController().signal): ToolContext {
  return {
    signal,
    workspace,
    runId: "mcp-test",
    todos: memoryTodoStore(),
    config: defaultToolsConfig(),
  };
}

/** The text of a result, images as `[image mime]`. */
export function textOf(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((p) => (p.type === "text" ? p.text : `[image ${p.mimeType}]`)).join("\n");
}

/** A port that was free a moment ago (for servers that take a port number, not 0). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

/** Polls `check` until it returns true (at most `limitMs`). */
export async function waitFor(check: () => boolean, limitMs = 10_000, what = "condition"): Promise<void> {
  const end = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface RunningHttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the everything server in `streamableHttp` or `sse` mode on a free port and waits until it
 * listens. The path is `/mcp` for Streamable HTTP and `/sse` for SSE.
 */
export async function startEverythingHttp(
  mode: "streamableHttp" | "sse",
  port?: number,
): Promise<RunningHttpServer> {
  const chosen = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { ...process.env, PORT: String(chosen) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const onData = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  await waitFor(
    () => /listening on port|running on port/i.test(output) || child.exitCode !== null,
    15_000,
    `everything ${mode}`,
  );
  if (child.exitCode !== null) throw new Error(`everything ${mode} exited: ${output}`);
  return {
    url: `http://127.0.0.1:${chosen}/${mode === "sse" ? "sse" : "mcp"}`,
    child,
    stop: () => stopProcess(child),
  };
}

/** Kills a child process and waits for it to exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.kill("SIGKILL");
  await exited;
}

/** Sources the compiled MCP entry points depend on; edits elsewhere do not need a rebuild for these tests. */
const BUILD_INPUTS = ["src/mcp", "src/tools", "src/errors.ts", "src/llm/types.ts"];
const LOCK_STALE_MS = 180_000;

/**
 * Makes sure dist/ holds a build at least as new as the MCP sources (tests that spawn compiled entry
 * points need it). Builds with tsc when stale; other modules' type errors do not stop the emit. A lock
 * directory keeps test files running in parallel from building at the same time.
 */
export function ensureBuilt(): void {
  const built = join(projectRoot, "dist/mcp/server.js");
  const fresh = () => {
    const builtAt = mtime(built);
    return (
      builtAt !== undefined &&
      builtAt >= Math.max(...BUILD_INPUTS.map((p) => newestSource(join(projectRoot, p))))
    );
  };
  if (fresh()) return;
  const lock = join(projectRoot, "dist/.mcp-test-build.lock");
  mkdirSync(join(projectRoot, "dist"), { recursive: true });
  while (!tryLock(lock)) {
    sleepSync(200);
    if (fresh()) return;
  }
  try {
    if (fresh()) return;
    const result = spawnSync(
      process.execPath,
      ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"],
      {
        cwd: projectRoot,
        encoding: "utf8",
      },
    );
    if (result.error) throw result.error;
    if (mtime(built) === undefined) throw new Error(`the build did not produce ${built}:\n${result.stdout}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

function tryLock(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch {
    // A lock left by a killed test run must not block every later run.
    if (Date.now() - (mtime(lock) ?? Date.now()) > LOCK_STALE_MS)
      rmSync(lock, { recursive: true, force: true });
    return false;
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function mtime(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}

function newestSource(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (stat.isFile()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
    newest = Math.max(newest, mtime(join(entry.parentPath, entry.name)) ?? 0);
  }
  return newest;
}
