/**
 * `/api/connectors` (owner and admin): connector configs and their lifecycle. Secrets are write-only:
 * responses show them as set/unset with a short preview.
 *
 * `POST /api/connectors/:id/inbound` is the public endpoint platforms call (the generic webhook,
 * Telegram in webhook mode, Feishu's event subscription, DingTalk's HTTP callback, WeCom's callback;
 * WeCom also verifies the URL with a signed `GET`). It takes no session: each connector
 * verifies its platform's signature or secret token before anything is stored. Mount it with
 * `mountConnectorInbound` in `ServerDeps.publicRoutes`, which sit before the session guards.
 */
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import * as z from "zod";
import type { ConnectorManager } from "../../connectors/connector-manager.js";
import { CONNECTOR_TYPES, type ConnectorType, type ConnectorUsers } from "../../connectors/types.js";
import { unavailable } from "../../errors.js";
import { requireRole } from "../auth/middleware.js";
import { randomToken } from "../auth/secrets.js";
import type { UserRepository } from "../auth/user-store.js";
import { type AppEnv, actorOf, type DimsumApp } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import { teamErrorHandler } from "./team-errors.js";

const idParam = z.object({ id: z.string().min(1).max(100) });
const settingsSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));
const secretsSchema = z.record(z.string(), z.string().max(4096));

const inputSchema = z.object({
  type: z.enum(CONNECTOR_TYPES as [ConnectorType, ...ConnectorType[]]),
  name: z.string().max(200),
  agentId: z.string().max(100),
  settings: settingsSchema.optional(),
  secrets: secretsSchema.optional(),
  userMode: z.enum(["guest", "user"]).optional(),
  userId: z.string().max(100).optional(),
});

const patchSchema = z.object({
  name: z.string().max(200).optional(),
  agentId: z.string().max(100).optional(),
  settings: settingsSchema.optional(),
  secrets: secretsSchema.optional(),
  userMode: z.enum(["guest", "user"]).optional(),
  userId: z.string().max(100).nullable().optional(),
});

const chatParam = z.object({ id: z.string().min(1).max(100), chatId: z.string().min(1).max(200) });
const personParam = z.object({ id: z.string().min(1).max(100), externalUserId: z.string().min(1).max(200) });
const bindingSchema = z
  .object({
    mode: z.enum(["direct", "group"]).optional(),
    channelId: z.string().min(1).max(100).optional(),
    mirror: z.boolean().optional(),
  })
  .strict();
const linkSchema = z.object({ userId: z.string().min(1).max(100).nullable() }).strict();

function notEnabled(): never {
  throw unavailable("connectors are not enabled on this server");
}

/** The connector routes, mounted at `/api/connectors`; 501 when the server runs without them. */
export function connectorRoutes(connectors: ConnectorManager | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(teamErrorHandler);
  app.use("*", requireRole("owner", "admin"));
  const manager = (): ConnectorManager => connectors ?? notEnabled();

  app.get("/", async (c) => c.json(await manager().list(actorOf(c))));

  app.post("/", jsonBody(inputSchema), async (c) => {
    const body = c.req.valid("json");
    return c.json(await manager().create(actorOf(c), body), 201);
  });

  app.get("/:id", paramsOf(idParam), async (c) =>
    c.json(await manager().get(actorOf(c), c.req.valid("param").id)),
  );

  app.patch("/:id", paramsOf(idParam), jsonBody(patchSchema), async (c) => {
    return c.json(await manager().update(actorOf(c), c.req.valid("param").id, c.req.valid("json")));
  });

  app.delete("/:id", paramsOf(idParam), async (c) => {
    await manager().delete(actorOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });

  app.post("/:id/start", paramsOf(idParam), async (c) => {
    return c.json(await manager().start(actorOf(c), c.req.valid("param").id));
  });

  app.post("/:id/stop", paramsOf(idParam), async (c) => {
    return c.json(await manager().stop(actorOf(c), c.req.valid("param").id));
  });

  app.post("/:id/test", paramsOf(idParam), async (c) => {
    return c.json(await manager().test(actorOf(c), c.req.valid("param").id));
  });

  app.get("/:id/chats", paramsOf(idParam), async (c) =>
    c.json(await manager().chats(actorOf(c), c.req.valid("param").id)),
  );

  app.patch("/:id/chats/:chatId", paramsOf(chatParam), jsonBody(bindingSchema), async (c) => {
    const { id, chatId } = c.req.valid("param");
    return c.json(await manager().bindChat(actorOf(c), id, chatId, c.req.valid("json")));
  });

  app.get("/:id/people", paramsOf(idParam), async (c) =>
    c.json(await manager().people(actorOf(c), c.req.valid("param").id)),
  );

  app.put("/:id/people/:externalUserId/link", paramsOf(personParam), jsonBody(linkSchema), async (c) => {
    const { id, externalUserId } = c.req.valid("param");
    await manager().linkPerson(actorOf(c), id, externalUserId, c.req.valid("json").userId);
    return c.body(null, 204);
  });

  return app;
}

/**
 * `POST /api/account/messenger-link` (any signed-in member): a one-time code to send to a bot in a
 * private chat, which links the sender's messenger account to the caller's web account.
 */
export function messengerLinkRoutes(connectors: ConnectorManager | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError(teamErrorHandler);
  app.use("*", requireRole("owner", "admin", "member"));
  app.post("/", async (c) => c.json(await (connectors ?? notEnabled()).linkCode(actorOf(c)), 201));
  return app;
}

/** Mounts the management routes at `/api/connectors`; pass it in `ServerDeps.routes`. */
export function mountConnectorRoutes(connectors: ConnectorManager | undefined): (app: DimsumApp) => void {
  return (app) => {
    app.route("/api/connectors", connectorRoutes(connectors));
    app.route("/api/account/messenger-link", messengerLinkRoutes(connectors));
  };
}

/** Mounts the public inbound endpoint; pass it in `ServerDeps.publicRoutes`. */
export function mountConnectorInbound(connectors: ConnectorManager): (app: DimsumApp) => void {
  return (app) => {
    const inbound = async (c: Context<AppEnv>, method: "GET" | "POST") => {
      const headers: Record<string, string | undefined> = {};
      c.req.raw.headers.forEach((value, name) => {
        headers[name.toLowerCase()] = value;
      });
      const body = method === "POST" ? await c.req.text() : "";
      const query = c.req.query();
      const result = await connectors.handleInbound(c.req.param("id") ?? "", {
        method,
        headers,
        query,
        body,
      });
      const status = result.status as ContentfulStatusCode;
      // Some platforms want plain text back (WeCom's echostr), the others JSON.
      if (typeof result.body === "string") return c.text(result.body, status);
      return c.json(result.body as object, status);
    };
    app.post("/api/connectors/:id/inbound", (c) => inbound(c, "POST"));
    // WeCom verifies its callback URL with a signed GET.
    app.get("/api/connectors/:id/inbound", (c) => inbound(c, "GET"));
  };
}

/** The server's accounts as connectors need them: lookups, and guests that cannot sign in. */
export function connectorUsersFrom(users: UserRepository): ConnectorUsers {
  return {
    get: (id) => users.get(id),
    // The password is random and never shown: a mapped external person cannot sign in as the guest.
    createGuest: (username) => users.create({ username, password: randomToken(), role: "guest" }),
  };
}
