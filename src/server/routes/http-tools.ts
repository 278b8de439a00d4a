/**
 * `/api/http-tools` (owners and admins; 403 for everyone else): the HTTP tools agents may call.
 * `GET /` lists those of the tools/http folders and the config's `httpTools` (read-only) and those
 * added in Settings, never a header value; `POST /` adds one (the body is a definition in the format
 * of tools/http/*.json, checked by the same schema); `PATCH /:name` replaces its definition
 * (`{definition?, enabled?}`; a header value given as "" keeps the saved one) or turns it on or off;
 * `DELETE /:name` forgets it. Runs read the list at their start: no restart, on any instance.
 */
import { Hono } from "hono";
import * as z from "zod";
import { unavailable } from "../../errors.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import type { HttpTools } from "../http-tools.js";

/** The definition itself is checked by the HTTP tool format's own schema (see tools/http/definition.ts). */
const addSchema = z.record(z.string(), z.unknown());

const patchSchema = z
  .object({
    definition: z.record(z.string(), z.unknown()).optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine((p) => p.definition !== undefined || p.enabled !== undefined, "give a definition or enabled");

const nameParam = z.object({ name: z.string().min(1).max(100) });

/** The HTTP tool routes, mounted at `/api/http-tools`; 501 without `tools`. */
export function httpToolRoutes(tools: HttpTools | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));
  if (!tools) {
    app.all("*", () => {
      throw unavailable("HTTP tools from Settings are not available on this server");
    });
    return app;
  }

  app.get("/", async (c) => c.json(await tools.list()));

  app.post("/", jsonBody(addSchema), async (c) => c.json(await tools.add(c.req.valid("json")), 201));

  app.patch("/:name", paramsOf(nameParam), jsonBody(patchSchema), async (c) => {
    const body = c.req.valid("json");
    return c.json(
      await tools.update(c.req.valid("param").name, {
        ...(body.definition !== undefined ? { definition: body.definition } : {}),
        ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
      }),
    );
  });

  app.delete("/:name", paramsOf(nameParam), async (c) => {
    await tools.remove(c.req.valid("param").name);
    return c.body(null, 204);
  });

  return app;
}
