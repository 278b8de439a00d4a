/**
 * The MCP servers of one long-lived process (the team server): started once, shared by every agent,
 * each connected and disconnected on its own (one manager per server, so each can stop alone); all
 * their tools land in one registry as `<server>_<tool>`. A crashed server reconnects on next use.
 */
import type { EnvMap } from "../config/env.js";
import { conflict, notFound } from "../errors.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import type { McpServerConfig } from "./config.js";
import { McpManager, type McpServerState, type McpServerStatus } from "./manager.js";

/** What the settings page shows of one server (never its env, headers or credentials). */
export interface McpServerView {
  name: string;
  transport: string;
  /** `disconnected`: configured and enabled, but not started (or stopped from the UI). */
  status: McpServerState | "disconnected";
  enabled: boolean;
  tools: number;
  error?: string;
  pid?: number;
  serverInfo?: { name: string; version: string };
}

/** The MCP operations the routes need. */
export interface McpControl {
  list(): McpServerView[];
  connect(name: string): Promise<McpServerView>;
  disconnect(name: string): Promise<McpServerView>;
}

function viewOf(config: McpServerConfig, status: McpServerStatus | undefined): McpServerView {
  const view: McpServerView = {
    name: config.name,
    transport: status?.transport ?? config.transport,
    status: status?.state ?? (config.enabled ? "disconnected" : "disabled"),
    enabled: config.enabled,
    tools: status?.toolCount ?? 0,
  };
  const error = status?.lastError ?? config.problem;
  if (error !== undefined) view.error = error;
  if (status?.pid !== undefined) view.pid = status.pid;
  if (status?.serverInfo) view.serverInfo = status.serverInfo;
  return view;
}

/** The configured MCP servers, each started and stopped on request. */
export class McpServerPool implements McpControl {
  /** Tools of every connected server, as `<server>_<tool>`. */
  readonly registry = new ToolRegistry();
  readonly #configs: Map<string, McpServerConfig>;
  readonly #managers = new Map<string, McpManager>();
  readonly #env: EnvMap;
  #started: Promise<void> | undefined;

  constructor(servers: McpServerConfig[], env: EnvMap) {
    this.#configs = new Map(servers.map((s) => [s.name, s]));
    this.#env = env;
  }

  /**
   * Connects every enabled server in the background (once); `ready()` resolves when each has
   * connected or failed. A failing server never blocks the others.
   */
  startAll(): Promise<void> {
    this.#started ??= Promise.all(
      [...this.#configs.values()]
        .filter((c) => c.enabled)
        .map((c) => this.connect(c.name).catch(() => undefined)),
    ).then(() => undefined);
    return this.#started;
  }

  /** Resolves once the first connection attempt of every server settled (at once when none started). */
  ready(): Promise<void> {
    return this.#started ?? Promise.resolve();
  }

  /** The tools of the connected servers now. */
  tools(): Tool[] {
    return this.registry.list();
  }

  /** Names of the configured servers, enabled or not. */
  serverNames(): string[] {
    return [...this.#configs.keys()];
  }

  list(): McpServerView[] {
    return [...this.#configs.values()].map((config) => this.#view(config));
  }

  /** Starts (or restarts a failed) server; resolves once it connected or failed. */
  async connect(name: string): Promise<McpServerView> {
    const config = this.#config(name);
    if (!config.enabled) throw conflict(`MCP server "${name}" is disabled in ${config.source}`);
    let manager = this.#managers.get(name);
    if (!manager) {
      manager = new McpManager({ servers: [config], env: this.#env, registry: this.registry });
      this.#managers.set(name, manager);
    }
    await manager.start([name]);
    return this.#view(config);
  }

  /** Stops a server and removes its tools. */
  async disconnect(name: string): Promise<McpServerView> {
    const config = this.#config(name);
    const manager = this.#managers.get(name);
    this.#managers.delete(name);
    await manager?.close();
    return this.#view(config);
  }

  /** Stops every server (server shutdown). */
  async close(): Promise<void> {
    const managers = [...this.#managers.values()];
    this.#managers.clear();
    await Promise.all(managers.map((m) => m.close()));
  }

  #config(name: string): McpServerConfig {
    const config = this.#configs.get(name);
    if (!config) throw notFound(`MCP server "${name}" (add it to mcp.json) not found`);
    return config;
  }

  #view(config: McpServerConfig): McpServerView {
    return viewOf(config, this.#managers.get(config.name)?.status(config.name));
  }
}
