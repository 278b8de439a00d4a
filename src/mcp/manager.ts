/**
 * All configured MCP servers of one process: connects them in parallel (each under its own time
 * limit, so a slow or broken server never holds up the others), keeps their tools registered in a
 * ToolRegistry as `<server>_<tool>`, follows tool-list changes, and shuts every server down on close.
 * The SDK loads on `start()`, so processes without MCP servers never pay for it.
 */
import { DimsumError } from "../errors.js";
import { ToolRegistry } from "../tools/registry.js";
import type { ToolResult } from "../tools/types.js";
import type { McpClientHandlers } from "./client-handlers.js";
import type { McpServerConfig } from "./config.js";
import type { McpServerStatus, McpToolInfo, ServerConnection } from "./connection.js";
import { createMcpTool, createResourceTools, fallbackMcpToolName, mcpToolName } from "./mcp-tools.js";
import type { McpAuthOptions } from "./oauth/http-auth.js";
import { toolAllowed } from "./tool-filter.js";
import { type McpCallResult, toToolResult } from "./tool-result.js";

export type { McpServerState, McpServerStatus, McpToolInfo } from "./connection.js";

export interface McpManagerOptions {
  servers: McpServerConfig[];
  /** Environment the stdio servers' safe base env comes from. */
  env: Readonly<Record<string, string | undefined>>;
  /** Where MCP tools are registered; a new registry when absent. */
  registry?: ToolRegistry;
  /** Default limit for starting and initialising one server (default 30 s). */
  connectTimeoutMs?: number;
  clientInfo?: { name: string; version: string };
  /** Every status change of every server (connecting, connected, failed, ...). */
  onStatus?: (status: McpServerStatus) => void;
  /** OAuth: where logins are kept and, in interactive front ends, who runs the browser step. */
  auth?: McpAuthOptions;
  /** Elicitation, sampling and roots; absent handlers decline (headless). */
  handlers?: McpClientHandlers;
}

/** One registered MCP tool and where it comes from. */
export interface McpRegisteredTool {
  /** Name in the registry (usually `<server>_<tool>`). */
  name: string;
  /** Name the model sees. */
  wireName: string;
  server: string;
  /** The tool's own name on its server. */
  mcpName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const DEFAULT_CLIENT_INFO = { name: "dimsum", version: "0.1.0" };

interface Registered {
  name: string;
  info: McpToolInfo;
  /** JSON of the tool description, to notice changes on refresh. */
  signature: string;
}

/** Owns the MCP connections and their tools. */
export class McpManager {
  readonly registry: ToolRegistry;
  readonly #options: McpManagerOptions;
  readonly #configs = new Map<string, McpServerConfig>();
  readonly #connections = new Map<string, ServerConnection>();
  readonly #registered = new Map<string, Map<string, Registered>>();
  readonly #owners = new Map<string, { server: string; tool: string }>();
  readonly #skipped = new Map<string, string[]>();
  /** The resource tools registered per server. */
  readonly #resourceTools = new Map<string, string[]>();
  #closed = false;

  constructor(options: McpManagerOptions) {
    this.#options = options;
    this.registry = options.registry ?? new ToolRegistry();
    for (const server of options.servers) this.#configs.set(server.name, server);
  }

  /** Names of all configured servers, enabled or not. */
  serverNames(): string[] {
    return [...this.#configs.keys()];
  }

  /**
   * Connects the enabled servers (all, or only `names`) in parallel; resolves when each one has
   * connected or failed. Never rejects for a server failure: see `statuses()`.
   */
  async start(names?: string[]): Promise<McpServerStatus[]> {
    const picked = names ?? this.serverNames();
    const unknown = picked.filter((name) => !this.#configs.has(name));
    if (unknown.length > 0) {
      throw new DimsumError(
        "config",
        `Unknown MCP server${unknown.length > 1 ? "s" : ""}: ${unknown.join(", ")}.`,
        {
          hint: `configured servers: ${this.serverNames().join(", ") || "(none; add them to mcp.json)"}`,
        },
      );
    }
    const { ServerConnection } = await import("./connection.js");
    const connections = picked.map((name) => this.#connectionFor(name, ServerConnection));
    await Promise.all(connections.map((c) => (c.config.enabled ? c.connect() : Promise.resolve(false))));
    return picked.map((name) => this.status(name)).filter((s): s is McpServerStatus => s !== undefined);
  }

  /** Status of every configured server, in configuration order. */
  statuses(): McpServerStatus[] {
    return this.serverNames()
      .map((name) => this.status(name))
      .filter((s): s is McpServerStatus => s !== undefined);
  }

  status(name: string): McpServerStatus | undefined {
    const connection = this.#connections.get(name);
    if (connection) {
      const status = connection.status();
      const skipped = this.#skipped.get(name);
      return skipped && skipped.length > 0 ? { ...status, skippedTools: [...skipped] } : status;
    }
    const config = this.#configs.get(name);
    if (!config) return undefined;
    return {
      name,
      transport: config.transport,
      state: config.enabled ? "connecting" : "disabled",
      toolCount: 0,
      stderr: [],
      ...(config.problem ? { lastError: config.problem } : {}),
    };
  }

  /** The registered tools of one server (or of all servers). */
  tools(server?: string): McpRegisteredTool[] {
    const out: McpRegisteredTool[] = [];
    for (const [name, entries] of this.#registered) {
      if (server !== undefined && name !== server) continue;
      for (const entry of entries.values()) {
        out.push({
          name: entry.name,
          wireName: this.registry.wireName(entry.name) ?? entry.name,
          server: name,
          mcpName: entry.info.name,
          description: entry.info.description ?? entry.info.title ?? "",
          inputSchema: entry.info.inputSchema,
        });
      }
    }
    return out;
  }

  /** Which server and MCP tool a registered (or wire) name stands for. */
  resolveTool(name: string): { server: string; tool: string } | undefined {
    const direct = this.#owners.get(name);
    if (direct) return direct;
    const tool = this.registry.resolveWireName(name);
    return tool ? this.#owners.get(tool.name) : undefined;
  }

  /** Calls `tool` (its MCP name) on `server` directly, without registry validation. For `dimsum mcp call`. */
  async callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<ToolResult> {
    const connection = this.#connections.get(server);
    if (!connection) {
      throw new DimsumError("config", `MCP server "${server}" is not started.`, {
        hint: `known servers: ${this.serverNames().join(", ") || "(none)"}`,
      });
    }
    const result: McpCallResult = await connection.callTool(tool, args, options);
    return toToolResult(result);
  }

  /** The connection of a started server, for resources and prompts. */
  connection(server: string): ServerConnection {
    const connection = this.#connections.get(server);
    if (!connection) {
      throw new DimsumError("config", `MCP server "${server}" is not started.`, {
        hint: `known servers: ${this.serverNames().join(", ") || "(none)"}`,
      });
    }
    return connection;
  }

  /** Reconnects one server now, ignoring backoff; true when it is connected afterwards. */
  async reconnect(server: string): Promise<boolean> {
    const connection = this.#connections.get(server);
    return connection ? connection.connect() : false;
  }

  /** Shuts every server down and removes their tools from the registry. */
  async close(): Promise<void> {
    this.#closed = true;
    const connections = [...this.#connections.values()];
    await Promise.all(connections.map((c) => c.close()));
    for (const server of this.#registered.keys()) this.#syncTools(server, []);
    for (const names of this.#resourceTools.values())
      for (const name of names) this.registry.unregister(name);
    this.#resourceTools.clear();
  }

  /** Registers `<server>_list_resources` / `_read_resource` once a server offering resources connects. */
  #syncResourceTools(server: string): void {
    const connection = this.#connections.get(server);
    if (!connection || this.#resourceTools.has(server) || !connection.status().features?.resources) return;
    const names: string[] = [];
    for (const tool of createResourceTools(server, connection)) {
      // A server's own tool of the same name wins.
      if (this.registry.has(tool.name)) continue;
      this.registry.register(tool);
      this.#owners.set(tool.name, { server, tool: tool.name.slice(server.length + 1) });
      names.push(tool.name);
    }
    this.#resourceTools.set(server, names);
  }

  #connectionFor(name: string, Connection: typeof ServerConnection): ServerConnection {
    const existing = this.#connections.get(name);
    if (existing) return existing;
    const config = this.#configs.get(name) as McpServerConfig;
    const connection = new Connection(config, {
      env: this.#options.env,
      clientInfo: this.#options.clientInfo ?? DEFAULT_CLIENT_INFO,
      connectTimeoutMs: this.#options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      filter: (tool) => toolAllowed(tool, config),
      onTools: (tools) => {
        if (this.#closed) return;
        this.#syncTools(name, tools);
        this.#syncResourceTools(name);
      },
      onStatus: (status) => this.#options.onStatus?.(status),
      ...(this.#options.auth ? { auth: this.#options.auth } : {}),
      ...(this.#options.handlers ? { handlers: this.#options.handlers } : {}),
    });
    this.#connections.set(name, connection);
    return connection;
  }

  /** Makes the registry hold exactly `tools` for `server`: removed ones go, new or changed ones (re)register. */
  #syncTools(server: string, tools: McpToolInfo[]): void {
    const current = this.#registered.get(server) ?? new Map<string, Registered>();
    const wanted = new Map(tools.map((info) => [info.name, info]));
    for (const [mcpName, entry] of current) {
      const next = wanted.get(mcpName);
      if (next && signatureOf(next) === entry.signature) continue;
      this.registry.unregister(entry.name);
      this.#owners.delete(entry.name);
      current.delete(mcpName);
    }
    const connection = this.#connections.get(server);
    const skipped: string[] = [];
    for (const info of tools) {
      if (current.has(info.name) || !connection) continue;
      const name = this.#freeName(server, info.name);
      try {
        const tool = createMcpTool(name, server, info, connection, connection.config.timeoutMs);
        this.registry.register(tool);
      } catch (err) {
        // An unusable schema from the server: leave that one tool out rather than the whole server.
        skipped.push(`${info.name}: ${err instanceof Error ? err.message : String(err)}`);
        continue;
      }
      this.#owners.set(name, { server, tool: info.name });
      current.set(info.name, { name, info, signature: signatureOf(info) });
    }
    if (current.size > 0) this.#registered.set(server, current);
    else this.#registered.delete(server);
    this.#skipped.set(server, skipped);
  }

  #freeName(server: string, tool: string): string {
    const plain = mcpToolName(server, tool);
    return this.registry.has(plain) ? fallbackMcpToolName(server, tool) : plain;
  }
}

function signatureOf(info: McpToolInfo): string {
  return JSON.stringify([info.description, info.title, info.inputSchema, info.ui]);
}
