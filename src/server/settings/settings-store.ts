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
import {
  many,
  one,
  type Plan,
  run,
  type SqlDatabase,
  sql,
  sqliteDatabase,
} from "../../store/sql-database.js";
import { webSearchConfigFromEnv } from "../../tools/web-search/config.js";
import { HttpToolSettings, type HttpToolSettingsRepository } from "./http-tool-settings.js";
import { McpServerSettings, type McpServerSettingsRepository } from "./mcp-server-settings.js";
import { RemoteAgentSettings, type RemoteAgentSettingsRepository } from "./remote-agent-settings.js";
import type { SecretBox } from "./secret-box.js";
import {
  lockSettings,
  putSetting,
  READ_SETTINGS,
  readSetting,
  SAVE_SETTINGS,
  SETTING_SQL,
} from "./setting-values.js";

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
 * The settings repository (`server_settings` and `provider_settings` tables): `Settings`, one logic
 * over SQLite (`SettingsStore`) and PostgreSQL (`PgSettingsStore`). Keys are sealed with the secret box before
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

const PROVIDER_COLUMNS = "name, base_url, protocol, api_key_enc, key_preview";

const SQL = {
  providers: sql(`SELECT ${PROVIDER_COLUMNS} FROM provider_settings ORDER BY name`),
  provider: sql(`SELECT ${PROVIDER_COLUMNS} FROM provider_settings WHERE name = ?`),
  providerKey: sql("SELECT api_key_enc FROM provider_settings WHERE name = ?"),
  upsertProvider: sql(
    `INSERT INTO provider_settings (name, base_url, protocol, api_key_enc, key_preview, updated_at)
       VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET base_url = excluded.base_url, protocol = excluded.protocol,
         api_key_enc = excluded.api_key_enc, key_preview = excluded.key_preview, updated_at = excluded.updated_at`,
  ),
  deleteProvider: sql("DELETE FROM provider_settings WHERE name = ?"),
  /** The default model and the provider rows in one statement (a model turn reads both). */
  modelAndProviders: sql({
    sqlite: `SELECT (SELECT value_json FROM server_settings WHERE key = 'defaultModel') AS value_json,
       (SELECT json_group_array(json_object('name', name, 'base_url', base_url, 'protocol', protocol,
          'api_key_enc', api_key_enc, 'key_preview', key_preview))
        FROM (SELECT ${PROVIDER_COLUMNS} FROM provider_settings ORDER BY name)) AS providers`,
    postgres: `SELECT (SELECT value_json FROM server_settings WHERE key = 'defaultModel') AS value_json,
       coalesce((SELECT json_agg(p ORDER BY p.name) FROM (SELECT ${PROVIDER_COLUMNS}
         FROM provider_settings) p), '[]') AS providers`,
  }),
} as const;

const DEFAULT_MODEL = "defaultModel";

/** In a plan: inserts or updates one provider row; returns its canonical name. */
function* upsertProvider(input: ProviderInput, now: number, box: SecretBox): Plan<string> {
  const old = yield* one<ProviderRow>(SQL.provider, [canonicalProviderName(input.name)]);
  const row = mergeProviderRow(old, input, box);
  yield* run(SQL.upsertProvider, [
    row.name,
    row.base_url,
    row.protocol,
    row.api_key_enc,
    row.key_preview,
    now,
  ]);
  return row.name;
}

/** The settings repository, one logic over SQLite or PostgreSQL. */
export class Settings implements SettingsRepository {
  readonly mcp: McpServerSettings;
  readonly remoteAgents: RemoteAgentSettings;
  readonly httpTools: HttpToolSettings;

  constructor(
    private readonly db: SqlDatabase,
    private readonly box: SecretBox,
  ) {
    this.mcp = new McpServerSettings(db, box);
    this.remoteAgents = new RemoteAgentSettings(db, box);
    this.httpTools = new HttpToolSettings(db, box);
  }

  #rows(): Promise<ProviderRow[]> {
    return this.db.many<ProviderRow>(READ_SETTINGS, SQL.providers);
  }

  /** The default model and the provider rows, read at once. */
  async #modelAndRows(): Promise<[defaultModel: string | undefined, providers: ProviderRow[]]> {
    const row = await this.db.one<{ value_json: string | null; providers: string | ProviderRow[] }>(
      READ_SETTINGS,
      SQL.modelAndProviders,
    );
    const json = row?.value_json;
    const providers = row?.providers ?? [];
    return [
      json ? (JSON.parse(json) as string) : undefined,
      typeof providers === "string" ? (JSON.parse(providers) as ProviderRow[]) : providers,
    ];
  }

  getDefaultModel(): Promise<string | undefined> {
    return readSetting<string>(this.db, DEFAULT_MODEL);
  }

  async view(): Promise<SettingsView> {
    return settingsViewOf(...(await this.#modelAndRows()));
  }

  async update(update: SettingsUpdate): Promise<SettingsView> {
    const now = Date.now();
    const box = this.box;
    await this.db.transaction(SAVE_SETTINGS, function* () {
      yield* lockSettings();
      if (update.defaultModel === null) yield* run(SETTING_SQL.delete, [DEFAULT_MODEL]);
      else if (update.defaultModel !== undefined) yield* putSetting(DEFAULT_MODEL, update.defaultModel, now);
      if (update.providers) {
        const existing = (yield* many<ProviderRow>(SQL.providers)).map((row) => row.name);
        const kept = new Set<string>();
        for (const input of update.providers) kept.add(yield* upsertProvider(input, now, box));
        for (const name of existing) if (!kept.has(name)) yield* run(SQL.deleteProvider, [name]);
      }
    });
    return this.view();
  }

  async saveProvider(input: ProviderInput): Promise<SettingsView> {
    const box = this.box;
    await this.db.transaction(SAVE_SETTINGS, function* () {
      yield* lockSettings();
      yield* upsertProvider(input, Date.now(), box);
    });
    return this.view();
  }

  async removeProvider(name: string): Promise<SettingsView> {
    await this.db.run(SAVE_SETTINGS, SQL.deleteProvider, [canonicalProviderName(name)]);
    return this.view();
  }

  async getProviderKey(name: string): Promise<string | undefined> {
    const row = await this.db.one<Pick<ProviderRow, "api_key_enc">>(READ_SETTINGS, SQL.providerKey, [
      canonicalProviderName(name),
    ]);
    return row?.api_key_enc ? this.box.open(row.api_key_enc) : undefined;
  }

  async effectiveEnv(env: EnvMap): Promise<EnvMap> {
    return envWithProviders(env, await this.#rows(), this.box);
  }

  async effectiveConfig(config: DimsumConfig): Promise<DimsumConfig> {
    const [defaultModel, rows] = await this.#modelAndRows();
    return configWithSettings(config, defaultModel, rows, this.box);
  }
}

/** The settings repository on SQLite. */
export class SettingsStore extends Settings {
  constructor(db: Database, box: SecretBox) {
    super(sqliteDatabase(db), box);
  }
}
