/**
 * Channel messages: paged history, posting (rate limited; routes to agents and starts runs or a
 * flow), regenerating an answer, editing one's last message, read markers, deletion, and full-text search over the channels the caller may see.
 */
import { Hono } from "hono";
import { invalid } from "../../errors.js";
import type { Team } from "../../team/types.js";
import { type AppEnv, actorOf } from "../context.js";
import { readUpload } from "../http/read-upload.js";
import { jsonBody, paramsOf, queryOf } from "../http/validate.js";
import { messageRateLimit } from "../security/rate-limit.js";
import {
  attachmentParams,
  idParam,
  messagesQuerySchema,
  numericIdParam,
  postMessageSchema,
  readMarkerSchema,
  searchQuerySchema,
  uploadQuerySchema,
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
      const body = c.req.valid("json");
      const result = await team.postMessage(actorOf(c), c.req.valid("param").id, body.text, {
        // A person in the web UI can answer MCP requests for input; a script with an API token cannot.
        present: c.get("auth")?.method !== "api_token",
        ...(body.attachments ? { attachments: body.attachments } : {}),
      });
      return c.json(result, 201);
    },
  );

  // What the composer checks before uploading, so its refusals match the server's.
  app.get("/attachments/limits", (c) => c.json(team.attachmentLimits()));

  // A file to send with a message: the raw bytes, the name in the query; checked and stored once. Its
  // kind's size limit is checked while it streams in.
  app.post(
    "/channels/:id/attachments",
    messageRateLimit,
    paramsOf(idParam),
    queryOf(uploadQuerySchema),
    async (c) => {
      const { name } = c.req.valid("query");
      const declared = Number(c.req.header("content-length") ?? Number.NaN);
      const data = await readUpload(
        c.req.raw.body,
        Number.isFinite(declared) ? declared : undefined,
        name,
        team.attachmentLimits(),
      );
      const meta = await team.uploadAttachment(actorOf(c), c.req.valid("param").id, name, data);
      return c.json(meta, 201);
    },
  );

  app.get("/channels/:id/attachments/:fileId", paramsOf(attachmentParams), async (c) => {
    const { id, fileId } = c.req.valid("param");
    const { meta, data } = await team.readAttachment(actorOf(c), id, fileId);
    const headers: Record<string, string> = {
      "content-type": meta.mimeType.startsWith("text/") ? `${meta.mimeType}; charset=utf-8` : meta.mimeType,
      "content-disposition": `${meta.kind === "text" ? "attachment" : "inline"}; filename*=UTF-8''${encodeURIComponent(meta.name)}`,
      "cache-control": "private, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      // A PDF or an image opened in its own tab runs nothing.
      "content-security-policy": "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'",
    };
    return c.body(new Uint8Array(data), 200, headers);
  });

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
      const body = c.req.valid("json");
      if (body.attachments !== undefined) {
        throw invalid(
          "An edit changes a message's text only; its files cannot be added or removed",
          "send the text without `attachments`, or send a new message with the files",
        );
      }
      const result = await team.editMessage(actorOf(c), c.req.valid("param").id, body.text);
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
