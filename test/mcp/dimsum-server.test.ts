/**
 * Dimsum as an MCP server: the compiled `serveStdio()` in a child process and the HTTP handler on a
 * real port, both driven by the SDK's own client. Build first: `npx tsc -p tsconfig.build.json`.
 */
import { writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHttpHandler, type McpHttpHandler } from "../../src/mcp/server.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { ensureBuilt, FIXTURES, makeTempDir, removeTempDir, toolContext, waitFor } from "./helpers.js";

type TextBlock = { type: string; text?: string };
const textOf = (result: unknown) =>
  (((result as { content?: TextBlock[] }).content ?? []) as TextBlock[]).map((b) => b.text ?? "").join("\n");

describe("dimsum mcp serve (stdio, compiled)", () => {
  let workspace: string;
  let client: Client;
  let transport: StdioClientTransport;

  beforeAll(async () => {
    ensureBuilt();
    workspace = await makeTempDir();
    await writeFile(join(workspace, "note.txt"), "inside the workspace");
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(FIXTURES, "dimsum-stdio-server.mjs"), workspace],
      stderr: "pipe",
    });
    client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(transport);
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await removeTempDir(workspace);
  });

  it("lists the built-in tools with their JSON Schemas", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of ["calculator", "read_file", "execute_command", "current_time"])
      expect(names).toContain(name);
    const calculator = tools.find((t) => t.name === "calculator");
    expect(calculator?.inputSchema).toMatchObject({
      type: "object",
      properties: { expression: { type: "string" } },
      required: ["expression"],
    });
    expect(client.getServerVersion()?.name).toBe("dimsum");
  });

  it("runs calculator", async () => {
    const result = await client.callTool({ name: "calculator", arguments: { expression: "(3 + 4) * 2^3" } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe("56");
  });

  it("keeps file tools inside the workspace", async () => {
    const inside = await client.callTool({ name: "read_file", arguments: { path: "note.txt" } });
    expect(textOf(inside)).toContain("inside the workspace");
    const outside = await client.callTool({ name: "read_file", arguments: { path: "/etc/passwd" } });
    expect(outside.isError).toBe(true);
  });

  it("refuses shell commands that need approval, since nobody can approve", async () => {
    const result = await client.callTool({ name: "execute_command", arguments: { command: "rm note.txt" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/approv/i);
  });

  it("answers invalid arguments with an error result a model can act on", async () => {
    const result = await client.callTool({ name: "calculator", arguments: { expr: "1" } });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/expression/);
  });

  it("rejects unknown tools with a protocol error", async () => {
    await expect(client.callTool({ name: "no_such_tool", arguments: {} })).rejects.toThrow(/Unknown tool/);
  });

  it("exits when the client goes away", async () => {
    const pid = transport.pid as number;
    await client.close();
    await waitFor(() => !isAlive(pid), 5_000, "server exit");
  });
});

describe("createMcpHttpHandler", () => {
  let http: Server;
  let handler: McpHttpHandler;
  let url: string;
  let port: number;
  let workspace: string;

  beforeAll(async () => {
    workspace = await makeTempDir();
    handler = createMcpHttpHandler({
      tools: new ToolRegistry(builtinTools()),
      toolContext: toolContext(workspace),
    });
    http = createServer((req, res) => void handler(req, res));
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    port = (http.address() as AddressInfo).port;
    url = `http://localhost:${port}/mcp`;
  });
  afterAll(async () => {
    await handler.close();
    await new Promise((done) => http.close(done));
    await removeTempDir(workspace);
  });

  it("serves the tools over Streamable HTTP and tells clients when the tool list changes", async () => {
    const client = new Client({ name: "test", version: "1.0.0" });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const result = await client.callTool({ name: "calculator", arguments: { expression: "sqrt(81)" } });
      expect(textOf(result)).toBe("9");
      // The hook for `ask_<agent>` tools.
      handler.server.addTool({
        kind: "json",
        name: "ask_helper",
        description: "Ask the helper agent.",
        parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        execute: async (args) => `helper says: ${String(args.question)}`,
      });
      await waitFor(() => changed > 0, 5_000, "tools/list_changed");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain("ask_helper");
      const answer = await client.callTool({ name: "ask_helper", arguments: { question: "why?" } });
      expect(textOf(answer)).toBe("helper says: why?");
      expect(handler.server.removeTool("ask_helper")).toBe(true);
    } finally {
      await client.close();
    }
  });

  it("answers 404 for an unknown session and 400 for a non-initialize request without one", async () => {
    const unknown = await post(
      port,
      "localhost",
      { "mcp-session-id": "nope" },
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
    );
    expect(unknown.status).toBe(404);
    const none = await post(port, "localhost", {}, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(none.status).toBe(400);
  });

  it("refuses requests whose Host or Origin is not this machine (DNS rebinding)", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    expect((await post(port, "evil.example.com", {}, init)).status).toBe(403);
    expect((await post(port, `localhost:${port}`, { origin: "http://evil.example.com" }, init)).status).toBe(
      403,
    );
    expect((await post(port, `127.0.0.1:${port}`, { origin: `http://localhost:${port}` }, init)).status).toBe(
      200,
    );
  });
});

/** A raw POST with a chosen Host header (fetch does not allow setting Host). */
function post(
  port: number,
  host: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: "/mcp",
        method: "POST",
        headers: {
          host,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(body));
  });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
