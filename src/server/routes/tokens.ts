/** `/api/tokens`: each user's own API tokens for the OpenAI-compatible endpoint (secret shown once). */
import { Hono } from "hono";
import { notFound } from "../../errors.js";
import { type AppEnv, authOf } from "../context.js";
import { jsonBody } from "../http/validate.js";
import { tokenNameSchema } from "./schemas.js";

/** The API token routes, mounted at `/api/tokens`. */
export function tokenRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();

  app.get("/", async (c) => {
    const tokens = await c.get("services").apiTokens.list(authOf(c).user.id);
    return c.json(tokens.map((t) => ({ ...t, lastUsedAt: t.lastUsedAt ?? null })));
  });

  app.post("/", jsonBody(tokenNameSchema), async (c) => {
    const created = await c.get("services").apiTokens.create(authOf(c).user.id, c.req.valid("json").name);
    return c.json(
      {
        id: created.id,
        name: created.name,
        token: created.token,
        preview: created.preview,
        createdAt: created.createdAt,
      },
      201,
    );
  });

  app.delete("/:id", async (c) => {
    const id = c.req.param("id");
    if (!(await c.get("services").apiTokens.delete(authOf(c).user.id, id)))
      throw notFound(`API token ${id} not found`);
    return c.body(null, 204);
  });

  return app;
}
