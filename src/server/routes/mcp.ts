/**
 * `/api/mcp` (owners and admins): the MCP servers of mcp.json with their status, connected and
 * disconnected one by one. Answers 501 when the server runs without MCP.
 */
import { Hono } from "hono";
import { unavailable } from "../../errors.js";
import type { McpControl } from "../../mcp/server-pool.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { paramsOf } from "../http/validate.js";
import { mcpNameParam } from "./team-schemas.js";

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
