/**
 * Mounts the team facade onto the server: the `/api` routes of agents, channels, messages, runs,
 * flows, tools, memory, MCP, remote A2A agents and team templates, the OpenAI-compatible `/v1` endpoint and the A2A routes (`/a2a`). Pass the result to
 * `createServer({ routes: [mountTeamRoutes({ team })] })`; the server's guards (authentication, CSRF,
 * body limits) run before these routes.
 */
import type { TaskStore } from "@a2a-js/sdk/server";
import { Hono } from "hono";
import type { McpControl } from "../../mcp/server-pool.js";
import type { MemoryStore } from "../../memory/types.js";
import type { TemplateSchedules } from "../../team/templates/index.js";
import type { Team } from "../../team/types.js";
import type { AppEnv, DimsumApp } from "../context.js";
import type { HttpTools } from "../http-tools.js";
import type { McpSignIns } from "../mcp-signin.js";
import type { RemoteAgents } from "../remote-agents.js";
import { mountA2aRoutes } from "./a2a.js";
import { agentRoutes } from "./agents.js";
import { channelRoutes } from "./channels.js";
import { flowRoutes } from "./flows.js";
import { httpToolRoutes } from "./http-tools.js";
import { mcpRoutes } from "./mcp.js";
import { mcpAppRoutes } from "./mcp-apps.js";
import { meetingRoutes } from "./meetings.js";
import { memoryRoutes } from "./memory.js";
import { messageRoutes } from "./messages.js";
import { openAiRoutes } from "./openai-compat.js";
import { remoteAgentRoutes } from "./remote-agents.js";
import { runRoutes } from "./runs.js";
import { spendRoutes } from "./spend.js";
import { teamErrorHandler } from "./team-errors.js";
import { templateRoutes } from "./templates.js";
import { toolRoutes } from "./tools.js";

export interface TeamRoutesOptions {
  team: Team;
  /** Long-term memory over the server's database; without it `/api/memory` answers 501. */
  memory?: MemoryStore;
  /** The MCP servers of mcp.json; without it `/api/mcp` answers 501. */
  mcp?: McpControl;
  /** The browser sign-ins to MCP servers (shared with the relay of other instances); new if absent. */
  mcpSignIns?: McpSignIns;
  /** The schedules, for templates' schedules (exported and created with a group); absent: left out. */
  schedules?: TemplateSchedules;
  /** Where the A2A server keeps its tasks (the server's database); absent: this process's memory. */
  a2aTasks?: TaskStore;
  /** The remote A2A agents the team calls (a2a.json's and Settings'); without it `/api/remote-agents` answers 501. */
  remoteAgents?: RemoteAgents;
  /** The HTTP tools (files' and Settings'); without it `/api/http-tools` answers 501. */
  httpTools?: HttpTools;
}

/** Builds the mount function for `ServerDeps.routes`. */
export function mountTeamRoutes(options: TeamRoutesOptions): (app: DimsumApp) => void {
  const { team } = options;
  return (app) => {
    const api = new Hono<AppEnv>();
    // Set before `app.route`, which wraps every handler of `api` with this handler.
    api.onError(teamErrorHandler);
    api.route("/agents", agentRoutes(team));
    api.route("/tools", toolRoutes(team));
    api.route("/channels", channelRoutes(team));
    api.route("/", messageRoutes(team));
    api.route("/", mcpAppRoutes(team));
    api.route("/runs", runRoutes(team));
    api.route("/spend", spendRoutes(team));
    api.route("/flows", flowRoutes(team));
    api.route("/", meetingRoutes(team));
    api.route("/memory", memoryRoutes(options.memory));
    api.route("/mcp", mcpRoutes(options.mcp, options.mcpSignIns));
    api.route("/remote-agents", remoteAgentRoutes(options.remoteAgents));
    api.route("/http-tools", httpToolRoutes(options.httpTools));
    api.route("/", templateRoutes(options.schedules ? { team, schedules: options.schedules } : { team }));
    app.route("/api", api);
    app.route("/v1", openAiRoutes(team));
    mountA2aRoutes(team, options.a2aTasks)(app);
  };
}
