/**
 * `/api/settings` (owner and admin): the default model and every provider (built-in ones always
 * listed, with where their key and base URL come from; keys never returned, UI-saved ones previewed),
 * and the shell tool's sandbox status (read-only). Custom providers of the config file are listed
 * too (`fromConfigFile`): the settings may override their base URL and key, never their protocol.
 */
import { Hono } from "hono";
import * as z from "zod";
import { builtinProviders } from "../../config/providers.js";
import { invalid } from "../../errors.js";
import { requireRole } from "../auth/middleware.js";
import type { AppContext, AppEnv } from "../context.js";
import { jsonBody } from "../http/validate.js";
import { modelStatus, providerOverview } from "../settings/model-status.js";
import type { ProviderInput, SettingsView } from "../settings/settings-store.js";

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

const providerPatchSchema = providerSchema.omit({ name: true });

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

/** `input` with the config file's definition of the provider, if the file has one. */
function withConfigFile<T extends ProviderInput>(c: AppContext, input: T): T {
  const entry = c.get("services").config.file.providers[input.name];
  return entry ? { ...input, fromConfig: { protocol: entry.protocol } } : input;
}

/** The settings routes, mounted at `/api/settings`. */
export function settingsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use("*", requireRole("owner", "admin"));

  const respond = async (c: AppContext, pending: Promise<SettingsView>) => {
    const view = await pending;
    const { settings, config, shell } = c.get("services");
    const status = await modelStatus(settings, config);
    return c.json({
      defaultModel: view.defaultModel ?? config.defaultModel ?? null,
      defaultModelSource: view.defaultModel ? "settings" : config.defaultModel ? "environment" : "none",
      providers: providerOverview(view, config).map((p) => ({
        ...p,
        defaultBaseUrl: p.defaultBaseUrl ?? null,
        keyEnv: p.keyEnv ?? null,
        keyPreview: p.keyPreview ?? null,
      })),
      knownProviders: [...builtinProviders.keys()],
      modelStatus: {
        ready: status.ready,
        problem: status.problem ?? null,
        message: status.message ?? null,
      },
      // The shell tool's sandbox: whether commands are confined, and whether agents get the tool at all.
      shell: shell ?? null,
    });
  };

  app.get("/", (c) => respond(c, c.get("services").settings.view()));

  app.put("/", jsonBody(settingsUpdateSchema), async (c) => {
    const { providers, ...rest } = c.req.valid("json");
    const update = providers ? { ...rest, providers: providers.map((p) => withConfigFile(c, p)) } : rest;
    return respond(c, c.get("services").settings.update(update));
  });

  // One provider at a time (the settings page's forms): the others are left alone.
  app.put("/providers/:name", jsonBody(providerPatchSchema), async (c) => {
    const name = providerSchema.shape.name.safeParse(c.req.param("name"));
    if (!name.success) throw invalid("provider names are 1-40 lowercase letters, digits, '_' or '-'");
    const input = withConfigFile(c, { ...c.req.valid("json"), name: name.data });
    return respond(c, c.get("services").settings.saveProvider(input));
  });

  app.delete("/providers/:name", (c) =>
    respond(c, c.get("services").settings.removeProvider(c.req.param("name"))),
  );

  return app;
}
