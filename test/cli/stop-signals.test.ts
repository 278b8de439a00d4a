/**
 * The real CLI (bin/dimsum.js, built) told to stop: a reader that closes stdout (EPIPE) and SIGTERM.
 * Each must end the command quietly and leave no tool process behind. Needs `npm run build` first.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { cleanEnv, jsonLines, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";

const EVERYTHING = join(projectRoot, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

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

/**
 * Whether a live process's command line contains `token` (commands run in a PID namespace, so the
 * pids they write are not host pids; a zombie's command line is empty).
 */
function running(token: string): boolean {
  return readdirSync("/proc").some((entry) => {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) return false;
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(token);
    } catch {
      return false;
    }
  });
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
    // A model with a 1M-token window, so three big prompts in one session need no compaction.
    const env = { ...envFor(), DIMSUM_MODEL: "openai:gpt-4.1" };
    // Prompts big enough that the listing (1.8 MB) far overflows what the pipe and the reader take
    // before the reader leaves, so writes go on after it left.
    const big = "x".repeat(600_000);
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
            command:
              "sleep 97.6101 > /dev/null 2>&1 & echo $! > bg.pid; echo $$ > sleep.pid; exec sleep 300.6102",
          },
        },
      ],
    });
    const env = envFor();
    const child = spawnCli(["run", "--yes", "-w", workspace, "--user", "A", "--session", "t", "sleep"], env);
    const ended = collect(child, false);
    await waitForFile(join(workspace, "sleep.pid"), child);
    await waitForFile(join(workspace, "bg.pid"), child);
    expect(running("300.6102")).toBe(true);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).not.toMatch(STACK_LINE);
    await expect.poll(() => running("300.6102"), { timeout: 5000 }).toBe(false);
    await expect.poll(() => running("97.6101"), { timeout: 5000 }).toBe(false);
    // The database was closed with the run recorded as ended, not left running.
    const runs = await runCli(["runs", "--json", "--user", "A", "--session", "t"], { env });
    expect(jsonLines(runs.stdout)[0]?.status).not.toBe("running");
  });

  it("does not let a background job outlive a run that ends normally", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "dimsum-ws-"));
    server.enqueue(
      { toolCalls: [{ name: "execute_command", args: { command: "sleep 97.6103 & echo $! > pidfile" } }] },
      { text: "started it" },
    );
    const result = await runCli(["run", "--yes", "-w", workspace, "go"], { env: envFor() });
    expect(result.code).toBe(0);
    expect(existsSync(join(workspace, "pidfile"))).toBe(true);
    await expect.poll(() => running("97.6103"), { timeout: 5000 }).toBe(false);
  });
});

describe("SIGTERM in dimsum chat", () => {
  it("aborts the turn, ends the tool's process and exits 143", async () => {
    const workspace = mkdtempSync(join(tmpdir(), "dimsum-ws-"));
    server.enqueue({
      toolCalls: [{ name: "execute_command", args: { command: "echo $$ > sleep.pid; exec sleep 300.6104" } }],
    });
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin/dimsum.js"), "chat", "--yes", "-w", workspace, "--user", "A", "--session", "c"],
      { env: envFor(), cwd: workspace, stdio: ["pipe", "pipe", "pipe"] },
    );
    // stdin stays open: the chat would wait for the next line if SIGTERM did not end it.
    child.stdin.write("please sleep\n");
    const ended = collect(child, false);
    await waitForFile(join(workspace, "sleep.pid"), child);
    expect(running("300.6104")).toBe(true);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).not.toMatch(STACK_LINE);
    await expect.poll(() => running("300.6104"), { timeout: 5000 }).toBe(false);
  });
});

/** The pids of live processes whose parent is `parent`. */
function childrenOf(parent: number): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // stat: "pid (comm) state ppid ..."; comm may hold spaces, so read after the last ")".
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return fields[0] !== "Z" && Number(fields[1]) === parent;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ");
  } catch {
    return false;
  }
}

describe("SIGTERM in dimsum kb add", () => {
  it("cancels the ingest like Ctrl-C, keeps the finished files, closes the database and exits 143", async () => {
    const home = mkdtempSync(join(tmpdir(), "dimsum-home-"));
    const docs = join(mkdtempSync(join(tmpdir(), "dimsum-docs-")), "docs");
    mkdirSync(docs);
    // Enough text that indexing takes far longer than delivering a signal.
    const total = 5000;
    const body = "A sentence about the quarterly plan and its many moving parts. ".repeat(60);
    for (let i = 0; i < total; i++) writeFileSync(join(docs, `note-${i}.md`), `# Note ${i}\n\n${body}\n`);
    const env = cleanEnv({ DIMSUM_HOME: home });
    const child = spawnCli(["kb", "add", "notes", docs, "--max-files", String(total)], env);
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const ended = collect(child, false);
    // The first progress line: files are being indexed, and the stop handlers are in place.
    await expect.poll(() => stderr.includes("adding to notes:"), { timeout: 30_000 }).toBe(true);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).toContain("cancelling");
    expect(result.stderr).not.toMatch(STACK_LINE);
    // The database was closed: SQLite removes the WAL file when the last connection closes.
    expect(existsSync(join(home, "dimsum.db"))).toBe(true);
    expect(existsSync(join(home, "dimsum.db-wal"))).toBe(false);
    // Files finished before the stop stay indexed, and not all of them were.
    const listed = await runCli(["kb", "list", "notes", "--json"], { env });
    expect(listed.code).toBe(0);
    const indexed = (JSON.parse(listed.stdout) as unknown[]).length;
    expect(indexed).toBeLessThan(total);
  }, 60_000);
});

describe("SIGTERM in dimsum mcp call", () => {
  it("cancels the call, closes the MCP server and exits 143", async () => {
    const home = mkdtempSync(join(tmpdir(), "dimsum-home-"));
    writeFileSync(
      join(home, "mcp.json"),
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } },
      }),
    );
    const child = spawnCli(
      ["mcp", "call", "everything", "trigger-long-running-operation", '{"duration":300,"steps":300}'],
      cleanEnv({ DIMSUM_HOME: home }),
    );
    const ended = collect(child, false);
    let servers: number[] = [];
    await expect
      .poll(
        () => {
          servers = childrenOf(child.pid!);
          return servers.length;
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    child.kill("SIGTERM");
    const result = await ended;
    expect(result.signal).toBeNull();
    expect(result.code).toBe(143);
    expect(result.stderr).toContain("cancelled (SIGTERM)");
    expect(result.stderr).not.toMatch(STACK_LINE);
    await expect.poll(() => servers.some(alive), { timeout: 5000 }).toBe(false);
  }, 60_000);
});
