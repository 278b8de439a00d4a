/**
 * `dimsum mcp list | tools <server> | call <server> <tool> '<json>' | serve`: inspect and debug the
 * MCP servers in mcp.json, and serve Dimsum's own tools to other MCP clients over stdio.
 */

import { type DimsumConfig, loadConfig } from "../../config/load-config.js";
import { DimsumError, toDimsumError } from "../../errors.js";
import type { McpServerConfig } from "../../mcp/config.js";
import { loadMcpConfig } from "../../mcp/config.js";
import type { McpManager, McpServerStatus } from "../../mcp/manager.js";
import { createBuiltinRegistry } from "../../tools/builtin/index.js";
import { memoryTodoStore } from "../../tools/memory-todo-store.js";
import type { ToolResult } from "../../tools/types.js";
import type { CliIo } from "../command-io.js";
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, exitCodeFor } from "../exit-codes.js";
import { formatStatusTable } from "../render/mcp-status.js";
import { oneLine } from "../render/style.js";
import { exitCodeForStop, watchStop } from "../stop-signals.js";
import { resolveWorkspace } from "../workspace.js";

export type { CliIo } from "../command-io.js";

export interface McpListOptions {
  json?: boolean;
}

export interface McpToolsOptions {
  json?: boolean;
}

export interface McpCallOptions {
  json?: boolean;
  /** Per-call limit in milliseconds (default: the server's `timeout`, else 60 s). */
  timeout?: number;
}

export interface McpServeOptions {
  /** Folder the file and shell tools work in (default: the current directory). */
  workspace?: string;
  /** Comma-separated built-in tool names to offer (default: all). */
  tools?: string;
}

/** `dimsum mcp list`: every configured server with its status, tool count and last error. */
export async function mcpListCommand(options: McpListOptions, io: CliIo): Promise<number> {
  return guard(io, options.json, async () => {
    const { config, servers } = loadServers(io);
    if (servers.length === 0) {
      if (options.json) io.stdout.write("[]\n");
      else io.stdout.write(noServersMessage(config.home));
      return EXIT_OK;
    }
    return withManager(config, servers, async (manager) => {
      const statuses = await manager.start();
      if (options.json) io.stdout.write(`${JSON.stringify(statuses, null, 2)}\n`);
      else io.stdout.write(formatStatusTable(statuses));
      return EXIT_OK;
    });
  });
}

/** `dimsum mcp tools <server>`: the tools one server offers, under the names the model sees. */
export async function mcpToolsCommand(server: string, options: McpToolsOptions, io: CliIo): Promise<number> {
  return guard(io, options.json, async () => {
    const { config, servers } = loadServers(io);
    return withManager(config, servers, async (manager) => {
      const [status] = await manager.start([server]);
      if (status?.state !== "connected") return reportUnavailable(io, server, status);
      const tools = manager.tools(server);
      if (options.json) {
        io.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
        return EXIT_OK;
      }
      if (tools.length === 0) io.stdout.write(`MCP server "${server}" offers no tools.\n`);
      for (const tool of tools) {
        io.stdout.write(`${tool.wireName}${tool.wireName === tool.mcpName ? "" : `  (${tool.mcpName})`}\n`);
        if (tool.description) io.stdout.write(`  ${oneLine(tool.description, 110)}\n`);
        const params = describeParameters(tool.inputSchema);
        if (params) io.stdout.write(`  parameters: ${params}\n`);
      }
      return EXIT_OK;
    });
  });
}

/** `dimsum mcp call <server> <tool> '<json>'`: one call, arguments validated against the tool's schema. */
export async function mcpCallCommand(
  server: string,
  tool: string,
  argsJson: string | undefined,
  options: McpCallOptions,
  io: CliIo,
): Promise<number> {
  // Ctrl-C and SIGTERM cancel the call, from the start; the MCP servers are closed on the way out.
  const stop = watchStop();
  const cancelled = (what: string): number => {
    io.stderr.write(`dimsum: ${what} was cancelled (${stop.reason}).\n`);
    return exitCodeForStop(stop.reason ?? "SIGINT");
  };
  try {
    return await guard(io, options.json, async () => {
      const { config, servers } = loadServers(io);
      return withManager(config, servers, async (manager) => {
        const [status] = await manager.start([server]);
        if (stop.reason !== undefined) return cancelled(`connecting to "${server}"`);
        if (status?.state !== "connected") return reportUnavailable(io, server, status);
        const entry = manager
          .tools(server)
          .find((t) => t.mcpName === tool || t.name === tool || t.wireName === tool);
        if (!entry) {
          const names = manager.tools(server).map((t) => t.mcpName);
          io.stderr.write(
            `dimsum: MCP server "${server}" has no tool \`${tool}\` (available: ${names.join(", ") || "none"}).\n`,
          );
          return EXIT_USAGE;
        }
        const prepared = manager.registry.prepareCall(entry.wireName, argsJson ?? "{}");
        if (!prepared.ok) {
          io.stderr.write(`dimsum: ${prepared.error}\n`);
          return EXIT_USAGE;
        }
        const result = await manager.registry.execute(
          prepared,
          {
            signal: stop.signal,
            workspace: io.cwd,
            runId: "mcp-call",
            todos: memoryTodoStore(),
            config: config.tools,
          },
          options.timeout ? { timeoutMs: options.timeout } : {},
        );
        if (stop.reason !== undefined) return cancelled(`the call to \`${entry.mcpName}\``);
        io.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${renderResult(result)}\n`);
        return result.isError ? EXIT_FAILURE : EXIT_OK;
      });
    });
  } finally {
    stop.dispose();
  }
}

/** `dimsum mcp serve`: offers the built-in tools over stdio until the client disconnects. */
export async function mcpServeCommand(options: McpServeOptions, io: CliIo): Promise<number> {
  return guard(io, false, async () => {
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    const workspace = resolveWorkspace(io.cwd, options.workspace);
    const registry = createBuiltinRegistry(
      options.tools ? options.tools.split(",").map((s) => s.trim()) : undefined,
    );
    const { serveStdio } = await import("../../mcp/server.js");
    const serving = await serveStdio({
      tools: registry,
      toolContext: {
        workspace,
        runId: `mcp-serve-${process.pid}`,
        todos: memoryTodoStore(),
        config: config.tools,
      },
      stdin: io.stdin,
      stdout: io.stdout,
    });
    // stdout carries the protocol; anything for people goes to stderr.
    io.stderr.write(`dimsum mcp serve: ${registry.names().length} tools, workspace ${workspace}\n`);
    const stop = () => void serving.close();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    try {
      await serving.closed;
    } finally {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
    }
    return EXIT_OK;
  });
}

/** A call result as text: text parts as they are, images as a short placeholder. */
export function renderResult(result: ToolResult): string {
  const text =
    typeof result.content === "string"
      ? result.content
      : result.content
          .map((part) =>
            part.type === "text"
              ? part.text
              : `[image: ${part.mimeType}, ${Buffer.byteLength(part.data, "base64")} bytes]`,
          )
          .join("\n");
  return result.isError ? `error: ${text}` : text;
}

function loadServers(io: CliIo): { config: DimsumConfig; servers: McpServerConfig[] } {
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  return { config, servers: loadMcpConfig({ home: config.home, cwd: io.cwd, env: config.env }) };
}

async function withManager(
  config: DimsumConfig,
  servers: McpServerConfig[],
  use: (manager: McpManager) => Promise<number>,
): Promise<number> {
  const [{ McpManager }, { cliCredentialStore }] = await Promise.all([
    import("../../mcp/manager.js"),
    import("../mcp-credentials.js"),
  ]);
  const manager = new McpManager({
    servers,
    env: config.env,
    auth: { credentials: cliCredentialStore(config.home) },
  });
  try {
    return await use(manager);
  } finally {
    await manager.close();
  }
}

function reportUnavailable(io: CliIo, server: string, status: McpServerStatus | undefined): number {
  const reason =
    status?.state === "disabled" ? "it is disabled in mcp.json" : (status?.lastError ?? "it did not connect");
  io.stderr.write(`dimsum: MCP server "${server}" is unavailable: ${reason}\n`);
  return EXIT_FAILURE;
}

function noServersMessage(home: string): string {
  return `No MCP servers configured. Add them to ${home}/mcp.json or ./mcp.json, e.g.\n  {"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]}}}\n`;
}

/** "a: number (required), b: number" from a JSON Schema's top-level properties. */
function describeParameters(schema: Record<string, unknown>): string {
  const properties = schema.properties;
  if (typeof properties !== "object" || properties === null) return "";
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  return Object.entries(properties as Record<string, { type?: unknown }>)
    .map(([name, prop]) => {
      const type = Array.isArray(prop?.type) ? prop.type.join("|") : String(prop?.type ?? "any");
      return `${name}: ${type}${required.has(name) ? " (required)" : ""}`;
    })
    .join(", ");
}

export async function guard(
  io: CliIo,
  json: boolean | undefined,
  body: () => Promise<number>,
): Promise<number> {
  try {
    return await body();
  } catch (err) {
    const error = err instanceof DimsumError ? err : toDimsumError(err);
    if (json)
      io.stdout.write(`${JSON.stringify({ type: "error", code: error.code, message: error.message })}\n`);
    else io.stderr.write(`dimsum: ${error.toLine()}\n`);
    return exitCodeFor(error.code);
  }
}
