/**
 * `/api/mcp` (owners and admins): the MCP servers of mcp.json with their status, connected and
 * disconnected one by one. `McpServerPool` keeps one manager per server so each can stop alone; all
 * their tools land in one registry. Answers 501 when the server runs without MCP.
 */
import { Hono } from "hono";
import { conflict, notFound, unavailable } from "../../errors.js";
import type { McpServerConfig } from "../../mcp/config.js";
import { McpManager, type McpServerState, type McpServerStatus } from "../../mcp/manager.js";
import { ToolRegistry } from "../../tools/registry.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { paramsOf } from "../http/validate.js";
import { mcpNameParam } from "./team-schemas.js";

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
  readonly #env: Readonly<Record<string, string | undefined>>;

  constructor(servers: McpServerConfig[], env: Readonly<Record<string, string | undefined>>) {
    this.#configs = new Map(servers.map((s) => [s.name, s]));
    this.#env = env;
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

/** The MCP routes, mounted at `/api/mcp`. */
export function mcpRoutes(mcp: McpControl | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));
  if (!mcp) {
    app.all("*", () => {
      throw unavailable("MCP servers are not available on this server");
    });
    return app;
  }

  app.get("/", (c) => c.json(mcp.list()));

  app.post("/:name/connect", paramsOf(mcpNameParam), async (c) => {
    return c.json(await mcp.connect(c.req.valid("param").name));
  });

  app.post("/:name/disconnect", paramsOf(mcpNameParam), async (c) => {
    return c.json(await mcp.disconnect(c.req.valid("param").name));
  });

  return app;
}
