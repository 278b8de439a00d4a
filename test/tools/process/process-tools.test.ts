/**
 * Session processes with the real sandbox: a ticker read twice (only new lines the second time),
 * waited for by pattern, stopped and gone from the machine; a port served inside the sandbox reached
 * through its bridge; the per-session limit refusing a fourth process.
 */
import { readdirSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectSandbox } from "../../../src/tools/builtin/sandbox/detect.js";
import { ProcessManager } from "../../../src/tools/process/process-manager.js";
import {
  processListTool,
  processReadTool,
  processStartTool,
  processStopTool,
  processWriteTool,
} from "../../../src/tools/process/process-tools.js";
import { DEFAULT_PROCESS_SETTINGS } from "../../../src/tools/process/types.js";
import type { ToolContext } from "../../../src/tools/types.js";
import { makeContext, makeTempDir, removeTempDir, runTool, textOf } from "../builtin/context.js";

const sandboxed = (await detectSandbox("/usr/bin/bwrap")).available;
let workspace: string;
let manager: ProcessManager;
let ctx: ToolContext;

beforeEach(async () => {
  workspace = await makeTempDir("dimsum-proc-");
  manager = new ProcessManager({
    settings: { ...DEFAULT_PROCESS_SETTINGS, perSession: 3 },
    registryDir: join(workspace, ".registry"),
  });
  const base = makeContext(workspace);
  ctx = {
    ...base,
    config: { ...base.config, shell: { ...base.config.shell, allow: [] } },
    processes: { manager, key: "cli:test" },
  };
});
afterEach(async () => {
  await manager.closeAll();
  await removeTempDir(workspace);
});

/** Host pids whose command line contains `token`. */
function running(token: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(token)) found.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return found;
}

const TICKER = (token: string) =>
  `for i in ${Array.from({ length: 60 }, (_, i) => i).join(" ")}; do echo "${token} $i"; sleep 1; done`;

describe.skipIf(!sandboxed)("session processes in the sandbox", () => {
  it("reads only new lines, waits for a pattern, stops, and leaves nothing running", async () => {
    const token = `tick${process.pid}a`;
    const started = await runTool(processStartTool, { name: "ticker", command: TICKER(token) }, ctx);
    expect(started.isError).toBeUndefined();
    const first = await runTool(processReadTool, { name: "ticker", waitForPattern: `${token} 1$` }, ctx);
    expect(textOf(first)).toContain(`${token} 0`);
    expect(textOf(first)).toContain(`${token} 1`);
    const second = await runTool(processReadTool, { name: "ticker", waitForPattern: `${token} 3$` }, ctx);
    expect(textOf(second)).not.toContain(`${token} 0`);
    expect(textOf(second)).not.toContain(`${token} 1\n`);
    expect(textOf(second)).toContain(`${token} 2`);
    expect(textOf(second)).toContain(`${token} 3`);
    expect(running(token).length).toBeGreaterThan(0);
    const list = await runTool(processListTool, {}, ctx);
    expect(textOf(list)).toContain("ticker: running");
    const stopped = await runTool(processStopTool, { name: "ticker" }, ctx);
    expect(textOf(stopped)).toBe("Stopped ticker.");
    expect(textOf(await runTool(processListTool, {}, ctx))).toContain("ticker: stopped (stopped on request)");
    expect(running(token)).toEqual([]);
    expect(readdirSync(join(workspace, ".registry"))).toEqual([]);
  }, 30_000);

  it("gives up waiting at the timeout and says the pattern did not appear", async () => {
    await runTool(processStartTool, { name: "quiet", command: "sleep 30" }, ctx);
    const read = await runTool(
      processReadTool,
      { name: "quiet", waitForPattern: "never", timeoutSeconds: 0.5 },
      ctx,
    );
    expect(read.isError).toBe(true);
    expect(textOf(read)).toContain("The pattern did not appear");
  }, 30_000);

  it("takes input on stdin", async () => {
    await runTool(processStartTool, { name: "echo", command: "while read l; do echo got:$l; done" }, ctx);
    await runTool(processWriteTool, { name: "echo", input: "hello" }, ctx);
    const read = await runTool(processReadTool, { name: "echo", waitForPattern: "got:" }, ctx);
    expect(textOf(read)).toContain("got:hello");
  }, 30_000);

  it("reaches a port served inside the sandbox through the bridge, and lists it", async () => {
    await mkdir(join(workspace, "site"));
    const server = `node -e "require('http').createServer((q,s)=>s.end('hello from '+q.url)).listen(4173,'127.0.0.1')"`;
    await runTool(processStartTool, { name: "web", command: server, workingDirectory: "site" }, ctx);
    const ready = await runTool(processReadTool, { name: "web", waitForPort: 4173 }, ctx);
    expect(textOf(ready)).toContain("The port is listening.");
    expect(manager.list("cli:test")[0]?.ports).toEqual([4173]);
    const socket = await manager.connect("cli:test", "web", 4173);
    expect(socket).toBeDefined();
    // The bridge hands the socket over paused: whoever takes it pipes or resumes it.
    const body = await new Promise<string>((resolve) => {
      let text = "";
      socket?.on("data", (d: Buffer) => (text += d.toString()));
      socket?.on("end", () => resolve(text));
      socket?.write("GET /page HTTP/1.0\r\nHost: x\r\n\r\n");
      socket?.resume();
    });
    expect(body).toMatch(/^HTTP\/1.1 200 OK[\s\S]*\r\n\r\nhello from \/page$/);
    // Another session sees no process and reaches no port.
    expect(await manager.connect("cli:other", "web", 4173)).toBeUndefined();
    // A port nothing listens on.
    expect(await manager.connect("cli:test", "web", 4174)).toBeUndefined();
  }, 30_000);

  it("refuses a fourth process when the session's limit is 3", async () => {
    for (const name of ["a", "b", "c"]) {
      expect((await runTool(processStartTool, { name, command: "sleep 30" }, ctx)).isError).toBeUndefined();
    }
    const fourth = await runTool(processStartTool, { name: "d", command: "sleep 30" }, ctx);
    expect(fourth.isError).toBe(true);
    expect(textOf(fourth)).toContain("its limit (tools.processes.perSession = 3)");
    await runTool(processStopTool, { name: "a" }, ctx);
    expect(
      (await runTool(processStartTool, { name: "d", command: "sleep 30" }, ctx)).isError,
    ).toBeUndefined();
  }, 30_000);

  it("stops every process of a session when it is closed", async () => {
    const token = `tick${process.pid}b`;
    await runTool(processStartTool, { name: "t", command: TICKER(token) }, ctx);
    await runTool(processReadTool, { name: "t", waitForPattern: token }, ctx);
    await manager.stopSession("cli:test", "the session was closed");
    expect(running(token)).toEqual([]);
    expect(manager.list("cli:test")).toEqual([]);
  }, 30_000);
});
