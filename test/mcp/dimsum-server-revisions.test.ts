/**
 * Dimsum as an MCP server answers both protocol revisions: a v2-SDK client pinned to 2026-07-28
 * and a 1.x-SDK client (the 2025 `initialize` handshake), against `dimsum mcp serve` as a real
 * process and against the HTTP handler on a loopback port. Needs `npm run build` (the CLI).
 */
import { writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioV1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as HttpV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpHttpHandler, type McpHttpHandler } from "../../src/mcp/server.js";
import { builtinTools } from "../../src/tools/builtin/index.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import { cleanEnv } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";
import { ensureBuilt, makeTempDir, removeTempDir, toolContext, waitFor } from "./helpers.js";

type TextBlock = { type: string; text?: string };
const textOf = (result: unknown) =>
  (((result as { content?: TextBlock[] }).content ?? []) as TextBlock[]).map((b) => b.text ?? "").join("\n");

const MODERN = "2026-07-28";
const pinned = { versionNegotiation: { mode: { pin: MODERN } } } as const;

describe("dimsum mcp serve (a real process) answers both revisions", () => {
  let workspace: string;
  let env: Record<string, string>;
  const serveArgs = () => ({
    command: process.execPath,
    args: [join(projectRoot, "bin/dimsum.js"), "mcp", "serve", "--tools", "calculator,read_file"],
    env,
    cwd: workspace,
    stderr: "pipe" as const,
  });

  beforeAll(async () => {
    ensureBuilt();
    workspace = await makeTempDir();
    await writeFile(join(workspace, "note.txt"), "inside the workspace");
    env = Object.fromEntries(
      Object.entries(cleanEnv()).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
  }, 180_000);
  afterAll(async () => {
    await removeTempDir(workspace);
    await removeTempDir(env.DIMSUM_HOME as string);
  });

  it("a v2 client pinned to 2026-07-28 discovers the server and calls its tools", async () => {
    const client = new ClientV2({ name: "v2-test", version: "1.0.0" }, pinned);
    await client.connect(new StdioV2(serveArgs()));
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(client.getServerVersion()?.name).toBe("dimsum");
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["calculator", "read_file"]);
      expect(textOf(await client.callTool({ name: "calculator", arguments: { expression: "6*7" } }))).toBe(
        "42",
      );
      const note = await client.callTool({ name: "read_file", arguments: { path: "note.txt" } });
      expect(textOf(note)).toContain("inside the workspace");
    } finally {
      await client.close();
    }
  }, 60_000);

  it("a 1.x client gets the 2025 handshake", async () => {
    const client = new ClientV1({ name: "v1-test", version: "1.0.0" });
    await client.connect(new StdioV1(serveArgs()));
    try {
      expect(client.getServerVersion()?.name).toBe("dimsum");
      expect(textOf(await client.callTool({ name: "calculator", arguments: { expression: "2^10" } }))).toBe(
        "1024",
      );
    } finally {
      await client.close();
    }
  }, 60_000);
});

describe("the MCP HTTP endpoint answers both revisions", () => {
  let http: Server;
  let handler: McpHttpHandler;
  let url: URL;
  let workspace: string;

  beforeAll(async () => {
    workspace = await makeTempDir();
    handler = createMcpHttpHandler({
      tools: new ToolRegistry(builtinTools()),
      toolContext: toolContext(workspace),
    });
    http = createServer((req, res) => void handler(req, res));
    await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
    url = new URL(`http://localhost:${(http.address() as AddressInfo).port}/mcp`);
  });
  afterAll(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise((done) => http.close(done));
    await removeTempDir(workspace);
  });

  it("serves a v2 client on 2026-07-28 without a session, and streams tool-list changes to it", async () => {
    const client = new ClientV2({ name: "v2-test", version: "1.0.0" }, pinned);
    let changed = 0;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    const transport = new HttpV2(url);
    await client.connect(transport);
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(transport.sessionId).toBeUndefined();
      expect(handler.sessionCount()).toBe(0);
      const result = await client.callTool({ name: "calculator", arguments: { expression: "sqrt(81)" } });
      expect(textOf(result)).toBe("9");
      const subscription = await client.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter.toolsListChanged).toBe(true);
      handler.server.addTool({
        kind: "json",
        name: "ask_helper",
        description: "Ask the helper agent.",
        parameters: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
        execute: async (args) => `helper says: ${String(args.question)}`,
      });
      await waitFor(() => changed > 0, 5_000, "tools/list_changed on the subscription stream");
      const answer = await client.callTool({ name: "ask_helper", arguments: { question: "why?" } });
      expect(textOf(answer)).toBe("helper says: why?");
      expect(handler.server.removeTool("ask_helper")).toBe(true);
      await subscription.close();
    } finally {
      await client.close();
    }
  });

  it("a v2 client in auto mode lands on 2026-07-28, a 1.x client on a 2025 session, side by side", async () => {
    const auto = new ClientV2(
      { name: "v2-auto", version: "1.0.0" },
      { versionNegotiation: { mode: "auto" } },
    );
    const old = new ClientV1({ name: "v1-test", version: "1.0.0" });
    await auto.connect(new HttpV2(url));
    const oldTransport = new HttpV1(url);
    await old.connect(oldTransport);
    try {
      expect(auto.getNegotiatedProtocolVersion()).toBe(MODERN);
      expect(oldTransport.sessionId).toBeDefined();
      expect(handler.sessionCount()).toBe(1);
      const [a, b] = await Promise.all([
        auto.callTool({ name: "calculator", arguments: { expression: "1+1" } }),
        old.callTool({ name: "calculator", arguments: { expression: "2+2" } }),
      ]);
      expect(textOf(a)).toBe("2");
      expect(textOf(b)).toBe("4");
    } finally {
      await auto.close();
      await oldTransport.terminateSession();
      await old.close();
    }
  });
});
