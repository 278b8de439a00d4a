/**
 * The real CLI (bin/dimsum.js, built) told to stop: a reader that closes stdout (EPIPE) and SIGTERM.
 * Each must end the command quietly and leave no tool process behind. Needs `npm run build` first.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

let server: FakeLlmServer;
beforeAll(async () => {
  server = await startFakeLlmServer({ strict: true });
});
afterAll(() => server.close());
beforeEach(() => server.reset());

function envFor(): Record<string, string | undefined> {
  return cleanEnv({
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${server.url}/v1`,
    DIMSUM_MODEL: "openai:gpt-4o",
  });
}

type Cli = ChildProcessByStdio<null, Readable, Readable> | ChildProcessByStdio<Writable, Readable, Readable>;

function spawnCli(args: string[], env: Record<string, string | undefined>): Cli {
  return spawn(process.execPath, [join(projectRoot, "bin/dimsum.js"), ...args], {
    env,
    cwd: mkdtempSync(join(tmpdir(), "dimsum-cwd-")),
    stdio: ["ignore", "pipe", "pipe"],
  });
}

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  firstLine: string;
}

/** Reads the first stdout line, then closes the pipe as `head -1` does; resolves when the CLI exits. */
function readFirstLineThenClose(child: Cli): Promise<Ended> {
  return collect(child, true);
}

function collect(child: Cli, closeAfterFirstLine: boolean): Promise<Ended> {
  let stderr = "";
  let stdout = "";
  let firstLine = "";
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    const newline = stdout.indexOf("\n");
    if (newline >= 0 && firstLine === "") {
      firstLine = stdout.slice(0, newline);
      if (closeAfterFirstLine) child.stdout.destroy();
    }
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, stderr, firstLine });
    });
  });
}

/** Alive and not a zombie (an orphan's exit may wait a moment for the reaper). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function waitForFile(path: string, child: Cli): Promise<number> {
  await expect
    .poll(() => existsSync(path) && readFileSync(path, "utf8").trim() !== "", { timeout: 15_000 })
    .toBe(true);
  expect(child.exitCode).toBeNull();
  return Number(readFileSync(path, "utf8").trim());
}

const STACK_LINE = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

describe("a reader that closes stdout", () => {
  it("ends `dimsum runs --json | head -1` quietly", async () => {
    const env = envFor();
    // Prompts big enough that the listing overflows the pipe, so writes go on after the reader left.
    const big = "x".repeat(100_000);
    for (const n of [1, 2, 3]) {
      server.enqueue({ text: `answer ${n}` });
      const made = await runCli(["run", "--user", "A", "--session", "s", "-"], { env, input: big });
      expect(made.code).toBe(0);
    }
    const ended = await readFirstLineThenClose(
      spawnCli(["runs", "--json", "--user", "A", "--session", "s"], env),
    );
    expect(JSON.parse(ended.firstLine)).toMatchObject({ status: "done" });
    expect(ended.stderr).not.toMatch(STACK_LINE);
    expect(ended.stderr).not.toContain("EPIPE");
    expect(ended.signal).toBeNull();
    expect(ended.code).toBe(141);
  });

  it("ends `dimsum run --json … | head -1` quietly, aborting the run", async () => {
    server.enqueue({ text: "this answer comes after the reader has gone", delayMs: 500 });
    const ended = await readFirstLineThenClose(spawnCli(["run", "--json", "hello"], envFor()));
    expect(jsonLines(ended.firstLine)[0]?.type).toBeTruthy();
    expect(ended.stderr).not.toMatch(STACK_LINE);
    expect(ended.stderr).not.toContain("EPIPE");
    expect(ended.signal).toBeNull();
    expect(ended.code).toBe(141);
  });
});

describe("SIGTERM", () => {
  it("aborts the run, ends the tool's processes and exits 143", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "dimsum-ws-"));
    server.enqueue({
      toolCalls: [
        {
          name: "execute_command",
          // A background job as well as the foreground command: neither may outlive the run.
          args: {
            command: "sleep 97 > /dev/null 2>&1 & echo $! > bg.pid; echo $$ > sleep.pid; exec sleep 300",
          },
        },
      ],
    });
    const env = envFor();
    const child = spawnCli(["run", "--yes", "-w", workspace, "--user", "A", "--session", "t", "sleep"], env);
    const ended = collect(child, false);
    const sleepPid = await waitForFile(join(workspace, "sleep.pid"), child);
    const bgPid = await waitForFile(join(workspace, "bg.pid"), child);
    expect(isAlive(sleepPid)).toBe(true);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).not.toMatch(STACK_LINE);
    await expect.poll(() => isAlive(sleepPid), { timeout: 5000 }).toBe(false);
    await expect.poll(() => isAlive(bgPid), { timeout: 5000 }).toBe(false);
    // The database was closed with the run recorded as ended, not left running.
    const runs = await runCli(["runs", "--json", "--user", "A", "--session", "t"], { env });
    expect(jsonLines(runs.stdout)[0]?.status).not.toBe("running");
  });

  it("does not let a background job outlive a run that ends normally", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "dimsum-ws-"));
    server.enqueue(
      { toolCalls: [{ name: "execute_command", args: { command: "sleep 97 & echo $! > pidfile" } }] },
      { text: "started it" },
    );
    const result = await runCli(["run", "--yes", "-w", workspace, "go"], { env: envFor() });
    expect(result.code).toBe(0);
    const pid = Number(readFileSync(join(workspace, "pidfile"), "utf8").trim());
    await expect.poll(() => isAlive(pid), { timeout: 5000 }).toBe(false);
  });
});

describe("SIGTERM in dimsum chat", () => {
  it("aborts the turn, ends the tool's process and exits 143", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "dimsum-ws-"));
    server.enqueue({
      toolCalls: [{ name: "execute_command", args: { command: "echo $$ > sleep.pid; exec sleep 300" } }],
    });
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin/dimsum.js"), "chat", "--yes", "-w", workspace, "--user", "A", "--session", "c"],
      { env: envFor(), cwd: workspace, stdio: ["pipe", "pipe", "pipe"] },
    );
    // stdin stays open: the chat would wait for the next line if SIGTERM did not end it.
    child.stdin.write("please sleep\n");
    const ended = collect(child, false);
    const sleepPid = await waitForFile(join(workspace, "sleep.pid"), child);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).not.toMatch(STACK_LINE);
    await expect.poll(() => isAlive(sleepPid), { timeout: 5000 }).toBe(false);
  });
});
