/**
 * The MCP client over HTTP: the everything server in Streamable HTTP and legacy SSE modes (as a real
 * process), and Dimsum's own HTTP handler for headers and forgotten sessions (404).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseMcpConfig } from "../../src/mcp/config.js";
import { McpManager } from "../../src/mcp/manager.js";
import { createMcpHttpHandler, type McpHttpHandler } from "../../src/mcp/server.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { JsonSchemaTool } from "../../src/tools/types.js";
import {
  httpServer,
  makeTempDir,
  type RunningHttpServer,
  removeTempDir,
  startEverythingHttp,
  testEnv,
  textOf,
  toolContext,
} from "./helpers.js";

async function call(manager: McpManager, wireName: string, args: unknown) {
  const prepared = manager.registry.prepareCall(wireName, JSON.stringify(args));
  if (!prepared.ok) throw new Error(prepared.error);
  return manager.registry.execute(prepared, toolContext());
}

describe("everything over Streamable HTTP", () => {
  let server: RunningHttpServer;
  let manager: McpManager;

  beforeAll(async () => {
    server = await startEverythingHttp("streamableHttp");
    manager = new McpManager({ servers: [httpServer("web", server.url)], env: testEnv });
    await manager.start();
  });
  afterAll(async () => {
    await manager.close();
    await server.stop();
  });

  it("connects with Streamable HTTP and lists the tools", () => {
    const status = manager.status("web");
    expect(status?.state).toBe("connected");
    expect(status?.transport).toBe("streamable-http");
    expect(manager.registry.has("web_echo")).toBe(true);
  });

  it("calls tools, including one returning an image and one returning a resource", async () => {
    expect(textOf(await call(manager, "web_echo", { message: "over http" }))).toBe("Echo: over http");
    expect(textOf(await call(manager, "web_get-sum", { a: 1.5, b: 2 }))).toContain("3.5");
    const image = await call(manager, "web_get-tiny-image", {});
    expect(Array.isArray(image.content) && image.content.some((p) => p.type === "image")).toBe(true);
    const resource = await call(manager, "web_get-resource-reference", {
      resourceType: "Text",
      resourceId: 1,
    });
    expect(textOf(resource)).toContain("demo://resource/dynamic/text/1");
  });

  it("starts a new session when the server restarted and forgot the old one", async () => {
    const port = Number(new URL(server.url).port);
    await server.stop();
    server = await startEverythingHttp("streamableHttp", port);
    expect(textOf(await call(manager, "web_echo", { message: "after restart" }))).toBe("Echo: after restart");
    expect(manager.status("web")?.state).toBe("connected");
  });

  it("reports an unreachable server as unavailable, then reconnects when it is back", async () => {
    const port = Number(new URL(server.url).port);
    await server.stop();
    const failed = await call(manager, "web_echo", { message: "nobody home" });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/MCP server "web" is unavailable/);
    expect(manager.status("web")?.state).toBe("failed");
    server = await startEverythingHttp("streamableHttp", port);
    expect(textOf(await call(manager, "web_echo", { message: "back" }))).toBe("Echo: back");
  });
});

describe("everything over legacy SSE", () => {
  let server: RunningHttpServer;
  let manager: McpManager | undefined;
  beforeAll(async () => {
    server = await startEverythingHttp("sse");
  });
  afterEach(async () => manager?.close());
  afterAll(async () => server.stop());

  it("falls back to SSE when the server does not speak Streamable HTTP", async () => {
    manager = new McpManager({ servers: [httpServer("old", server.url)], env: testEnv });
    await manager.start();
    expect(manager.status("old")?.state).toBe("connected");
    expect(manager.status("old")?.transport).toBe("sse");
    expect(textOf(await call(manager, "old_echo", { message: "legacy" }))).toBe("Echo: legacy");
  });

  it("uses SSE directly when configured so", async () => {
    manager = new McpManager({
      servers: [httpServer("sse", server.url, { transport: "sse" })],
      env: testEnv,
    });
    await manager.start();
    expect(manager.status("sse")?.transport).toBe("sse");
    expect(textOf(await call(manager, "sse_get-sum", { a: 20, b: 22 }))).toContain("42");
  });
});

describe("Dimsum's HTTP endpoint as the server", () => {
  let http: Server;
  let handler: McpHttpHandler;
  let url: string;
  let workspace: string;
  let manager: McpManager | undefined;
  const seenAuth: Array<string | undefined> = [];

  const shout: JsonSchemaTool = {
    kind: "json",
    name: "shout",
    description: "Upper-cases text.",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    execute: async (args) => String(args.text).toUpperCase(),
  };

  beforeAll(async () => {
    workspace = await makeTempDir();
    handler = createMcpHttpHandler({
      tools: new ToolRegistry([shout]),
      toolContext: toolContext(workspace),
    });
    http = createServer((req, res) => {
      seenAuth.push(req.headers.authorization);
      if (req.headers.authorization !== "Bearer s3cret") {
        res.writeHead(401).end();
        return;
      }
      void handler(req, res);
    });
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterEach(async () => manager?.close());
  afterAll(async () => {
    await handler.close();
    await new Promise((done) => http.close(done));
    await removeTempDir(workspace);
  });

  it("sends configured headers, with a $VAR reference taken from the environment", async () => {
    const text = `{"mcpServers": {"me": {"url": "${url}", "headers": {"Authorization": "Bearer \${MCP_TEST_TOKEN}"}}}}`;
    const [config] = parseMcpConfig(text, "/tmp/mcp.json", { MCP_TEST_TOKEN: "s3cret" });
    manager = new McpManager({ servers: config ? [config] : [], env: testEnv });
    await manager.start();
    expect(manager.status("me")?.state).toBe("connected");
    expect(textOf(await call(manager, "me_shout", { text: "hi" }))).toBe("HI");
    expect(seenAuth.at(-1)).toBe("Bearer s3cret");
  });

  it("reports a rejected token as a failed connection", async () => {
    manager = new McpManager({
      servers: [httpServer("bad", url, { headers: { Authorization: "Bearer wrong" } })],
      env: testEnv,
    });
    const [status] = await manager.start();
    expect(status?.state).toBe("failed");
    expect(status?.lastError).toMatch(/401|unauthor/i);
  });

  it("re-initialises when the server answers 404 for a forgotten session", async () => {
    // Sessions are a 2025 thing (2026-07-28 is stateless): this client is held to the 2025 handshake.
    manager = new McpManager({
      servers: [httpServer("me", url, { headers: { Authorization: "Bearer s3cret" }, protocol: "2025" })],
      env: testEnv,
    });
    await manager.start();
    expect(handler.sessionCount()).toBe(1);
    // Closing every session is what a restarted server looks like: the old session id is unknown.
    await handler.close();
    expect(handler.sessionCount()).toBe(0);
    expect(textOf(await call(manager, "me_shout", { text: "again" }))).toBe("AGAIN");
    expect(handler.sessionCount()).toBe(1);
  });
});
