/**
 * Channel messages: paged history, posting (rate limited; routes to agents and starts runs or a
 * flow), regenerating an answer, editing one's last message, read markers, deletion, and full-text search over the channels the caller may see.
 */
import { Hono } from "hono";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import { messageRateLimit } from "../security/rate-limit.js";
import {
  idParam,
  messagesQuerySchema,
  numericIdParam,
  postMessageSchema,
  readMarkerSchema,
  searchQuerySchema,
} from "./team-schemas.js";

/** The message routes, mounted at `/api` (they span `/channels/:id/…`, `/messages` and `/search`). */
export function messageRoutes(team: Team): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/channels/:id/messages", paramsOf(idParam), queryOf(messagesQuerySchema), async (c) => {
    const messages = await team.listMessages(actorOf(c), c.req.valid("param").id, c.req.valid("query"));
    return c.json(messages);
  });

  app.post(
    "/channels/:id/messages",
    messageRateLimit,
    paramsOf(idParam),
    jsonBody(postMessageSchema),
    async (c) => {
      const result = await team.postMessage(actorOf(c), c.req.valid("param").id, c.req.valid("json").text, {
        // A person in the web UI can answer MCP requests for input; a script with an API token cannot.
        present: c.get("auth")?.method !== "api_token",
      });
      return c.json(result, 201);
    },
  );

  app.get("/channels/:id/elicitations", paramsOf(idParam), async (c) =>
    c.json(await team.listElicitations(actorOf(c), c.req.valid("param").id)),
  );

  app.post("/channels/:id/read", paramsOf(idParam), jsonBody(readMarkerSchema), async (c) => {
    await team.markRead(actorOf(c), c.req.valid("param").id, c.req.valid("json").messageId);
    return c.body(null, 204);
  });

  app.delete("/messages/:id", paramsOf(numericIdParam), async (c) => {
    await team.deleteMessage(actorOf(c), c.req.valid("param").id);
    return c.body(null, 204);
  });

  app.post("/messages/:id/regenerate", messageRateLimit, paramsOf(numericIdParam), async (c) => {
    return c.json(await team.regenerate(actorOf(c), c.req.valid("param").id), 201);
  });

  app.patch(
    "/messages/:id",
    messageRateLimit,
    paramsOf(numericIdParam),
    jsonBody(postMessageSchema),
    async (c) => {
      const result = await team.editMessage(actorOf(c), c.req.valid("param").id, c.req.valid("json").text);
      return c.json(result);
    },
  );

  app.get("/search", queryOf(searchQuerySchema), async (c) => {
    const { q, channelId, limit } = c.req.valid("query");
    const options: { channelId?: string; limit?: number } = {};
    if (channelId !== undefined) options.channelId = channelId;
    if (limit !== undefined) options.limit = limit;
    return c.json(await team.searchMessages(actorOf(c), q, options));
  });

  return app;
}
