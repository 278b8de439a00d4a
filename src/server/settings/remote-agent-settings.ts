/**
 * Remote A2A agents added in Settings → Remote agents, kept in the `server_settings` table (key
 * `remoteAgents`, one JSON list) like the MCP servers saved there. A bearer token is sealed with the
 * secret box before it reaches the row and is opened only for the agent's requests.
 */
import type { RemoteAgentConfig } from "../../a2a/remote-config.js";
import type { SqlDatabase } from "../../store/sql-database.js";
import type { SecretBox } from "./secret-box.js";
import { SettingList } from "./setting-values.js";

/** Where agents saved in Settings say they come from (in views and error hints). */
export const REMOTE_AGENT_SETTINGS_SOURCE = "Settings → Remote agents";

/** The `server_settings` key the list is kept under. */
export const REMOTE_AGENTS_KEY = "remoteAgents";

/** A remote agent as the Settings form gives it. */
export interface RemoteAgentInput {
  name: string;
  url: string;
  /** Sent as `Authorization: Bearer …`; sealed at rest, never shown again. */
  token?: string;
  description?: string;
  enabled?: boolean;
}

/** One saved agent as stored: the token sealed. */
export interface StoredRemoteAgent {
  name: string;
  url: string;
  tokenSealed?: string;
  description?: string;
  enabled: boolean;
}

/** What may be shown of a saved agent: whether it has a token, never the token. */
export interface SavedRemoteAgentView {
  name: string;
  url: string;
  description?: string;
  hasToken: boolean;
  enabled: boolean;
}

/**
 * The remote agents saved from the UI (`RemoteAgentSettings`, over SQLite or PostgreSQL). Adding and removing are read-modify-write of one list, done atomically.
 */
export interface RemoteAgentSettingsRepository {
  /** Every saved agent, without its token. */
  list(): Promise<SavedRemoteAgentView[]>;
  /** The enabled agents as runs call them (token opened into the Authorization header). */
  configs(): Promise<RemoteAgentConfig[]>;
  /** Saves a new agent; false (and nothing saved) when one of that name is saved already. */
  add(input: RemoteAgentInput): Promise<boolean>;
  /** Forgets a saved agent; false when there was none of that name. */
  remove(name: string): Promise<boolean>;
  /** Changes a saved agent; false when there is none of that name. */
  update(name: string, patch: RemoteAgentPatch): Promise<boolean>;
}

/** A change to a saved agent: `null` removes the token or the description; omitted keeps it. */
export interface RemoteAgentPatch {
  url?: string;
  token?: string | null;
  description?: string | null;
  enabled?: boolean;
}

/** Scheme, host and port of a URL: where a token would be sent (an unparsable URL is its own origin). */
function originOf(url: string): string {
  return URL.canParse(url) ? new URL(url).origin : url;
}

/**
 * The list with `name` changed by `patch` (a new token sealed); undefined when it has no such agent.
 * A URL on another origin (scheme, host or port) drops the stored token unless the same patch gives
 * one: the token was given for the old host, and whoever may change the URL must not be able to send
 * it elsewhere.
 */
export function patchedRemoteAgents(
  agents: readonly StoredRemoteAgent[],
  name: string,
  patch: RemoteAgentPatch,
  box: SecretBox,
): StoredRemoteAgent[] | undefined {
  if (!agents.some((a) => a.name === name)) return undefined;
  return agents.map((agent) => {
    if (agent.name !== name) return agent;
    const next: StoredRemoteAgent = { ...agent, ...(patch.url !== undefined ? { url: patch.url } : {}) };
    if (patch.enabled !== undefined) next.enabled = patch.enabled;
    const movedHost = patch.url !== undefined && originOf(patch.url) !== originOf(agent.url);
    if (patch.token === null || (movedHost && !patch.token)) delete next.tokenSealed;
    else if (patch.token) next.tokenSealed = box.seal(patch.token);
    if (patch.description === null) delete next.description;
    else if (patch.description) next.description = patch.description;
    return next;
  });
}

/** What is stored for an input: the token sealed. */
export function storedRemoteAgentOf(input: RemoteAgentInput, box: SecretBox): StoredRemoteAgent {
  return {
    name: input.name,
    url: input.url,
    ...(input.token ? { tokenSealed: box.seal(input.token) } : {}),
    ...(input.description ? { description: input.description } : {}),
    enabled: input.enabled ?? true,
  };
}

/** The view of a stored agent (no token). */
export function savedRemoteAgentView(stored: StoredRemoteAgent): SavedRemoteAgentView {
  return {
    name: stored.name,
    url: stored.url,
    ...(stored.description ? { description: stored.description } : {}),
    hasToken: stored.tokenSealed !== undefined,
    enabled: stored.enabled,
  };
}

/**
 * The client's config of a stored agent. A token that no longer opens (the secret key was replaced)
 * is left out: the agent then refuses the call, and the error points at Settings.
 */
export function remoteAgentConfigOf(stored: StoredRemoteAgent, box: SecretBox): RemoteAgentConfig {
  const token = stored.tokenSealed ? box.open(stored.tokenSealed) : undefined;
  return {
    name: stored.name,
    url: stored.url,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(stored.description ? { description: stored.description } : {}),
    source: REMOTE_AGENT_SETTINGS_SOURCE,
  };
}

/** The remote agents saved from the UI. */
export class RemoteAgentSettings
  extends SettingList<StoredRemoteAgent>
  implements RemoteAgentSettingsRepository
{
  constructor(db: SqlDatabase, box: SecretBox) {
    super(db, box, REMOTE_AGENTS_KEY);
  }

  async list(): Promise<SavedRemoteAgentView[]> {
    return (await this.saved()).map(savedRemoteAgentView);
  }

  async configs(): Promise<RemoteAgentConfig[]> {
    return (await this.saved()).filter((a) => a.enabled).map((a) => remoteAgentConfigOf(a, this.box));
  }

  async add(input: RemoteAgentInput): Promise<boolean> {
    const stored = storedRemoteAgentOf(input, this.box);
    return this.modify((agents) =>
      agents.some((a) => a.name === input.name)
        ? { result: false }
        : { result: true, next: [...agents, stored] },
    );
  }

  async remove(name: string): Promise<boolean> {
    return this.modify((agents) => {
      const found = agents.some((a) => a.name === name);
      return found ? { result: true, next: agents.filter((a) => a.name !== name) } : { result: false };
    });
  }

  async update(name: string, patch: RemoteAgentPatch): Promise<boolean> {
    return this.modify((agents) => {
      const next = patchedRemoteAgents(agents, name, patch, this.box);
      return { result: next !== undefined, ...(next ? { next } : {}) };
    });
  }
}
