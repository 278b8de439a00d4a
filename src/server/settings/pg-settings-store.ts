/**
 * Settings on PostgreSQL: the default model, providers with sealed keys, the MCP servers and remote
 * A2A agents saved from the UI and each person's sealed MCP sign-ins. Writes that read first (a provider keeps its key
 * unless given one; the MCP list is one JSON value) run in a transaction under one advisory lock, so
 * two instances saving at once apply one after the other instead of losing a write.
 */
import type { RemoteAgentConfig } from "../../a2a/remote-config.js";
import type { DimsumConfig } from "../../config/load-config.js";
import { canonicalProviderName } from "../../config/providers.js";
import type { McpServerConfig } from "../../mcp/config.js";
import type { EnvMap } from "../../shared/env-map.js";
import type { PgDatabase, PgQueryable } from "../../store/postgres/pg-database.js";
import {
  HTTP_TOOLS_KEY,
  type HttpToolDefinitionInput,
  type HttpToolSettingsRepository,
  httpToolConfigOf,
  patchedHttpTools,
  type SavedHttpToolConfig,
  type SavedHttpToolView,
  type StoredHttpTool,
  savedHttpToolView,
  storedHttpToolOf,
} from "./http-tool-settings.js";
import { credentialKey, type McpCredentialRepository } from "./mcp-credential-store.js";
import {
  MCP_SERVERS_KEY,
  type McpServerInput,
  type McpServerSettingsRepository,
  type StoredServer,
  storedServerOf,
  toConfig,
} from "./mcp-server-settings.js";
import {
  patchedRemoteAgents,
  REMOTE_AGENTS_KEY,
  type RemoteAgentInput,
  type RemoteAgentPatch,
  type RemoteAgentSettingsRepository,
  remoteAgentConfigOf,
  type SavedRemoteAgentView,
  type StoredRemoteAgent,
  savedRemoteAgentView,
  storedRemoteAgentOf,
} from "./remote-agent-settings.js";
import type { SecretBox } from "./secret-box.js";
import {
  configWithSettings,
  envWithProviders,
  mergeProviderRow,
  type ProviderInput,
  type ProviderRow,
  type SettingsRepository,
  type SettingsUpdate,
  type SettingsView,
  settingsViewOf,
} from "./settings-store.js";

// Any fixed 64-bit number: held by every settings write (they are rare; losing one is not).
const SETTINGS_LOCK = 7_412_226_003;

const UPSERT_SETTING = `INSERT INTO server_settings (key, value_json, updated_at) VALUES ($1, $2, $3)
  ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at = excluded.updated_at`;

function lockSettings(tx: PgQueryable): Promise<number> {
  return tx.run("SELECT pg_advisory_xact_lock($1)", [SETTINGS_LOCK]);
}

async function providerRows(q: PgQueryable): Promise<ProviderRow[]> {
  return q.many<ProviderRow>(
    "SELECT name, base_url, protocol, api_key_enc, key_preview FROM provider_settings ORDER BY name",
  );
}

async function defaultModelOf(q: PgQueryable): Promise<string | undefined> {
  const row = await q.one<{ value_json: string }>(
    "SELECT value_json FROM server_settings WHERE key = 'defaultModel'",
  );
  return row ? (JSON.parse(row.value_json) as string) : undefined;
}

/** The default model and the provider rows in one round trip (a model turn reads both). */
async function defaultModelAndProviders(
  q: PgQueryable,
): Promise<[defaultModel: string | undefined, providers: ProviderRow[]]> {
  const row = await q.one<{ value_json: string | null; providers: ProviderRow[] }>(
    `SELECT (SELECT value_json FROM server_settings WHERE key = 'defaultModel') AS value_json,
       coalesce((SELECT json_agg(p ORDER BY p.name) FROM (SELECT name, base_url, protocol, api_key_enc, key_preview
         FROM provider_settings) p), '[]') AS providers`,
  );
  const json = row?.value_json;
  return [json ? (JSON.parse(json) as string) : undefined, row?.providers ?? []];
}

/** The MCP servers saved from the UI, on PostgreSQL. */
export class PgMcpServerSettings implements McpServerSettingsRepository {
  constructor(
    private readonly db: PgDatabase,
    private readonly box: SecretBox,
  ) {}

  async #stored(q: PgQueryable): Promise<StoredServer[]> {
    const row = await q.one<{ value_json: string }>("SELECT value_json FROM server_settings WHERE key = $1", [
      MCP_SERVERS_KEY,
    ]);
    return row ? (JSON.parse(row.value_json) as StoredServer[]) : [];
  }

  async configs(): Promise<McpServerConfig[]> {
    return (await this.#stored(this.db)).map((s) => toConfig(s, this.box));
  }

  async add(input: McpServerInput): Promise<McpServerConfig> {
    const stored = storedServerOf(input, this.box);
    await this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const servers = [...(await this.#stored(tx)).filter((s) => s.name !== input.name), stored];
      await tx.run(UPSERT_SETTING, [MCP_SERVERS_KEY, JSON.stringify(servers), Date.now()]);
    });
    return toConfig(stored, this.box);
  }

  async remove(name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const servers = await this.#stored(tx);
      const found = servers.some((s) => s.name === name);
      if (found) {
        await tx.run(UPSERT_SETTING, [
          MCP_SERVERS_KEY,
          JSON.stringify(servers.filter((s) => s.name !== name)),
          Date.now(),
        ]);
      }
      return found;
    });
  }
}

/** The remote A2A agents saved from the UI, on PostgreSQL. */
export class PgRemoteAgentSettings implements RemoteAgentSettingsRepository {
  constructor(
    private readonly db: PgDatabase,
    private readonly box: SecretBox,
  ) {}

  async #stored(q: PgQueryable): Promise<StoredRemoteAgent[]> {
    const row = await q.one<{ value_json: string }>("SELECT value_json FROM server_settings WHERE key = $1", [
      REMOTE_AGENTS_KEY,
    ]);
    return row ? (JSON.parse(row.value_json) as StoredRemoteAgent[]) : [];
  }

  async list(): Promise<SavedRemoteAgentView[]> {
    return (await this.#stored(this.db)).map(savedRemoteAgentView);
  }

  async configs(): Promise<RemoteAgentConfig[]> {
    return (await this.#stored(this.db))
      .filter((a) => a.enabled)
      .map((a) => remoteAgentConfigOf(a, this.box));
  }

  async add(input: RemoteAgentInput): Promise<boolean> {
    const stored = storedRemoteAgentOf(input, this.box);
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const agents = await this.#stored(tx);
      if (agents.some((a) => a.name === input.name)) return false;
      await tx.run(UPSERT_SETTING, [REMOTE_AGENTS_KEY, JSON.stringify([...agents, stored]), Date.now()]);
      return true;
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const agents = await this.#stored(tx);
      const found = agents.some((a) => a.name === name);
      if (found) {
        await tx.run(UPSERT_SETTING, [
          REMOTE_AGENTS_KEY,
          JSON.stringify(agents.filter((a) => a.name !== name)),
          Date.now(),
        ]);
      }
      return found;
    });
  }

  async update(name: string, patch: RemoteAgentPatch): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const next = patchedRemoteAgents(await this.#stored(tx), name, patch, this.box);
      if (next) await tx.run(UPSERT_SETTING, [REMOTE_AGENTS_KEY, JSON.stringify(next), Date.now()]);
      return next !== undefined;
    });
  }
}

/** The HTTP tools saved from the UI, on PostgreSQL. */
export class PgHttpToolSettings implements HttpToolSettingsRepository {
  constructor(
    private readonly db: PgDatabase,
    private readonly box: SecretBox,
  ) {}

  async #stored(q: PgQueryable): Promise<StoredHttpTool[]> {
    const row = await q.one<{ value_json: string }>("SELECT value_json FROM server_settings WHERE key = $1", [
      HTTP_TOOLS_KEY,
    ]);
    return row ? (JSON.parse(row.value_json) as StoredHttpTool[]) : [];
  }

  async list(): Promise<SavedHttpToolView[]> {
    return (await this.#stored(this.db)).map(savedHttpToolView);
  }

  async configs(): Promise<SavedHttpToolConfig[]> {
    return (await this.#stored(this.db)).filter((t) => t.enabled).map((t) => httpToolConfigOf(t, this.box));
  }

  async add(definition: HttpToolDefinitionInput, enabled: boolean): Promise<boolean> {
    const stored = storedHttpToolOf(definition, enabled, this.box);
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const tools = await this.#stored(tx);
      if (tools.some((t) => t.definition.name === definition.name)) return false;
      await tx.run(UPSERT_SETTING, [HTTP_TOOLS_KEY, JSON.stringify([...tools, stored]), Date.now()]);
      return true;
    });
  }

  async update(
    name: string,
    definition: HttpToolDefinitionInput | undefined,
    enabled?: boolean,
  ): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const next = patchedHttpTools(await this.#stored(tx), name, definition, enabled, this.box);
      if (next) await tx.run(UPSERT_SETTING, [HTTP_TOOLS_KEY, JSON.stringify(next), Date.now()]);
      return next !== undefined;
    });
  }

  async remove(name: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockSettings(tx);
      const tools = await this.#stored(tx);
      const found = tools.some((t) => t.definition.name === name);
      if (found) {
        const rest = tools.filter((t) => t.definition.name !== name);
        await tx.run(UPSERT_SETTING, [HTTP_TOOLS_KEY, JSON.stringify(rest), Date.now()]);
      }
      return found;
    });
  }
}

/** The settings repository on PostgreSQL. */
export class PgSettingsStore implements SettingsRepository {
  readonly mcp: PgMcpServerSettings;
  readonly remoteAgents: PgRemoteAgentSettings;
  readonly httpTools: PgHttpToolSettings;

  constructor(
    private readonly db: PgDatabase,
    private readonly box: SecretBox,
  ) {
    this.mcp = new PgMcpServerSettings(db, box);
    this.remoteAgents = new PgRemoteAgentSettings(db, box);
    this.httpTools = new PgHttpToolSettings(db, box);
  }

  async getDefaultModel(): Promise<string | undefined> {
    return defaultModelOf(this.db);
  }

  async view(): Promise<SettingsView> {
    const [defaultModel, rows] = await defaultModelAndProviders(this.db);
    return settingsViewOf(defaultModel, rows);
  }

  async update(update: SettingsUpdate): Promise<SettingsView> {
    const now = Date.now();
    await this.db.transaction(async (tx) => {
      await lockSettings(tx);
      if (update.defaultModel === null)
        await tx.run("DELETE FROM server_settings WHERE key = 'defaultModel'");
      else if (update.defaultModel !== undefined) {
        await tx.run(UPSERT_SETTING, ["defaultModel", JSON.stringify(update.defaultModel), now]);
      }
      if (update.providers) {
        const existing = new Set((await providerRows(tx)).map((row) => row.name));
        const kept = new Set<string>();
        for (const input of update.providers) kept.add(await this.#upsertRow(tx, input, now));
        for (const name of existing) {
          if (!kept.has(name)) await tx.run("DELETE FROM provider_settings WHERE name = $1", [name]);
        }
      }
    });
    return this.view();
  }

  async saveProvider(input: ProviderInput): Promise<SettingsView> {
    await this.db.transaction(async (tx) => {
      await lockSettings(tx);
      await this.#upsertRow(tx, input, Date.now());
    });
    return this.view();
  }

  async removeProvider(name: string): Promise<SettingsView> {
    await this.db.run("DELETE FROM provider_settings WHERE name = $1", [canonicalProviderName(name)]);
    return this.view();
  }

  /** Inserts or updates one provider row; returns its canonical name. */
  async #upsertRow(tx: PgQueryable, input: ProviderInput, now: number): Promise<string> {
    const old = await tx.one<ProviderRow>(
      "SELECT name, base_url, protocol, api_key_enc, key_preview FROM provider_settings WHERE name = $1",
      [canonicalProviderName(input.name)],
    );
    const row = mergeProviderRow(old, input, this.box);
    await tx.run(
      `INSERT INTO provider_settings (name, base_url, protocol, api_key_enc, key_preview, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (name) DO UPDATE SET base_url = excluded.base_url, protocol = excluded.protocol,
           api_key_enc = excluded.api_key_enc, key_preview = excluded.key_preview, updated_at = excluded.updated_at`,
      [row.name, row.base_url, row.protocol, row.api_key_enc, row.key_preview, now],
    );
    return row.name;
  }

  async getProviderKey(name: string): Promise<string | undefined> {
    const row = await this.db.one<Pick<ProviderRow, "api_key_enc">>(
      "SELECT api_key_enc FROM provider_settings WHERE name = $1",
      [canonicalProviderName(name)],
    );
    return row?.api_key_enc ? this.box.open(row.api_key_enc) : undefined;
  }

  async effectiveEnv(env: EnvMap): Promise<EnvMap> {
    return envWithProviders(env, await providerRows(this.db), this.box);
  }

  async effectiveConfig(config: DimsumConfig): Promise<DimsumConfig> {
    const [defaultModel, rows] = await defaultModelAndProviders(this.db);
    return configWithSettings(config, defaultModel, rows, this.box);
  }
}

/** Each person's sealed MCP sign-ins on PostgreSQL. */
export class PgMcpCredentials implements McpCredentialRepository {
  constructor(private readonly db: PgDatabase) {}

  async read(person: string, server: string): Promise<string | undefined> {
    const row = await this.db.one<{ value_json: string }>(
      "SELECT value_json FROM server_settings WHERE key = $1",
      [credentialKey(person, server)],
    );
    return row ? (JSON.parse(row.value_json) as string) : undefined;
  }

  async write(person: string, server: string, sealed: string): Promise<void> {
    await this.db.run(UPSERT_SETTING, [credentialKey(person, server), JSON.stringify(sealed), Date.now()]);
  }

  async remove(person: string, server: string): Promise<void> {
    await this.db.run("DELETE FROM server_settings WHERE key = $1", [credentialKey(person, server)]);
  }
}

/** The settings repository over a PostgreSQL database; `box` seals provider keys and MCP secrets. */
export function createPostgresSettingsStore(db: PgDatabase, box: SecretBox): PgSettingsStore {
  return new PgSettingsStore(db, box);
}

/** Each person's MCP sign-ins over a PostgreSQL database (sealed above it, see `personalMcpCredentials`). */
export function createPostgresMcpCredentials(db: PgDatabase): PgMcpCredentials {
  return new PgMcpCredentials(db);
}
