/**
 * `/api/mcp`: the MCP servers of mcp.json and Settings with their status, each person seeing only
 * those visible to them (owner, `visibility`, `allowedUsers`; owners and admins see all; a hidden
 * one answers 404 everywhere). Answers 501 when the server runs without MCP.
 * Every member: `GET /prompts` and `POST /prompts/:name/:prompt` (the prompts of the servers they may
 * use, and one's text with its arguments), `GET /mine` (per-person servers and their own sign-in), `POST /:name/signin` (the
 * authorization URL to open), `DELETE /:name/signin` (revoke and forget); the authorization server
 * redirects the browser to `GET /oauth/callback`.
 * `POST /` adds a server (stdio: owners and admins only; or a remote URL — refused on a private or
 * loopback address unless `tools.fetch.allowPrivateNetwork` is set), owned by who added it, saved in
 * the settings store and started at once. Its owner or an admin: `PATCH /:name` (who sees it),
 * `DELETE /:name` (stop and forget; mcp.json's are read-only), `POST /:name/connect|disconnect`.
 */
import { Hono } from "hono";
import { conflict, forbidden, invalid, unavailable } from "../../errors.js";
import type { McpControl } from "../../mcp/server-pool.js";
import { checkVisibility, resourceNotFound } from "../../shared/visibility.js";
import { requireRole } from "../auth/middleware.js";
import { type AppContext, type AppEnv, actorOf, authOf } from "../context.js";
import { checkRemoteUrl } from "../http/remote-url.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { McpSignIns } from "../mcp-signin.js";
import type { McpServerInput } from "../settings/mcp-server-settings.js";
import { mergedAccess, ownedServer, sharedVisibility, visibleServer, visibleServers } from "./mcp-access.js";
import {
  addMcpServerSchema,
  mcpNameParam,
  mcpVisibilitySchema,
  promptArgsSchema,
  promptParams,
} from "./team-schemas.js";

/** The MCP routes, mounted at `/api/mcp`. */
export function mcpRoutes(mcp: McpControl | undefined, signIns = new McpSignIns()): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  if (!mcp) {
    app.use("*", requireRole("owner", "admin"));
    app.all("*", () => {
      throw unavailable("MCP servers are not available on this server");
    });
    return app;
  }
  const member = requireRole("owner", "admin", "member");
  // The signed-in person (requireRole above has refused everyone else).
  const person = (c: AppContext) => authOf(c).user.id;
  app.get("/mine", member, async (c) => {
    const me = person(c);
    const mine = visibleServers(mcp.list(), actorOf(c)).filter((s) => s.perPerson);
    return c.json(await Promise.all(mine.map((s) => mcp.personalView(me, s.name))));
  });
  app.post("/:name/signin", member, paramsOf(mcpNameParam), async (c) => {
    const origin = new URL(c.req.url).origin;
    const { name } = c.req.valid("param");
    visibleServer(mcp, actorOf(c), name);
    return c.json(await signIns.start(mcp, person(c), name, origin));
  });
  app.delete("/:name/signin", member, paramsOf(mcpNameParam), async (c) => {
    const { name } = c.req.valid("param");
    visibleServer(mcp, actorOf(c), name);
    return c.json(await mcp.signOut(person(c), name));
  });
  // The prompts of the servers this person may use, for `/` in the web composer.
  app.get("/prompts", member, async (c) => {
    const seen = new Set(visibleServers(mcp.list(), actorOf(c)).map((s) => s.name));
    return c.json((await mcp.prompts(person(c))).filter((p) => seen.has(p.server)));
  });
  app.post(
    "/prompts/:name/:prompt",
    member,
    paramsOf(promptParams),
    jsonBody(promptArgsSchema),
    async (c) => {
      const { name, prompt } = c.req.valid("param");
      visibleServer(mcp, actorOf(c), name);
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

  app.use("*", member);

  // The servers this person may see (owners and admins: all).
  app.get("/", (c) => c.json(visibleServers(mcp.list(), actorOf(c))));

  // Owners and admins add any server; members add remote ones (they run no process here), private to
  // themselves (sharedVisibility). The one who adds it owns it.
  app.post("/", jsonBody(addMcpServerSchema), async (c) => {
    const body = c.req.valid("json");
    const actor = actorOf(c);
    const { settings, config } = c.get("services");
    if (!SERVER_NAME.test(body.name)) {
      throw invalid(
        `MCP server name "${body.name}" is not allowed`,
        "use 1–64 lowercase letters, digits, _ or -",
      );
    }
    checkVisibility(body.visibility, body.allowedUsers);
    if (mcp.list().some((s) => s.name === body.name)) {
      // A hidden server's name is taken all the same; say so without naming whose it is.
      throw conflict(`MCP server "${body.name}" already exists`, "choose another name");
    }
    const visibility = sharedVisibility(actor, body.visibility);
    const access = {
      ownerId: actor.userId,
      ...(visibility ? { visibility } : {}),
      ...(body.allowedUsers ? { allowedUsers: body.allowedUsers } : {}),
    };
    let input: McpServerInput;
    if ("url" in body) {
      await checkRemoteUrl(body.url, config.tools.fetch.allowPrivateNetwork, {
        what: "MCP server",
        example: "https://mcp.example.com/mcp",
      });
      input = { name: body.name, url: body.url, ...(body.oauth ? { oauth: body.oauth } : {}), ...access };
    } else {
      if (actor.role !== "owner" && actor.role !== "admin") {
        throw forbidden(
          "Only owners and admins can add a stdio MCP server (it runs as a process on this server).",
          "add a remote server by its URL, or ask an admin",
        );
      }
      input = {
        name: body.name,
        transport: "stdio",
        command: body.command,
        args: body.args,
        ...(body.env ? { env: body.env } : {}),
        ...access,
      };
    }
    const view = await mcp.add(await settings.mcp.add(input));
    return c.json(view, 201);
  });

  // Who sees a server added in Settings: its owner or an admin may change it.
  app.patch("/:name", paramsOf(mcpNameParam), jsonBody(mcpVisibilitySchema), async (c) => {
    const { name } = c.req.valid("param");
    const view = ownedServer(mcp, actorOf(c), name, "change who sees it");
    if (!view.removable) {
      throw conflict(`MCP server "${name}" comes from mcp.json`, "every person sees mcp.json's servers");
    }
    const patch = c.req.valid("json");
    checkVisibility(patch.visibility, patch.allowedUsers);
    if (patch.visibility !== undefined) sharedVisibility(actorOf(c), patch.visibility);
    const access = mergedAccess(view, patch);
    if (!(await c.get("services").settings.mcp.setVisibility(name, access))) {
      throw resourceNotFound("MCP server");
    }
    return c.json(await mcp.setAccess(name, access));
  });

  app.delete("/:name", paramsOf(mcpNameParam), async (c) => {
    const { name } = c.req.valid("param");
    const server = ownedServer(mcp, actorOf(c), name, "remove it");
    if (!server.removable) {
      throw conflict(`MCP server "${name}" comes from mcp.json`, "remove it from mcp.json and restart");
    }
    await c.get("services").settings.mcp.remove(name);
    await mcp.remove(name);
    return c.body(null, 204);
  });

  app.post("/:name/connect", paramsOf(mcpNameParam), async (c) => {
    const { name } = c.req.valid("param");
    ownedServer(mcp, actorOf(c), name, "connect it");
    return c.json(await mcp.connect(name));
  });

  app.post("/:name/disconnect", paramsOf(mcpNameParam), async (c) => {
    const { name } = c.req.valid("param");
    ownedServer(mcp, actorOf(c), name, "disconnect it");
    return c.json(await mcp.disconnect(name));
  });

  return app;
}

const SERVER_NAME = /^[a-z0-9_-]{1,64}$/;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
