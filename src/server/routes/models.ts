/**
 * `GET /api/models`: what a model picker offers — the catalogue's suggestions for every built-in
 * provider, plus what each configured provider's own model list returns when it answers within ~3 s.
 * Lists are cached for a minute per provider configuration. Keys never leave the server.
 * `GET /api/models/status` (every signed-in user): whether the default model can run, and the fix if not.
 */
import { createHash } from "node:crypto";
import { Hono } from "hono";
import type { DimsumConfig } from "../../config/load-config.js";
import { catalogModels, lookupModel } from "../../config/model-catalog.js";
import { builtinProviders } from "../../config/providers.js";
import { resolveModel } from "../../config/resolve-model.js";
import { toDimsumError } from "../../errors.js";
import { listProviderModels } from "../../llm/model-list.js";
import type { ModelSpec } from "../../llm/types.js";
import { requireRole } from "../auth/middleware.js";
import type { AppEnv } from "../context.js";
import { modelStatus } from "../settings/model-status.js";

export interface ModelChoice {
  /** `provider:model`, as agents and settings store it. */
  id: string;
  provider: string;
  model: string;
  /** "catalog": Dimsum's suggestion; "provider": the provider listed it (both when both did). */
  source: "catalog" | "provider";
  contextWindow?: number;
}

export interface ProviderModels {
  name: string;
  /** Whether runs can use it now (it has its key, or needs none and was configured). */
  configured: boolean;
  /** listed: its list came back; failed: it was asked and did not answer; skipped: not asked. */
  list: "listed" | "failed" | "skipped";
  /** Why it is not configured or why listing failed, without secrets. */
  note?: string;
}

export interface ModelsResponse {
  defaultModel: string | null;
  providers: ProviderModels[];
  models: ModelChoice[];
}

export interface ModelRoutesOptions {
  /** How long a provider may take to list its models (default 3000 ms). */
  timeoutMs?: number;
  /** How long a list is reused (default 60 s). */
  cacheMs?: number;
  fetch?: typeof fetch;
  now?: () => number;
}

interface CacheEntry {
  at: number;
  result: Promise<string[]>;
}

/** A provider's connection, resolved through the settings; a missing key is reported, not thrown. */
function target(config: DimsumConfig, name: string): { spec: ModelSpec } | { note: string } {
  try {
    return { spec: resolveModel(config, `${name}:list`) };
  } catch (err) {
    const error = toDimsumError(err);
    return { note: error.hint ? `${error.message}: ${error.hint}` : error.message };
  }
}

/** Ollama needs no key: it counts as configured once someone set its base URL. */
function ollamaConfigured(config: DimsumConfig): boolean {
  return Boolean(config.env[builtinProviders.get("ollama")?.baseUrlEnv ?? "OLLAMA_BASE_URL"]);
}

function fingerprint(name: string, spec: ModelSpec): string {
  const secret = createHash("sha256")
    .update(spec.apiKey ?? "")
    .digest("hex");
  return `${name}|${spec.protocol}|${spec.baseUrl}|${secret}`;
}

/** The model routes, mounted at `/api/models`. */
export function modelRoutes(options: ModelRoutesOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const timeoutMs = options.timeoutMs ?? 3000;
  const cacheMs = options.cacheMs ?? 60_000;
  const now = options.now ?? Date.now;
  const cache = new Map<string, CacheEntry>();

  const listed = (name: string, spec: ModelSpec): Promise<string[]> => {
    const key = fingerprint(name, spec);
    const hit = cache.get(key);
    if (hit && now() - hit.at < cacheMs) return hit.result;
    const result = listProviderModels(name, spec, {
      timeoutMs,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    cache.set(key, { at: now(), result });
    // A failure is remembered for the cache period too, so a dead provider costs one timeout a minute.
    result.catch(() => {});
    return result;
  };

  // Before the role check: guests see why a chat cannot answer too.
  app.get("/status", async (c) => {
    const { settings, config } = c.get("services");
    const status = await modelStatus(settings, config);
    return c.json({
      ready: status.ready,
      defaultModel: status.defaultModel ?? null,
      provider: status.provider ?? null,
      problem: status.problem ?? null,
      message: status.message ?? null,
    });
  });

  app.use("*", requireRole("owner", "admin", "member"));
  app.get("/", async (c) => {
    const { settings, config } = c.get("services");
    const effective = await settings.effectiveConfig(config);
    const names = [...builtinProviders.keys(), ...Object.keys(effective.file.providers)];
    const models = new Map<string, ModelChoice>();
    const add = (provider: string, model: string, source: ModelChoice["source"]) => {
      const id = `${provider}:${model}`;
      if (models.has(id)) return;
      const choice: ModelChoice = { id, provider, model, source };
      const known = lookupModel(model);
      if (known) choice.contextWindow = known.contextWindow;
      models.set(id, choice);
    };
    const providers = await Promise.all(
      names.map(async (name): Promise<ProviderModels> => {
        const resolved = target(effective, name);
        const keyless = name === "ollama" && !ollamaConfigured(effective);
        if ("note" in resolved || keyless) {
          return {
            name,
            configured: false,
            list: "skipped",
            note: "note" in resolved ? resolved.note : "set its base URL to use it",
          };
        }
        try {
          for (const model of await listed(name, resolved.spec)) add(name, model, "provider");
          return { name, configured: true, list: "listed" };
        } catch (err) {
          return { name, configured: true, list: "failed", note: toDimsumError(err).message };
        }
      }),
    );
    // Catalogue suggestions after the lists, so a model both know is marked as listed by the provider.
    for (const name of names) for (const model of catalogModels(name)) add(name, model, "catalog");
    const body: ModelsResponse = {
      defaultModel: effective.defaultModel ?? null,
      providers,
      models: [...models.values()],
    };
    return c.json(body);
  });
  return app;
}
