/**
 * What the settings page and the home page need to know about models without ever seeing a key:
 * every built-in provider (plus the custom ones, from the config file and from the UI) with where its
 * key and base URL come from, and
 * whether the default model can run right now.
 */
import type { DimsumConfig } from "../../config/load-config.js";
import { builtinProviders } from "../../config/providers.js";
import { parseModelString, resolveModel } from "../../config/resolve-model.js";
import { toDimsumError } from "../../errors.js";
import type { WireProtocol } from "../../llm/types.js";
import type { SettingsRepository, SettingsView } from "./settings-store.js";

/**
 * Where a provider's key or base URL comes from: saved in the UI, the environment, the config file
 * (`dimsum.config.json` or DIMSUM_HOME/config.json), the built-in default, or nowhere.
 */
export type ValueSource = "settings" | "environment" | "config" | "default" | "none";

export interface ProviderOverview {
  name: string;
  builtin: boolean;
  /**
   * Defined under `providers` in the config file: its name and protocol are read-only there; the
   * settings may override only its base URL and key.
   */
  fromConfigFile: boolean;
  protocol: WireProtocol;
  /** The URL requests go to (the built-in default when nothing overrides it). */
  baseUrl: string;
  baseUrlSource: Exclude<ValueSource, "none">;
  /** The URL the provider uses when the settings do not override it (built-ins and config-file ones). */
  defaultBaseUrl: string | undefined;
  /** The variable a key may come from, e.g. `OPENAI_API_KEY`; undefined when none is needed (Ollama). */
  keyEnv: string | undefined;
  needsKey: boolean;
  hasKey: boolean;
  keySource: Exclude<ValueSource, "default">;
  /** Like `sk-…abcd`, for keys saved in the UI only; keys from the environment are never previewed. */
  keyPreview: string | undefined;
}

/** Why the default model cannot run, if it cannot. */
export type ModelProblem = "no_default_model" | "no_key" | "bad_model";

export interface ModelStatus {
  ready: boolean;
  defaultModel: string | undefined;
  provider: string | undefined;
  problem: ModelProblem | undefined;
  /** One sentence with the fix, for people; undefined when ready. */
  message: string | undefined;
}

/**
 * Every built-in provider, then the custom ones of the config file, then those saved in the UI, each
 * with its sources. A config-file entry named like a built-in one replaces it (as model resolution does).
 */
export function providerOverview(view: SettingsView, config: DimsumConfig): ProviderOverview[] {
  const saved = new Map(view.providers.map((p) => [p.name, p]));
  const env = config.env;
  const fileProviders = config.file.providers;
  const list: ProviderOverview[] = [];
  for (const def of builtinProviders.values()) {
    if (Object.hasOwn(fileProviders, def.name)) continue;
    const row = saved.get(def.name);
    const envKey = def.keyEnv ? env[def.keyEnv] : undefined;
    const envUrl = env[def.baseUrlEnv];
    const keySource = row?.hasKey ? "settings" : envKey ? "environment" : "none";
    list.push({
      name: def.name,
      builtin: true,
      fromConfigFile: false,
      protocol: def.protocol,
      baseUrl: row?.baseUrl ?? (envUrl || def.defaultBaseUrl),
      baseUrlSource: row?.baseUrl ? "settings" : envUrl ? "environment" : "default",
      defaultBaseUrl: def.defaultBaseUrl,
      keyEnv: def.keyEnv,
      needsKey: def.keyEnv !== undefined,
      hasKey: keySource !== "none",
      keySource,
      keyPreview: keySource === "settings" ? row?.keyPreview : undefined,
    });
  }
  for (const [name, entry] of Object.entries(fileProviders)) {
    const row = saved.get(name);
    const envKey = entry.apiKeyEnv ? env[entry.apiKeyEnv] : undefined;
    const keySource = row?.hasKey ? "settings" : entry.apiKey ? "config" : envKey ? "environment" : "none";
    list.push({
      name,
      builtin: false,
      fromConfigFile: true,
      protocol: entry.protocol,
      baseUrl: row?.baseUrl ?? entry.baseUrl,
      baseUrlSource: row?.baseUrl ? "settings" : "config",
      defaultBaseUrl: entry.baseUrl,
      keyEnv: entry.apiKeyEnv,
      needsKey: entry.apiKeyEnv !== undefined || entry.apiKey !== undefined,
      hasKey: keySource !== "none",
      keySource,
      keyPreview: keySource === "settings" ? row?.keyPreview : undefined,
    });
  }
  for (const row of saved.values()) {
    if (row.builtin || Object.hasOwn(fileProviders, row.name)) continue;
    list.push({
      name: row.name,
      builtin: false,
      fromConfigFile: false,
      protocol: row.protocol,
      baseUrl: row.baseUrl ?? "",
      baseUrlSource: "settings",
      defaultBaseUrl: undefined,
      keyEnv: undefined,
      needsKey: false,
      hasKey: row.hasKey,
      keySource: row.hasKey ? "settings" : "none",
      keyPreview: row.keyPreview,
    });
  }
  return list;
}

/** Whether the default model resolves (chosen, known provider, key present), and the fix if not. */
export async function modelStatus(settings: SettingsRepository, config: DimsumConfig): Promise<ModelStatus> {
  const effective = await settings.effectiveConfig(config);
  const defaultModel = effective.defaultModel;
  if (!defaultModel) {
    return {
      ready: false,
      defaultModel: undefined,
      provider: undefined,
      problem: "no_default_model",
      message:
        "No default model is chosen yet: pick one and give its provider a key in Settings → Providers.",
    };
  }
  let provider: string | undefined;
  try {
    provider = parseModelString(defaultModel).provider;
    resolveModel(effective, undefined);
    return { ready: true, defaultModel, provider, problem: undefined, message: undefined };
  } catch (err) {
    const error = toDimsumError(err);
    const noKey = error.message.startsWith("no API key");
    return {
      ready: false,
      defaultModel,
      provider,
      problem: noKey ? "no_key" : "bad_model",
      message: noKey
        ? `The default model ${defaultModel} needs an API key for ${provider}: add it in Settings → Providers.`
        : `The default model ${defaultModel} cannot be used (${error.message}): fix it in Settings → Providers.`,
    };
  }
}
