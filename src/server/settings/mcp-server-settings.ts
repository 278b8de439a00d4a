/**
 * MCP servers added in Settings → MCP servers, kept in the `server_settings` table (key
 * `mcpServers`) so they survive a restart. A stdio server's env (often tokens) is encrypted at rest
 * and never leaves the server; the rest is stored as given.
 */
import {
  MCP_SETTINGS_SOURCE,
  type McpOAuthAuthorizationCode,
  type McpServerConfig,
} from "../../mcp/config.js";
import type { StoredVisible } from "../../shared/visibility.js";
import type { SqlDatabase } from "../../store/sql-database.js";
import type { SecretBox } from "./secret-box.js";
import { SettingList } from "./setting-values.js";

/** A stdio server: started as a child process of the team server (owners and admins only). */
export interface McpStdioInput extends StoredVisible {
  name: string;
  transport: "stdio";
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** A remote server reached over Streamable HTTP (falling back to SSE). */
export interface McpRemoteInput extends StoredVisible {
  name: string;
  url: string;
  /** `{}`: each member signs in with their own account (authorization-code grant). */
  oauth?: { clientId?: string; scope?: string };
}

export type McpServerInput = McpStdioInput | McpRemoteInput;

export interface StoredServer extends StoredVisible {
  name: string;
  command?: string;
  args?: string[];
  /** The sealed JSON of the env map. */
  envSealed?: string;
  url?: string;
  oauth?: { clientId?: string; scope?: string };
}

/** The `server_settings` key the list is kept under. */
export const MCP_SERVERS_KEY = "mcpServers";

/**
 * The MCP servers saved from the UI (`McpServerSettings`, over SQLite or PostgreSQL). Adding and
 * removing are read-modify-write of one list, done atomically.
 */
export interface McpServerSettingsRepository {
  /** Every saved server as the MCP pool takes it (env decrypted). */
  configs(): Promise<McpServerConfig[]>;
  /** Saves a new server (replacing one of the same name) and returns its config. */
  add(input: McpServerInput): Promise<McpServerConfig>;
  /** Changes who sees a saved server; the new config, or undefined when there was none of that name. */
  setVisibility(name: string, visible: StoredVisible): Promise<McpServerConfig | undefined>;
  /** Forgets a saved server; false when there was none of that name. */
  remove(name: string): Promise<boolean>;
}

/** What is stored for an input: a stdio server's env sealed, the rest as given. */
export function storedServerOf(input: McpServerInput, box: SecretBox): StoredServer {
  const server: StoredServer =
    "url" in input
      ? { name: input.name, url: input.url, ...(input.oauth ? { oauth: input.oauth } : {}) }
      : {
          name: input.name,
          command: input.command,
          args: input.args,
          ...(input.env && Object.keys(input.env).length > 0
            ? { envSealed: box.seal(JSON.stringify(input.env)) }
            : {}),
        };
  return { ...server, ...visibleFields(input) };
}

/** The visibility fields worth storing (defaults left out: no owner, `everyone`, nobody listed). */
export function visibleFields(visible: StoredVisible): StoredVisible {
  const out: StoredVisible = {};
  if (visible.ownerId) out.ownerId = visible.ownerId;
  if (visible.visibility && visible.visibility !== "everyone") out.visibility = visible.visibility;
  if (visible.allowedUsers && visible.allowedUsers.length > 0) out.allowedUsers = [...visible.allowedUsers];
  return out;
}

/** The servers saved from the UI. */
export class McpServerSettings extends SettingList<StoredServer> implements McpServerSettingsRepository {
  constructor(db: SqlDatabase, box: SecretBox) {
    super(db, box, MCP_SERVERS_KEY);
  }

  async configs(): Promise<McpServerConfig[]> {
    return (await this.saved()).map((s) => toConfig(s, this.box));
  }

  async add(input: McpServerInput): Promise<McpServerConfig> {
    const stored = storedServerOf(input, this.box);
    await this.modify((servers) => ({
      result: undefined,
      next: [...servers.filter((s) => s.name !== input.name), stored],
    }));
    return toConfig(stored, this.box);
  }

  async setVisibility(name: string, visible: StoredVisible): Promise<McpServerConfig | undefined> {
    const changed = await this.modify((servers) => {
      const found = servers.find((s) => s.name === name);
      if (!found) return { result: undefined };
      const { ownerId: _o, visibility: _v, allowedUsers: _a, ...rest } = found;
      const next: StoredServer = { ...rest, ...visibleFields({ ...visible, ownerId: found.ownerId }) };
      return { result: next, next: servers.map((s) => (s.name === name ? next : s)) };
    });
    return changed ? toConfig(changed, this.box) : undefined;
  }

  async remove(name: string): Promise<boolean> {
    return this.modify((servers) => {
      const found = servers.some((s) => s.name === name);
      return found ? { result: true, next: servers.filter((s) => s.name !== name) } : { result: false };
    });
  }
}

/** The pool's config of a stored server (env opened). */
export function toConfig(stored: StoredServer, box: SecretBox): McpServerConfig {
  const common = {
    name: stored.name,
    enabled: true,
    include: [],
    exclude: [],
    source: MCP_SETTINGS_SOURCE,
    ...visibleFields(stored),
  };
  if (stored.url !== undefined) {
    const oauth: McpOAuthAuthorizationCode | undefined = stored.oauth
      ? { grant: "authorization_code", ...stored.oauth }
      : undefined;
    return { ...common, transport: "http", url: stored.url, headers: {}, ...(oauth ? { oauth } : {}) };
  }
  const env = stored.envSealed
    ? (JSON.parse(box.open(stored.envSealed) ?? "{}") as Record<string, string>)
    : {};
  return { ...common, transport: "stdio", command: stored.command ?? "", args: stored.args ?? [], env };
}
