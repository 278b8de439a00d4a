/**
 * `/api/mcp` (owners and admins): the MCP servers of mcp.json with their status, connected and
 * disconnected one by one. Answers 501 when the server runs without MCP.
 * Every member: `GET /prompts` and `POST /prompts/:name/:prompt` (the prompts of the servers they may
 * use, and one's text with its arguments), `GET /mine` (per-person servers and their own sign-in), `POST /:name/signin` (the
 * authorization URL to open), `DELETE /:name/signin` (revoke and forget); the authorization server
 * redirects the browser to `GET /oauth/callback`.
 */
import { Hono } from "hono";
import { unavailable } from "../../errors.js";
import type { McpControl } from "../../mcp/server-pool.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { McpSignIns } from "../mcp-signin.js";
import { mcpNameParam, promptArgsSchema, promptParams } from "./team-schemas.js";

/** The MCP routes, mounted at `/api/mcp`. */
export function mcpRoutes(mcp: McpControl | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (mcp) {
    const signIns = new McpSignIns();
    const member = requireRole("owner", "admin", "member");
    const person = (c: { get(key: "auth"): { user: { id: string } } | undefined }) =>
      c.get("auth")?.user.id ?? "";
    app.get("/mine", member, (c) => {
      const me = person(c);
      return c.json(
        mcp
          .list()
          .filter((s) => s.perPerson)
          .map((s) => mcp.personalView(me, s.name)),
      );
    });
    app.post("/:name/signin", member, paramsOf(mcpNameParam), async (c) => {
      const origin = new URL(c.req.url).origin;
      return c.json(await signIns.start(mcp, person(c), c.req.valid("param").name, origin));
    });
    app.delete("/:name/signin", member, paramsOf(mcpNameParam), async (c) => {
      return c.json(await mcp.signOut(person(c), c.req.valid("param").name));
    });
    // The prompts of the servers this person may use, for `/` in the web composer.
    app.get("/prompts", member, async (c) => c.json(await mcp.prompts(person(c))));
    app.post(
      "/prompts/:name/:prompt",
      member,
      paramsOf(promptParams),
      jsonBody(promptArgsSchema),
      async (c) => {
        const { name, prompt } = c.req.valid("param");
        const text = await mcp.getPrompt(person(c), name, prompt, c.req.valid("json").arguments ?? {});
        return c.json({ text });
      },
    );
    app.get("/oauth/callback", async (c) => {
      const server = await signIns.complete(
        c.req.query("state") ?? "",
        c.req.query("code"),
        c.req.query("error"),
      );
      return c.html(
        `<!doctype html><title>Dimsum</title><p>Signed in to ${escapeHtml(server.name)}. You can close this tab.</p>`,
      );
    });
  }
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

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
