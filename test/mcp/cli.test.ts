/** The `dimsum mcp ...` command functions, with real servers from a temp DIMSUM_HOME/mcp.json. */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CliIo,
  mcpCallCommand,
  mcpListCommand,
  mcpServeCommand,
  mcpToolsCommand,
} from "../../src/cli/commands/mcp.js";
import { EVERYTHING, FILESYSTEM, makeTempDir, removeTempDir, waitFor } from "./helpers.js";

interface TestIo {
  io: CliIo;
  stdin: PassThrough;
  out(): string;
  err(): string;
}

function makeIo(env: Record<string, string | undefined>, cwd: string): TestIo {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (chunk) => {
    out += chunk;
  });
  stderr.on("data", (chunk) => {
    err += chunk;
  });
  return {
    io: {
      stdin: stdin as unknown as NodeJS.ReadStream,
      stdout: stdout as unknown as NodeJS.WriteStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      env,
      cwd,
    },
    stdin,
    out: () => out,
    err: () => err,
  };
}

describe("dimsum mcp commands", () => {
  let home: string;
  let project: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    home = await makeTempDir();
    project = await makeTempDir();
    await writeFile(join(project, "inside.txt"), "project file");
    env = { ...process.env, DIMSUM_HOME: home, DIMSUM_CONFIG: undefined };
    await writeFile(
      join(home, "mcp.json"),
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
          files: { command: process.execPath, args: [FILESYSTEM, project] },
          ghost: { command: "dimsum-no-such-server" },
          off: { command: "whatever", enabled: false },
        },
      }),
    );
  });
  afterAll(async () => {
    await removeTempDir(home);
    await removeTempDir(project);
  });

  it("list: shows every server with status, tool count and last error", async () => {
    const t = makeIo(env, project);
    expect(await mcpListCommand({}, t.io)).toBe(0);
    const lines = t.out().split("\n");
    expect(lines[0]).toMatch(/^SERVER\s+TRANSPORT\s+STATUS\s+TOOLS\s+LAST ERROR$/);
    expect(lines.find((l) => l.startsWith("everything"))).toMatch(/stdio\s+connected\s+\d+/);
    expect(lines.find((l) => l.startsWith("ghost"))).toMatch(
      /failed\s+-\s+cannot start `dimsum-no-such-server`/,
    );
    expect(lines.find((l) => l.startsWith("off"))).toMatch(/disabled/);
  });

  it("list --json: machine-readable statuses", async () => {
    const t = makeIo(env, project);
    await mcpListCommand({ json: true }, t.io);
    const statuses = JSON.parse(t.out()) as Array<{ name: string; state: string; toolCount: number }>;
    expect(statuses.find((s) => s.name === "files")).toMatchObject({ state: "connected" });
    expect(statuses.find((s) => s.name === "files")?.toolCount).toBeGreaterThan(3);
  });

  it("list: explains where to put servers when there are none", async () => {
    const empty = await makeTempDir();
    try {
      const t = makeIo({ ...env, DIMSUM_HOME: empty }, empty);
      expect(await mcpListCommand({}, t.io)).toBe(0);
      expect(t.out()).toContain(join(empty, "mcp.json"));
    } finally {
      await removeTempDir(empty);
    }
  });

  it("tools: lists one server's tools under the names the model sees", async () => {
    const t = makeIo(env, project);
    expect(await mcpToolsCommand("everything", {}, t.io)).toBe(0);
    expect(t.out()).toMatch(/^everything_echo\s*\(echo\)$/m);
    expect(t.out()).toContain("parameters: message: string (required)");
  });

  it("tools: an unknown server is a config error listing the configured ones", async () => {
    const t = makeIo(env, project);
    expect(await mcpToolsCommand("nope", {}, t.io)).toBe(3);
    expect(t.err()).toMatch(/Unknown MCP server: nope.*everything, files, ghost, off/);
  });

  it("tools: a server that cannot start is reported with its error", async () => {
    const t = makeIo(env, project);
    expect(await mcpToolsCommand("ghost", {}, t.io)).toBe(1);
    expect(t.err()).toMatch(/"ghost" is unavailable: cannot start/);
  });

  it("call: runs a tool with JSON arguments", async () => {
    const t = makeIo(env, project);
    expect(await mcpCallCommand("everything", "get-sum", '{"a": 19, "b": 23}', {}, t.io)).toBe(0);
    expect(t.out()).toContain("42");
  });

  it("call: prints images as a placeholder, or everything with --json", async () => {
    const t = makeIo(env, project);
    expect(await mcpCallCommand("everything", "get-tiny-image", undefined, {}, t.io)).toBe(0);
    expect(t.out()).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const j = makeIo(env, project);
    await mcpCallCommand("everything", "everything_get-tiny-image", "{}", { json: true }, j.io);
    expect(JSON.parse(j.out()).content.some((p: { type: string }) => p.type === "image")).toBe(true);
  });

  it("call: bad arguments and unknown tools are usage errors; error results exit 1", async () => {
    const bad = makeIo(env, project);
    expect(await mcpCallCommand("everything", "get-sum", '{"a": "x"}', {}, bad.io)).toBe(2);
    expect(bad.err()).toMatch(/Invalid arguments for `everything_get-sum`/);
    const unknown = makeIo(env, project);
    expect(await mcpCallCommand("everything", "nope", "{}", {}, unknown.io)).toBe(2);
    expect(unknown.err()).toMatch(/no tool `nope`.*echo/);
    const failing = makeIo(env, project);
    expect(await mcpCallCommand("files", "read_text_file", '{"path": "/etc/hostname"}', {}, failing.io)).toBe(
      1,
    );
    expect(failing.out()).toMatch(/^error: /);
  });

  it("serve: answers MCP over stdin/stdout and ends when stdin closes", async () => {
    const t = makeIo(env, project);
    const done = mcpServeCommand({ tools: "calculator,read_file" }, t.io);
    const send = (message: unknown) => t.stdin.write(`${JSON.stringify(message)}\n`);
    const responses = () =>
      t
        .out()
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map(
          (l) =>
            JSON.parse(l) as {
              id?: number;
              result?: { content?: Array<{ text: string }>; tools?: unknown[] };
            },
        );
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });
    await waitFor(() => responses().some((r) => r.id === 1), 10_000, "initialize result");
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "read_file", arguments: { path: "inside.txt" } },
    });
    await waitFor(() => responses().some((r) => r.id === 3), 10_000, "call result");
    const list = responses().find((r) => r.id === 2);
    expect(list?.result?.tools).toHaveLength(2);
    expect(responses().find((r) => r.id === 3)?.result?.content?.[0]?.text).toContain("project file");
    expect(t.err()).toContain(`2 tools, workspace ${project}`);
    t.stdin.end();
    expect(await done).toBe(0);
  });
});
