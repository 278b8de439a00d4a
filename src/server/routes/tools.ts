/**
 * `/api/tools`: the tool catalogue agents are given from — built-ins, memory, knowledge, MCP, HTTP
 * tools, plugins and team tools — with each tool's source and parameters (the agent editor's picker).
 */
import { Hono } from "hono";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";

/** The tool routes, mounted at `/api/tools`. */
export function toolRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/", async (c) => c.json(await team.listTools(actorOf(c))));
  return app;
}
