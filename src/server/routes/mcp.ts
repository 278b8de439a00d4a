/**
 * `/api/mcp` (owners and admins): the MCP servers of mcp.json with their status, connected and
 * disconnected one by one. Answers 501 when the server runs without MCP.
 * Every member: `GET /prompts` and `POST /prompts/:name/:prompt` (the prompts of the servers they may
 * use, and one's text with its arguments), `GET /mine` (per-person servers and their own sign-in), `POST /:name/signin` (the
 * authorization URL to open), `DELETE /:name/signin` (revoke and forget); the authorization server
 * redirects the browser to `GET /oauth/callback`.
 * Owners and admins: `POST /` adds a server (stdio, or a remote URL — refused on a private or
 * loopback address unless `tools.fetch.allowPrivateNetwork` is set), saved in the settings store and
 * started at once; `DELETE /:name` stops and forgets one added there (mcp.json's are read-only).
 */
import { Hono } from "hono";
import { conflict, invalid, notFound, unavailable } from "../../errors.js";
import type { McpControl } from "../../mcp/server-pool.js";
import { requireRole } from "../auth/middleware.js";
import { type AppContext, type AppEnv, authOf } from "../context.js";
import { checkRemoteUrl } from "../http/remote-url.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { McpSignIns } from "../mcp-signin.js";
import type { McpServerInput } from "../settings/mcp-server-settings.js";
import { addMcpServerSchema, mcpNameParam, promptArgsSchema, promptParams } from "./team-schemas.js";

/** The MCP routes, mounted at `/api/mcp`. */
export function mcpRoutes(mcp: McpControl | undefined, signIns = new McpSignIns()): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (mcp) {
    const member = requireRole("owner", "admin", "member");
    // The signed-in person (requireRole above has refused everyone else).
    const person = (c: AppContext) => authOf(c).user.id;
    app.get("/mine", member, async (c) => {
      const me = person(c);
      const mine = mcp.list().filter((s) => s.perPerson);
      return c.json(await Promise.all(mine.map((s) => mcp.personalView(me, s.name))));
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
        c.req.query("iss"),
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

  app.post("/", jsonBody(addMcpServerSchema), async (c) => {
    const body = c.req.valid("json");
    const { settings, config } = c.get("services");
    if (!SERVER_NAME.test(body.name)) {
      throw invalid(
        `MCP server name "${body.name}" is not allowed`,
        "use 1–64 lowercase letters, digits, _ or -",
      );
    }
    if (mcp.list().some((s) => s.name === body.name)) {
      throw conflict(`MCP server "${body.name}" already exists`, "choose another name");
    }
    let input: McpServerInput;
    if ("url" in body) {
      await checkRemoteUrl(body.url, config.tools.fetch.allowPrivateNetwork, {
        what: "MCP server",
        example: "https://mcp.example.com/mcp",
      });
      input = { name: body.name, url: body.url, ...(body.oauth ? { oauth: body.oauth } : {}) };
    } else {
      input = {
        name: body.name,
        transport: "stdio",
        command: body.command,
        args: body.args,
        ...(body.env ? { env: body.env } : {}),
      };
    }
    const view = await mcp.add(await settings.mcp.add(input));
    return c.json(view, 201);
  });

  app.delete("/:name", paramsOf(mcpNameParam), async (c) => {
    const { name } = c.req.valid("param");
    const server = mcp.list().find((s) => s.name === name);
    if (!server) throw notFound(`MCP server "${name}" not found`);
    if (!server.removable) {
      throw conflict(`MCP server "${name}" comes from mcp.json`, "remove it from mcp.json and restart");
    }
    await c.get("services").settings.mcp.remove(name);
    await mcp.remove(name);
    return c.body(null, 204);
  });

  app.post("/:name/connect", paramsOf(mcpNameParam), async (c) => {
    return c.json(await mcp.connect(c.req.valid("param").name));
  });

  app.post("/:name/disconnect", paramsOf(mcpNameParam), async (c) => {
    return c.json(await mcp.disconnect(c.req.valid("param").name));
  });

  return app;
}

const SERVER_NAME = /^[a-z0-9_-]{1,64}$/;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
