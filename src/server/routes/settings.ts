/**
 * `/api/settings` (owner and admin): providers with their keys (never returned in full), default
 * model, and the shell tool's sandbox status (read-only).
 */
import { Hono } from "hono";
import { z } from "zod";
import type { ShellOffer } from "../../capabilities/shell-offer.js";
import { builtinProviders } from "../../config/providers.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { jsonBody } from "../http/validate.js";
import type { SettingsView } from "../settings/settings-store.js";

const providerSchema = z.object({
  name: z
    .string()
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, "1-40 lowercase letters, digits, '_' or '-'"),
  baseUrl: z
    .url({ protocol: /^https?$/, message: "an http(s) URL" })
    .max(500)
    .nullable()
    .optional(),
  protocol: z.enum(["openai", "anthropic", "gemini"]).optional(),
  apiKey: z.string().max(1000).nullable().optional(),
});

const settingsUpdateSchema = z.object({
  defaultModel: z
    .string()
    .trim()
    .regex(/^[^:\s]+:\S+$/, "provider:model, e.g. openai:gpt-4o")
    .max(200)
    .nullable()
    .optional(),
  providers: z
    .array(providerSchema)
    .max(50)
    .refine((list) => new Set(list.map((p) => p.name)).size === list.length, "provider names must be unique")
    .optional(),
});

/** The settings routes, mounted at `/api/settings`. */
export function settingsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));

  const respond = (view: SettingsView, fallback: string | undefined, shell: ShellOffer | undefined) => ({
    defaultModel: view.defaultModel ?? fallback ?? null,
    providers: view.providers.map((p) => ({
      ...p,
      baseUrl: p.baseUrl ?? null,
      keyPreview: p.keyPreview ?? null,
    })),
    knownProviders: [...builtinProviders.keys()],
    // The shell tool's sandbox: whether commands are confined, and whether agents get the tool at all.
    shell: shell ?? null,
  });

  app.get("/", (c) => {
    const { settings, config, shell } = c.get("services");
    return c.json(respond(settings.view(), config.defaultModel, shell));
  });

  app.put("/", jsonBody(settingsUpdateSchema), (c) => {
    const { settings, config, shell } = c.get("services");
    return c.json(respond(settings.update(c.req.valid("json")), config.defaultModel, shell));
  });

  return app;
}
