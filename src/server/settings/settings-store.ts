/**
 * Server-side settings edited in the UI: model providers (base URL, protocol, API key) and the
 * default model (MCP servers and remote A2A agents in their own modules). Keys are encrypted at rest and never leave the server in full; model resolution
 * sees them through `effectiveEnv` / `effectiveConfig`.
 */
import type { CustomProviderEntry } from "../../config/config-file.js";
import type { DimsumConfig } from "../../config/load-config.js";
import { builtinProviders, canonicalProviderName } from "../../config/providers.js";
import { DimsumError } from "../../errors.js";
import type { WireProtocol } from "../../llm/types.js";
import type { EnvMap } from "../../shared/env-map.js";
import type { Database } from "../../store/database.js";
import { cachedStatement } from "../../store/statement-cache.js";
import { webSearchConfigFromEnv } from "../../tools/web-search/config.js";
import { HttpToolSettings, type HttpToolSettingsRepository } from "./http-tool-settings.js";
import { McpServerSettings, type McpServerSettingsRepository } from "./mcp-server-settings.js";
import { RemoteAgentSettings, type RemoteAgentSettingsRepository } from "./remote-agent-settings.js";
import type { SecretBox } from "./secret-box.js";

export interface ProviderSettingView {
  name: string;
  /** Undefined for a built-in provider left at its default URL. */
  baseUrl: string | undefined;
  protocol: WireProtocol;
  hasKey: boolean;
  /** Like `sk-…abcd`; undefined when there is no key. */
  keyPreview: string | undefined;
  builtin: boolean;
}

export interface SettingsView {
  defaultModel: string | undefined;
  providers: ProviderSettingView[];
}

export interface ProviderInput {
  name: string;
  /** null returns a built-in provider to its default URL. */
  baseUrl?: string | null;
  protocol?: WireProtocol;
  /** A new key; omitted keeps the stored one; null or "" removes it. */
  apiKey?: string | null;
  /**
   * The config file defines this provider: its protocol is fixed, and its base URL applies unless
   * one is given here (so none is required).
   */
  fromConfig?: { protocol: WireProtocol };
}

export interface SettingsUpdate {
  /** null clears the setting (the config file / DIMSUM_MODEL apply again). */
  defaultModel?: string | null;
  /** The full list: providers missing from it are removed; each keeps its key unless given one. */
  providers?: ProviderInput[];
}

export interface ProviderRow {
  name: string;
  base_url: string | null;
  protocol: WireProtocol;
  api_key_enc: string | null;
  key_preview: string | null;
}

/** `sk-…abcd` for long keys; short keys reveal nothing. */
export function keyPreview(key: string): string {
  return key.length >= 12 ? `${key.slice(0, 3)}…${key.slice(-4)}` : "…";
}

/** The env var a custom provider's key is exposed under: `my-llm` → `MY_LLM_API_KEY`. */
export function keyEnvFor(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
}

/**
 * The settings repository (`server_settings` and `provider_settings` tables), implemented over SQLite
 * (`SettingsStore`) and PostgreSQL (`PgSettingsStore`). Keys are sealed with the secret box before
 * they reach a row; only `getProviderKey` and the effective env/config ever open them.
 */
export interface SettingsRepository {
  /** MCP servers added in the UI. */
  readonly mcp: McpServerSettingsRepository;
  /** Remote A2A agents added in the UI. */
  readonly remoteAgents: RemoteAgentSettingsRepository;
  /** HTTP tools added in the UI. */
  readonly httpTools: HttpToolSettingsRepository;
  /** The stored default model, if one was set in the UI. */
  getDefaultModel(): Promise<string | undefined>;
  /** What the settings page shows: never a key, only whether there is one and a preview. */
  view(): Promise<SettingsView>;
  /** Applies an update in one transaction and returns the new view. */
  update(update: SettingsUpdate): Promise<SettingsView>;
  /** Saves one provider (the others stay as they are) and returns the new view. */
  saveProvider(input: ProviderInput): Promise<SettingsView>;
  /** Forgets what the UI saved for one provider (a built-in one falls back to the environment). */
  removeProvider(name: string): Promise<SettingsView>;
  /** The decrypted key of a provider (aliases accepted), for model resolution; undefined if none. */
  getProviderKey(name: string): Promise<string | undefined>;
  /**
   * The environment with settings laid over it: each stored key becomes its provider's key variable
   * (`OPENAI_API_KEY`, `DASHSCOPE_API_KEY`, custom `<NAME>_API_KEY`) and a built-in provider's base URL
   * its `*_BASE_URL`. Settings win over the process environment: they are the operator's latest word.
   */
  effectiveEnv(env: EnvMap): Promise<EnvMap>;
  /**
   * The configuration model resolution should use: `effectiveEnv`, custom providers from settings
   * added to the file's, and the UI's default model over the configured one.
   */
  effectiveConfig(config: DimsumConfig): Promise<DimsumConfig>;
}

/** The stored row of a provider after `input` is applied to `old` (its key sealed with `box`). */
export function mergeProviderRow(
  old: ProviderRow | undefined,
  input: ProviderInput,
  box: SecretBox,
): ProviderRow {
  const name = canonicalProviderName(input.name);
  const builtin = builtinProviders.get(name);
  let sealed = old?.api_key_enc ?? null;
  let preview = old?.key_preview ?? null;
  if (input.apiKey === null || input.apiKey === "") [sealed, preview] = [null, null];
  else if (input.apiKey !== undefined) [sealed, preview] = [box.seal(input.apiKey), keyPreview(input.apiKey)];
  const protocol =
    builtin?.protocol ?? input.fromConfig?.protocol ?? input.protocol ?? old?.protocol ?? "openai";
  const baseUrl = input.baseUrl === undefined ? (old?.base_url ?? null) : input.baseUrl || null;
  if (!builtin && !input.fromConfig && !baseUrl) {
    throw new DimsumError("invalid", `provider "${name}" is not built in, so it needs a baseUrl`, {
      issues: [{ path: "providers.baseUrl", message: `required for custom provider "${name}"` }],
    });
  }
  return { name, base_url: baseUrl, protocol, api_key_enc: sealed, key_preview: preview };
}

/** The settings page's view of the stored rows. */
export function settingsViewOf(defaultModel: string | undefined, rows: readonly ProviderRow[]): SettingsView {
  return {
    defaultModel,
    providers: rows.map((row) => ({
      name: row.name,
      baseUrl: row.base_url ?? undefined,
      protocol: row.protocol,
      hasKey: row.api_key_enc !== null,
      keyPreview: row.key_preview ?? undefined,
      builtin: builtinProviders.has(row.name),
    })),
  };
}

/** `env` with the stored providers laid over it (see `SettingsRepository.effectiveEnv`). */
export function envWithProviders(env: EnvMap, rows: readonly ProviderRow[], box: SecretBox): EnvMap {
  const out: Record<string, string | undefined> = { ...env };
  for (const row of rows) {
    const builtin = builtinProviders.get(row.name);
    const key = row.api_key_enc ? box.open(row.api_key_enc) : undefined;
    if (key) out[builtin?.keyEnv ?? keyEnvFor(row.name)] = key;
    if (builtin && row.base_url) out[builtin.baseUrlEnv] = row.base_url;
  }
  return out;
}

/** The web search engines' keys and addresses `env` gives (the engine order stays the config's). */
function webSearchKeysOf(env: EnvMap): Partial<DimsumConfig["webSearch"]> {
  const { engines: _order, ...keys } = webSearchConfigFromEnv({ ...env, DIMSUM_SEARCH_ENGINES: "" });
  return keys;
}

/** `config` with the stored settings laid over it (see `SettingsRepository.effectiveConfig`). */
export function configWithSettings(
  config: DimsumConfig,
  defaultModel: string | undefined,
  rows: readonly ProviderRow[],
  box: SecretBox,
): DimsumConfig {
  const providers: Record<string, CustomProviderEntry> = { ...config.file.providers };
  for (const row of rows) {
    if (builtinProviders.has(row.name)) continue;
    const file = config.file.providers[row.name];
    if (!file) {
      if (row.base_url)
        providers[row.name] = {
          baseUrl: row.base_url,
          protocol: row.protocol,
          apiKeyEnv: keyEnvFor(row.name),
        };
      continue;
    }
    // A provider of the config file: settings may override its base URL and key, nothing else.
    const { apiKey, apiKeyEnv, ...rest } = file;
    const key =
      row.api_key_enc !== null
        ? { apiKeyEnv: keyEnvFor(row.name) }
        : {
            ...(apiKey !== undefined ? { apiKey } : {}),
            ...(apiKeyEnv !== undefined ? { apiKeyEnv } : {}),
          };
    providers[row.name] = { ...rest, baseUrl: row.base_url ?? file.baseUrl, ...key };
  }
  const env = envWithProviders(config.env, rows, box);
  return {
    ...config,
    env,
    // Search engine keys saved in Settings → Providers (kimi, perplexity, xai) serve web_search too.
    webSearch: { ...config.webSearch, ...webSearchKeysOf(env) },
    defaultModel: defaultModel ?? config.defaultModel,
    file: { ...config.file, providers },
  };
}

/** The settings repository on SQLite. */
export class SettingsStore implements SettingsRepository {
  readonly mcp: McpServerSettings;
  readonly remoteAgents: RemoteAgentSettings;
  readonly httpTools: HttpToolSettings;

  constructor(
    private readonly db: Database,
    private readonly box: SecretBox,
  ) {
    this.mcp = new McpServerSettings(db, box);
    this.remoteAgents = new RemoteAgentSettings(db, box);
    this.httpTools = new HttpToolSettings(db, box);
  }

  #rows(): ProviderRow[] {
    return cachedStatement(this.db, "SELECT * FROM provider_settings ORDER BY name").all() as ProviderRow[];
  }

  #defaultModel(): string | undefined {
    const row = cachedStatement(
      this.db,
      "SELECT value_json FROM server_settings WHERE key = 'defaultModel'",
    ).get() as { value_json: string } | undefined;
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  #view(): SettingsView {
    return settingsViewOf(this.#defaultModel(), this.#rows());
  }

  async getDefaultModel(): Promise<string | undefined> {
    return this.#defaultModel();
  }

  async view(): Promise<SettingsView> {
    return this.#view();
  }

  async update(update: SettingsUpdate): Promise<SettingsView> {
    const now = Date.now();
    this.db.transaction(() => {
      if (update.defaultModel === null)
        cachedStatement(this.db, "DELETE FROM server_settings WHERE key = 'defaultModel'").run();
      else if (update.defaultModel !== undefined) {
        cachedStatement(
          this.db,
          `INSERT INTO server_settings (key, value_json, updated_at) VALUES ('defaultModel', ?, ?)
             ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`,
        ).run(JSON.stringify(update.defaultModel), now);
      }
      if (update.providers) this.#replaceProviders(update.providers, now);
    })();
    return this.#view();
  }

  #replaceProviders(inputs: ProviderInput[], now: number): void {
    const existing = new Set(this.#rows().map((row) => row.name));
    const kept = new Set<string>();
    for (const input of inputs) kept.add(this.#upsertRow(input, now));
    for (const name of existing) {
      if (!kept.has(name)) cachedStatement(this.db, "DELETE FROM provider_settings WHERE name = ?").run(name);
    }
  }

  async saveProvider(input: ProviderInput): Promise<SettingsView> {
    this.db.transaction(() => this.#upsertRow(input, Date.now()))();
    return this.#view();
  }

  async removeProvider(name: string): Promise<SettingsView> {
    cachedStatement(this.db, "DELETE FROM provider_settings WHERE name = ?").run(canonicalProviderName(name));
    return this.#view();
  }

  /** Inserts or updates one provider row; returns its canonical name. */
  #upsertRow(input: ProviderInput, now: number): string {
    const old = cachedStatement(this.db, "SELECT * FROM provider_settings WHERE name = ?").get(
      canonicalProviderName(input.name),
    ) as ProviderRow | undefined;
    const row = mergeProviderRow(old, input, this.box);
    cachedStatement(
      this.db,
      `INSERT INTO provider_settings (name, base_url, protocol, api_key_enc, key_preview, updated_at)
         VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET base_url = excluded.base_url, protocol = excluded.protocol,
           api_key_enc = excluded.api_key_enc, key_preview = excluded.key_preview, updated_at = excluded.updated_at`,
    ).run(row.name, row.base_url, row.protocol, row.api_key_enc, row.key_preview, now);
    return row.name;
  }

  async getProviderKey(name: string): Promise<string | undefined> {
    const row = cachedStatement(this.db, "SELECT api_key_enc FROM provider_settings WHERE name = ?").get(
      canonicalProviderName(name),
    ) as Pick<ProviderRow, "api_key_enc"> | undefined;
    return row?.api_key_enc ? this.box.open(row.api_key_enc) : undefined;
  }

  async effectiveEnv(env: EnvMap): Promise<EnvMap> {
    return envWithProviders(env, this.#rows(), this.box);
  }

  async effectiveConfig(config: DimsumConfig): Promise<DimsumConfig> {
    return configWithSettings(config, this.#defaultModel(), this.#rows(), this.box);
  }
}
