/**
 * `/api/remote-agents` (owners and admins; 403 for everyone else): the remote A2A agents agents may
 * call. `GET /` lists a2a.json's (read-only) and those added in Settings, never a token; `POST /`
 * adds one (name as in a2a.json, an http(s) URL refused on a private or loopback address unless
 * `tools.fetch.allowPrivateNetwork` is set, an optional bearer token sealed at rest); `PATCH /:name`
 * changes its URL, token, description or whether runs offer it; `DELETE /:name`
 * forgets one added there; `POST /:name/check` reads its agent card and says what it found or why
 * it could not. Runs read the list at their start: no restart, on any instance.
 */
import { Hono } from "hono";
import * as z from "zod";
import { readRemoteCard } from "../../a2a/remote-agent.js";
import { notFound, toDimsumError, unavailable } from "../../errors.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { checkRemoteUrl } from "../http/remote-url.js";
import { jsonBody, paramsOf } from "../http/validate.js";
import type { RemoteAgents } from "../remote-agents.js";
import type { RemoteAgentPatch } from "../settings/remote-agent-settings.js";

const addRemoteAgentSchema = z.object({
  name: z
    .string()
    .trim()
    .regex(
      /^[a-z0-9][a-z0-9_-]{0,39}$/,
      "use 1–40 lowercase letters, digits, - and _ (starting with a letter or digit)",
    ),
  url: z.string().trim().min(1, "give the agent's URL").max(2000),
  token: z.string().trim().max(4000).optional(),
  description: z.string().trim().max(1000).optional(),
  enabled: z.boolean().optional(),
});

/** A change: `null` removes the token or the description. */
const patchRemoteAgentSchema = z
  .object({
    url: z.string().trim().min(1, "give the agent's URL").max(2000).optional(),
    token: z.string().trim().min(1, "give the token, or null to remove it").max(4000).nullable().optional(),
    description: z.string().trim().max(1000).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), "change at least one field");

const nameParam = z.object({ name: z.string().min(1).max(100) });

/** The remote agent routes, mounted at `/api/remote-agents`; 501 without `remotes`. */
export function remoteAgentRoutes(remotes: RemoteAgents | undefined): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));
  if (!remotes) {
    app.all("*", () => {
      throw unavailable("Remote A2A agents are not available on this server");
    });
    return app;
  }

  app.get("/", async (c) => c.json(await remotes.list()));

  app.post("/", jsonBody(addRemoteAgentSchema), async (c) => {
    const body = c.req.valid("json");
    await remotes.assertNameFree(body.name);
    await checkRemoteUrl(body.url, c.get("services").config.tools.fetch.allowPrivateNetwork, {
      what: "A2A agent",
      example: "https://agents.example.com/a2a/research",
    });
    const view = await remotes.add({
      name: body.name,
      url: body.url,
      ...(body.token ? { token: body.token } : {}),
      ...(body.description ? { description: body.description } : {}),
      ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    });
    return c.json(view, 201);
  });

  app.patch("/:name", paramsOf(nameParam), jsonBody(patchRemoteAgentSchema), async (c) => {
    const body = c.req.valid("json");
    if (body.url !== undefined) {
      await checkRemoteUrl(body.url, c.get("services").config.tools.fetch.allowPrivateNetwork, {
        what: "A2A agent",
        example: "https://agents.example.com/a2a/research",
      });
    }
    const patch: RemoteAgentPatch = {};
    if (body.url !== undefined) patch.url = body.url;
    if (body.token !== undefined) patch.token = body.token;
    if (body.description !== undefined) patch.description = body.description === "" ? null : body.description;
    if (body.enabled !== undefined) patch.enabled = body.enabled;
    return c.json(await remotes.update(c.req.valid("param").name, patch));
  });

  app.delete("/:name", paramsOf(nameParam), async (c) => {
    await remotes.remove(c.req.valid("param").name);
    return c.body(null, 204);
  });

  app.post("/:name/check", paramsOf(nameParam), async (c) => {
    const { name } = c.req.valid("param");
    const remote = await remotes.find(name);
    if (!remote) throw notFound(`No remote agent "${name}"`);
    try {
      return c.json({ ok: true, card: await readRemoteCard(remote) });
    } catch (err) {
      // The agent's failure, not the caller's or this server's: a report, not an error status.
      const error = toDimsumError(err);
      return c.json({ ok: false, error: { message: error.message, hint: error.hint ?? null } });
    }
  });

  return app;
}
