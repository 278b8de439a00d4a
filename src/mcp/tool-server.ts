/**
 * Dimsum as an MCP server: offers a ToolRegistry's tools (the built-ins by default) to other MCP
 * clients. Calls go through the registry, so arguments are validated and the workspace and policy
 * rules apply exactly as in an agent run; nobody can approve anything, so risky shell commands are
 * refused. `addTool` is the hook for later `ask_<agent>` tools.
 *
 * One tool set serves both protocol revisions: a 2025 session (`createSession`) is told about tool
 * changes with `notifications/tools/list_changed`; a 2026-07-28 server instance (`createInstance`,
 * one per HTTP request) is not tracked, and the HTTP entry publishes the change on its
 * `subscriptions/listen` streams through `onToolsChanged`.
 */

import type { CallToolResult } from "@modelcontextprotocol/server";
import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import { builtinTools } from "../tools/builtin/index.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool, ToolContext, ToolResult } from "../tools/types.js";

/** What tools run with; the signal comes from each request, and there is no `approve`. */
export type McpToolContext = Omit<ToolContext, "signal" | "approve">;

export interface DimsumMcpServerOptions {
  /** The tools to offer: a registry (shared validation) or a list; the built-ins when absent. */
  tools?: ToolRegistry | Tool[];
  toolContext: McpToolContext;
  name?: string;
  version?: string;
  /** Shown to clients at initialisation. */
  instructions?: string;
}

export interface DimsumMcpServer {
  readonly registry: ToolRegistry;
  /** A protocol server for one client connection (stdio, or one HTTP session); told of tool changes. */
  createSession(): Server;
  /** A protocol server for one 2026-07-28 HTTP request: not tracked, closed by its entry point. */
  createInstance(): Server;
  /** Calls `listener` after every tool change; returns the function that stops it. */
  onToolsChanged(listener: () => void): () => void;
  /** Offers another tool (e.g. `ask_<agent>`); connected clients get `tools/list_changed`. */
  addTool(tool: Tool): void;
  /** Withdraws a tool; connected clients get `tools/list_changed`. */
  removeTool(name: string): boolean;
  /** Closes every open session. */
  close(): Promise<void>;
}

/** Builds the shared tool set; each client connection gets its own protocol server from it. */
export function createDimsumMcpServer(options: DimsumMcpServerOptions): DimsumMcpServer {
  const registry =
    options.tools instanceof ToolRegistry ? options.tools : new ToolRegistry(options.tools ?? builtinTools());
  const sessions = new Set<Server>();
  const listeners = new Set<() => void>();
  const info = { name: options.name ?? "dimsum", version: options.version ?? "0.1.0" };

  const notifyChanged = () => {
    for (const session of sessions) void session.sendToolListChanged().catch(() => {});
    for (const listener of listeners) listener();
  };

  const createInstance = (): Server => {
    const server = new Server(info, {
      capabilities: { tools: { listChanged: true } },
      ...(options.instructions ? { instructions: options.instructions } : {}),
    });
    server.setRequestHandler("tools/list", () => ({
      tools: registry.schemas().map((schema) => ({
        name: schema.name,
        description: schema.description,
        inputSchema: schema.parameters as { type: "object"; [key: string]: unknown },
      })),
    }));
    server.setRequestHandler("tools/call", async (request, ctx) => {
      const { name, arguments: args } = request.params;
      if (!registry.resolveWireName(name) && !registry.has(name)) {
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
      }
      const prepared = registry.prepareCall(name, JSON.stringify(args ?? {}));
      if (!prepared.ok) return { content: [{ type: "text", text: prepared.error }], isError: true };
      const result = await registry.execute(prepared, { ...options.toolContext, signal: ctx.mcpReq.signal });
      return toCallToolResult(result);
    });
    return server;
  };

  const createSession = (): Server => {
    const server = createInstance();
    sessions.add(server);
    server.onclose = () => sessions.delete(server);
    return server;
  };

  return {
    registry,
    createSession,
    createInstance,
    onToolsChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    addTool(tool) {
      registry.register(tool);
      notifyChanged();
    },
    removeTool(name) {
      const removed = registry.unregister(name);
      if (removed) notifyChanged();
      return removed;
    },
    async close() {
      await Promise.all([...sessions].map((session) => session.close().catch(() => {})));
      sessions.clear();
    },
  };
}

/** A Dimsum tool result in MCP form. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  const content: CallToolResult["content"] =
    typeof result.content === "string"
      ? [{ type: "text", text: result.content }]
      : result.content.map((part) =>
          part.type === "text"
            ? { type: "text" as const, text: part.text }
            : { type: "image" as const, data: part.data, mimeType: part.mimeType },
        );
  return result.isError ? { content, isError: true } : { content };
}
