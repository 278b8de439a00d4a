/**
 * The MCP client against real servers over stdio: @modelcontextprotocol/server-everything and
 * @modelcontextprotocol/server-filesystem, spawned as processes by the manager.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { McpManager, type McpServerStatus } from "../../src/mcp/manager.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import {
  everything,
  filesystem,
  makeTempDir,
  removeTempDir,
  stdioServer,
  testEnv,
  textOf,
  toolContext,
  waitFor,
} from "./helpers.js";

async function call(manager: McpManager, wireName: string, args: unknown) {
  const prepared = manager.registry.prepareCall(wireName, JSON.stringify(args));
  if (!prepared.ok) throw new Error(prepared.error);
  return manager.registry.execute(prepared, toolContext());
}

describe("everything + filesystem over stdio", () => {
  let dir: string;
  let manager: McpManager;
  const statuses: McpServerStatus[] = [];

  beforeAll(async () => {
    dir = await makeTempDir();
    await writeFile(join(dir, "hello.txt"), "hello from the filesystem server\n");
    manager = new McpManager({
      servers: [everything(), filesystem(dir)],
      env: testEnv,
      onStatus: (s) => statuses.push(s),
    });
    await manager.start();
  });

  afterAll(async () => {
    await manager.close();
    await removeTempDir(dir);
  });

  it("connects both servers and reports their tool counts", () => {
    const byName = Object.fromEntries(manager.statuses().map((s) => [s.name, s]));
    expect(byName.everything?.state).toBe("connected");
    expect(byName.fs?.state).toBe("connected");
    expect(byName.everything?.toolCount).toBeGreaterThan(5);
    expect(byName.everything?.serverInfo?.name).toContain("everything");
    expect(statuses.some((s) => s.name === "fs" && s.state === "connecting")).toBe(true);
  });

  it("registers tools as <server>_<tool> with their input schemas", () => {
    const names = manager.registry.names();
    expect(names).toContain("everything_echo");
    expect(names).toContain("everything_get-sum");
    expect(names).toContain("fs_read_file");
    const sum = manager.registry.schemas().find((s) => s.name === "everything_get-sum");
    expect(sum?.parameters).toMatchObject({ type: "object", properties: { a: {}, b: {} } });
    expect(manager.resolveTool("everything_get-sum")).toEqual({ server: "everything", tool: "get-sum" });
    expect(manager.tools("fs").every((t) => t.server === "fs" && t.name === `fs_${t.mcpName}`)).toBe(true);
  });

  it("calls echo and get-sum", async () => {
    const echo = await call(manager, "everything_echo", { message: "dim sum" });
    expect(echo.isError).toBeUndefined();
    expect(textOf(echo)).toBe("Echo: dim sum");
    const sum = await call(manager, "everything_get-sum", { a: 2, b: 40 });
    expect(textOf(sum)).toContain("42");
  });

  it("validates arguments against the server's schema before calling", () => {
    const prepared = manager.registry.prepareCall("everything_get-sum", JSON.stringify({ a: "two" }));
    expect(prepared.ok).toBe(false);
    if (!prepared.ok) expect(prepared.error).toMatch(/everything_get-sum/);
  });

  it("keeps an image result as an image part", async () => {
    const result = await call(manager, "everything_get-tiny-image", {});
    expect(Array.isArray(result.content)).toBe(true);
    const parts = result.content as Array<{ type: string; mimeType?: string; data?: string }>;
    const image = parts.find((p) => p.type === "image");
    expect(image?.mimeType).toBe("image/png");
    expect(
      Buffer.from(image?.data ?? "", "base64")
        .subarray(1, 4)
        .toString(),
    ).toBe("PNG");
    expect(textOf(result)).toContain("MCP logo");
  });

  it("renders an embedded resource as text with its URI", async () => {
    const result = await call(manager, "everything_get-resource-reference", {
      resourceType: "Text",
      resourceId: 3,
    });
    const text = textOf(result);
    expect(text).toMatch(/\[resource demo:\/\/resource\/dynamic\/text\/3/);
    expect(text).toContain("Resource 3");
    const blob = await call(manager, "everything_get-resource-reference", {
      resourceType: "Blob",
      resourceId: 4,
    });
    expect(textOf(blob)).toMatch(/\[resource demo:\/\/resource\/dynamic\/blob\/4: [^,]+, \d+ bytes\]/);
  });

  it("renders resource links with their URIs", async () => {
    const result = await call(manager, "everything_get-resource-links", { count: 2 });
    const text = textOf(result);
    expect(text.match(/\[resource link [^\]]*demo:\/\/resource\//g)?.length).toBe(2);
  });

  it("keeps structuredContent in data", async () => {
    const result = await call(manager, "everything_get-structured-content", { location: "New York" });
    expect(result.data).toMatchObject({ temperature: expect.any(Number) });
  });

  it("passes the server's progress notifications to the tool context", async () => {
    const messages: string[] = [];
    const prepared = manager.registry.prepareCall(
      "everything_trigger-long-running-operation",
      JSON.stringify({ duration: 0.3, steps: 3 }),
    );
    if (!prepared.ok) throw new Error(prepared.error);
    const result = await manager.registry.execute(prepared, {
      ...toolContext(),
      progress: (message) => messages.push(message),
    });
    expect(result.isError).toBeUndefined();
    // The last notification may race the result, so only the first ones are certain.
    expect(messages.slice(0, 2)).toEqual([expect.stringMatching(/^1\/3/), expect.stringMatching(/^2\/3/)]);
  });

  it("reads a file through the filesystem server", async () => {
    const result = await call(manager, "fs_read_text_file", { path: join(dir, "hello.txt") });
    expect(textOf(result)).toContain("hello from the filesystem server");
  });

  it("turns isError results into error tool results", async () => {
    const result = await call(manager, "fs_read_text_file", {
      path: "/definitely/outside/the/allowed/dir.txt",
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/denied|outside|not allowed/i);
  });
});

describe("a server killed mid-session", () => {
  let manager: McpManager;
  afterEach(async () => manager?.close());

  it("is reported, marked unavailable, and reconnected on the next call", async () => {
    manager = new McpManager({ servers: [everything()], env: testEnv });
    await manager.start();
    const before = manager.status("everything");
    expect(before?.state).toBe("connected");
    const pid = before?.pid;
    expect(pid).toBeTypeOf("number");
    process.kill(pid as number, "SIGKILL");
    await waitFor(() => manager.status("everything")?.state === "failed", 10_000, "failed state");
    expect(manager.status("everything")?.lastError).toMatch(/exited/);
    // The tools stay registered, so the model's next call is what brings the server back.
    expect(manager.registry.has("everything_echo")).toBe(true);
    const prepared = manager.registry.prepareCall("everything_echo", '{"message":"again"}');
    if (!prepared.ok) throw new Error(prepared.error);
    const result = await manager.registry.execute(prepared, toolContext());
    expect(textOf(result)).toBe("Echo: again");
    const after = manager.status("everything");
    expect(after?.state).toBe("connected");
    expect(after?.pid).not.toBe(pid);
  });

  it("gives an error result naming the server and the cause when reconnecting fails", async () => {
    const dir = await makeTempDir();
    // A launcher we can break after the first start: it runs the everything server only while a file exists.
    const flag = join(dir, "allowed");
    const launcher = join(dir, "launch.mjs");
    await writeFile(flag, "");
    await writeFile(
      launcher,
      `import { existsSync } from "node:fs";\n` +
        `if (!existsSync(${JSON.stringify(flag)})) { console.error("launcher: flag file is gone"); process.exit(3); }\n` +
        `process.argv.splice(2, 0, "stdio");\n` +
        `await import(${JSON.stringify(everything().args[0])});\n`,
    );
    try {
      manager = new McpManager({ servers: [stdioServer("flaky", [launcher])], env: testEnv });
      await manager.start();
      expect(manager.status("flaky")?.state).toBe("connected");
      await removeTempDir(flag);
      process.kill(manager.status("flaky")?.pid as number, "SIGKILL");
      await waitFor(() => manager.status("flaky")?.state === "failed", 10_000, "failed state");
      const prepared = manager.registry.prepareCall("flaky_echo", '{"message":"x"}');
      if (!prepared.ok) throw new Error(prepared.error);
      const result = await manager.registry.execute(prepared, toolContext());
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/MCP server "flaky" is unavailable/);
      expect(textOf(result)).toMatch(/flag file is gone|exited/);
      // Backoff: an immediate second call does not respawn the server, it says when it will retry.
      const again = await manager.registry.execute(prepared, toolContext());
      expect(textOf(again)).toMatch(/next reconnect attempt in \d+ s/);
    } finally {
      await removeTempDir(dir);
    }
  });
});

describe("several servers", () => {
  let dir: string;
  let manager: McpManager;
  beforeAll(async () => {
    dir = await makeTempDir();
    await writeFile(join(dir, "a.txt"), "file a");
  });
  afterAll(async () => removeTempDir(dir));
  afterEach(async () => manager?.close());

  it("keeps both tools usable when two servers offer the same tool name", async () => {
    const other = await makeTempDir();
    await writeFile(join(other, "b.txt"), "file b");
    try {
      manager = new McpManager({
        servers: [filesystem(dir, "left"), filesystem(other, "right")],
        env: testEnv,
      });
      await manager.start();
      const left = manager.registry.prepareCall(
        "left_read_text_file",
        JSON.stringify({ path: join(dir, "a.txt") }),
      );
      const right = manager.registry.prepareCall(
        "right_read_text_file",
        JSON.stringify({ path: join(other, "b.txt") }),
      );
      if (!left.ok || !right.ok) throw new Error("prepare failed");
      const [a, b] = await Promise.all([
        manager.registry.execute(left, toolContext()),
        manager.registry.execute(right, toolContext()),
      ]);
      expect(textOf(a)).toBe("file a");
      expect(textOf(b)).toBe("file b");
    } finally {
      await removeTempDir(other);
    }
  });

  it("applies include and exclude filters (globs and exact names)", async () => {
    manager = new McpManager({
      servers: [
        everything("inc", { include: ["get-*", "echo"], exclude: ["get-env"] }),
        filesystem(dir, "exc", { exclude: ["write_*", "edit_file", "move_file", "create_directory"] }),
      ],
      env: testEnv,
    });
    await manager.start();
    const inc = manager.tools("inc").map((t) => t.mcpName);
    expect(inc).toContain("echo");
    expect(inc).toContain("get-sum");
    expect(inc).not.toContain("get-env");
    expect(inc.every((n) => n === "echo" || n.startsWith("get-"))).toBe(true);
    const exc = manager.tools("exc").map((t) => t.mcpName);
    expect(exc).toContain("read_text_file");
    expect(exc).not.toContain("write_file");
    expect(exc).not.toContain("edit_file");
    expect(manager.status("inc")?.toolCount).toBe(inc.length);
  });

  it("connects the others in parallel when one command does not exist, and reports why", async () => {
    const registry = new ToolRegistry();
    manager = new McpManager({
      servers: [
        stdioServer("ghost", [], { command: "dimsum-no-such-mcp-server" }),
        everything(),
        filesystem(dir),
        stdioServer("off", [], { command: "also-missing", enabled: false }),
      ],
      env: testEnv,
      registry,
    });
    const statuses = await manager.start();
    const byName = Object.fromEntries(statuses.map((s) => [s.name, s]));
    expect(byName.ghost?.state).toBe("failed");
    expect(byName.ghost?.lastError).toMatch(/dimsum-no-such-mcp-server.*not found/);
    expect(byName.everything?.state).toBe("connected");
    expect(byName.fs?.state).toBe("connected");
    expect(byName.off?.state).toBe("disabled");
    expect(registry.names().some((n) => n.startsWith("ghost_"))).toBe(false);
    expect(registry.has("fs_list_directory")).toBe(true);
  });

  it("says so when a stdio server's working directory does not exist", async () => {
    manager = new McpManager({
      servers: [everything("lost", { cwd: join(dir, "no-such-dir") })],
      env: testEnv,
    });
    const [status] = await manager.start();
    expect(status?.lastError).toMatch(/working directory .*no-such-dir does not exist/);
  });

  it("reports a server that exits during startup with its stderr", async () => {
    const script = join(dir, "crash.mjs");
    await writeFile(script, `console.error("boom: missing API key"); process.exit(1);\n`);
    manager = new McpManager({ servers: [stdioServer("crashy", [script])], env: testEnv });
    const [status] = await manager.start();
    expect(status?.state).toBe("failed");
    expect(status?.lastError).toMatch(/exited|closed/);
    expect(status?.lastError).toContain("boom: missing API key");
  });

  it("gives up on a server that does not answer within the connect timeout", async () => {
    const script = join(dir, "silent.mjs");
    await writeFile(script, "setInterval(() => {}, 1000);\n");
    manager = new McpManager({
      servers: [stdioServer("silent", [script], { connectTimeoutMs: 300 }), everything()],
      env: testEnv,
    });
    const statuses = await manager.start();
    expect(statuses.find((s) => s.name === "silent")?.lastError).toMatch(/within 300 ms/);
    expect(statuses.find((s) => s.name === "everything")?.state).toBe("connected");
  });

  it("removes the tools and stops the processes on close", async () => {
    manager = new McpManager({ servers: [everything()], env: testEnv });
    await manager.start();
    const pid = manager.status("everything")?.pid as number;
    await manager.close();
    expect(manager.registry.names()).toEqual([]);
    expect(manager.status("everything")?.state).toBe("closed");
    await waitFor(() => !isAlive(pid), 5_000, "process exit");
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
