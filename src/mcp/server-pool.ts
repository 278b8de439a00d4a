/**
 * The MCP servers of one long-lived process (the team server): started once, shared by every agent,
 * each connected and disconnected on its own (one manager per server, so each can stop alone); all
 * their tools land in one registry as `<server>_<tool>`. A crashed server reconnects on next use.
 *
 * Servers with `"oauth": {}` (the authorization-code grant) are per person: each member signs in
 * with their own account (`signIn`), their sign-in is kept in their own CredentialStore, their runs
 * get that server's tools (`personalTools`), and `signOut` revokes and deletes it. Server-side runs
 * have no one to ask: elicitation is declined and sampling refused, with the reason in the result.
 */

import { conflict, notFound } from "../errors.js";
import type { EnvMap } from "../shared/env-map.js";
import type { StoredVisible } from "../shared/visibility.js";
import { ToolRegistry } from "../tools/registry.js";
import type { Tool } from "../tools/types.js";
import { MCP_SETTINGS_SOURCE, type McpServerConfig } from "./config.js";
import { McpManager, type McpServerState, type McpServerStatus } from "./manager.js";
import type { CredentialStore } from "./oauth/credential-store.js";
import { covers, type OAuthAuthorizer } from "./oauth/provider.js";
import { revokeTokens } from "./oauth/revoke.js";
import { listMcpPrompts, type McpPromptCommand } from "./prompts.js";
import { textOf } from "./sampling.js";

export interface McpPoolOptions {
  /** Each person's sign-ins; without it, per-person servers cannot be used. */
  personalCredentials?: (person: string) => CredentialStore;
}

/** What the settings page shows of one server (never its env, headers or credentials). */
export interface McpServerView {
  name: string;
  transport: string;
  /** `disconnected`: configured and enabled, but not started (or stopped from the UI). */
  status: McpServerState | "disconnected";
  enabled: boolean;
  tools: number;
  error?: string;
  pid?: number;
  serverInfo?: { name: string; version: string };
  /** Each member signs in with their own account; `status` is the asking person's. */
  perPerson?: boolean;
  /** Added in Settings (removable there); servers of mcp.json are read-only in the UI. */
  removable?: boolean;
  /**
   * Per-person servers: the scopes the server asked for (an `insufficient_scope` answer) that the
   * person's sign-in does not grant yet, space-separated; connecting again asks for them.
   */
  needsScope?: string;
  /** Who added it (Settings servers); absent: everyone sees it. */
  ownerId?: string;
  /** Who sees and uses it besides owners and admins (absent: `everyone`). */
  visibility?: StoredVisible["visibility"];
  /** The people who see it besides its owner (visibility `people`). */
  allowedUsers?: string[];
}

/** The MCP operations the routes need. */
export interface McpControl {
  list(): McpServerView[];
  connect(name: string): Promise<McpServerView>;
  disconnect(name: string): Promise<McpServerView>;
  /** Adds a server and starts it at once (unless per-person); resolves once it connected or failed. */
  add(config: McpServerConfig): Promise<McpServerView>;
  /** Stops a server, closes every person's connection to it and forgets it. */
  remove(name: string): Promise<void>;
  /** Changes who sees a server (its owner stays); the server keeps running. */
  setAccess(name: string, visible: StoredVisible): Promise<McpServerView>;
  /** Per-person sign-ins (each member's own account). */
  isPerPerson(name: string): boolean;
  personalView(person: string, name: string): Promise<McpServerView>;
  signIn(person: string, name: string, authorizer: OAuthAuthorizer): Promise<McpServerView>;
  signOut(person: string, name: string): Promise<McpServerView>;
  /** The prompts of the shared servers and of `person`'s own sign-ins (the web composer's `/`). */
  prompts(person: string): Promise<McpPromptInfo[]>;
  /** A prompt's messages as one text, with its arguments filled in. */
  getPrompt(person: string, server: string, name: string, args: Record<string, string>): Promise<string>;
}

/** One prompt a server offers, as the composer lists it. */
export type McpPromptInfo = McpPromptCommand;

/** How long a person has to finish a sign-in in the browser. */
const SIGN_IN_TIMEOUT_MS = 300_000;
/** What a member does to (re-)authorise a per-person server on the team server. */
const SIGN_IN_HINT = "connect it again in Settings → MCP servers";

function viewOf(config: McpServerConfig, status: McpServerStatus | undefined): McpServerView {
  const view: McpServerView = {
    name: config.name,
    transport: status?.transport ?? config.transport,
    status: status?.state ?? (config.enabled ? "disconnected" : "disabled"),
    enabled: config.enabled,
    tools: status?.toolCount ?? 0,
  };
  const error = status?.lastError ?? config.problem;
  if (error !== undefined) view.error = error;
  if (status?.pid !== undefined) view.pid = status.pid;
  if (status?.serverInfo) view.serverInfo = status.serverInfo;
  if (config.source === MCP_SETTINGS_SOURCE) view.removable = true;
  if (config.ownerId) view.ownerId = config.ownerId;
  if (config.visibility && config.visibility !== "everyone") view.visibility = config.visibility;
  if (config.allowedUsers && config.allowedUsers.length > 0) view.allowedUsers = [...config.allowedUsers];
  return view;
}

/** The configured MCP servers, each started and stopped on request. */
export class McpServerPool implements McpControl {
  /** Tools of every connected server, as `<server>_<tool>`. */
  readonly registry = new ToolRegistry();
  readonly #configs: Map<string, McpServerConfig>;
  readonly #managers = new Map<string, McpManager>();
  readonly #env: EnvMap;
  readonly #options: McpPoolOptions;
  /** Per person, per server: that person's connection to a per-person server. */
  readonly #personal = new Map<string, Map<string, McpManager>>();
  #started: Promise<void> | undefined;

  constructor(servers: McpServerConfig[], env: EnvMap, options: McpPoolOptions = {}) {
    this.#configs = new Map(servers.map((s) => [s.name, s]));
    this.#env = env;
    this.#options = options;
  }

  /** True for servers each member signs in to (`"oauth": {}`, the authorization-code grant). */
  isPerPerson(name: string): boolean {
    const config = this.#configs.get(name);
    return (
      config !== undefined && config.transport !== "stdio" && config.oauth?.grant === "authorization_code"
    );
  }

  /** The tools of the per-person servers `person` has signed in to (connecting them on first use). */
  async personalTools(person: string): Promise<Tool[]> {
    const credentials = this.#options.personalCredentials?.(person);
    if (!credentials) return [];
    const tools: Tool[] = [];
    for (const config of this.#configs.values()) {
      if (!config.enabled || !this.isPerPerson(config.name)) continue;
      let manager = this.#personal.get(person)?.get(config.name);
      if (!(await credentials.load(config.name))?.tokens) {
        // Signed out, or the authorization server revoked the sign-in (its tokens were dropped).
        if (manager) await this.#dropPersonal(person, config.name);
        continue;
      }
      if (!manager) {
        manager = this.#personalManager(person, config, credentials);
        await manager.start([config.name]);
      }
      tools.push(...manager.registry.list());
    }
    return tools;
  }

  async prompts(person: string): Promise<McpPromptInfo[]> {
    await this.ready();
    await this.personalTools(person).catch(() => []);
    const out: McpPromptInfo[] = [];
    for (const manager of this.#managersFor(person)) out.push(...(await listMcpPrompts(manager)));
    return out;
  }

  async getPrompt(
    person: string,
    server: string,
    name: string,
    args: Record<string, string>,
  ): Promise<string> {
    this.#config(server);
    await this.personalTools(person).catch(() => []);
    const manager = this.#managersFor(person).find((m) => m.status(server)?.state === "connected");
    if (!manager)
      throw conflict(`MCP server "${server}" is not connected`, "connect it in Settings → MCP servers");
    const result = await manager.connection(server).getPrompt(name, args);
    return result.messages.map((m) => textOf(m.content)).join("\n\n");
  }

  /** The managers whose servers `person` may use: the shared ones and their own sign-ins. */
  #managersFor(person: string): McpManager[] {
    return [...this.#managers.values(), ...(this.#personal.get(person)?.values() ?? [])];
  }

  /** Runs `person`'s sign-in to a per-person server through `authorizer` (the browser redirect). */
  async signIn(person: string, name: string, authorizer: OAuthAuthorizer): Promise<McpServerView> {
    const config = this.#config(name);
    const credentials = this.#options.personalCredentials?.(person);
    if (!this.isPerPerson(name) || !credentials) {
      throw conflict(
        `MCP server "${name}" does not take personal sign-ins (give it "oauth": {} in mcp.json)`,
      );
    }
    await this.#personal.get(person)?.get(name)?.close();
    const stored = await credentials.load(name);
    const replaced = stored?.tokens ? structuredClone(stored) : undefined;
    if (stored?.tokens) {
      delete stored.tokens;
      await credentials.save(name, stored);
    }
    const manager = this.#personalManager(
      person,
      { ...config, connectTimeoutMs: SIGN_IN_TIMEOUT_MS },
      credentials,
      authorizer,
    );
    await manager.start([name]);
    const outcome = manager.status(name);
    // Later runs use the stored tokens without the authorizer.
    await manager.close();
    this.#personal.get(person)?.delete(name);
    if (outcome?.state !== "connected") {
      throw conflict(`signing in to MCP server "${name}" failed: ${outcome?.lastError ?? "unknown error"}`);
    }
    // The tokens of the sign-in this one replaces (e.g. a narrower scope) must not stay valid.
    if (replaced) await revokeTokens(replaced);
    await this.personalTools(person);
    return this.personalView(person, name);
  }

  /** Revokes (where the authorization server allows) and deletes `person`'s sign-in. */
  async signOut(person: string, name: string): Promise<McpServerView> {
    this.#config(name);
    const credentials = this.#options.personalCredentials?.(person);
    const manager = this.#personal.get(person)?.get(name);
    this.#personal.get(person)?.delete(name);
    await manager?.close();
    const stored = await credentials?.load(name);
    if (stored) await revokeTokens(stored);
    await credentials?.delete(name);
    return this.personalView(person, name);
  }

  /** One server as `person` sees it (their own connection and sign-in for per-person servers). */
  async personalView(person: string, name: string): Promise<McpServerView> {
    const config = this.#config(name);
    if (!this.isPerPerson(name)) return this.#view(config);
    const stored = await this.#options.personalCredentials?.(person).load(name);
    // Signed in before this process started: connect now, so the status is the real one.
    if (stored?.tokens && config.enabled && !this.#personal.get(person)?.has(name))
      await this.personalTools(person).catch(() => []);
    // The sign-in is gone (revoked at the authorization server): so is the connection.
    if (!stored?.tokens) await this.#dropPersonal(person, name);
    const manager = this.#personal.get(person)?.get(name);
    const view: McpServerView = { ...viewOf(config, manager?.status(name)), perPerson: true };
    if (stored?.tokens && stored.stepUpScope && !covers(stored.tokens.scope, stored.stepUpScope)) {
      const granted = new Set((stored.tokens.scope ?? "").split(" "));
      view.needsScope = stored.stepUpScope
        .split(" ")
        .filter((scope) => scope && !granted.has(scope))
        .join(" ");
    }
    return view;
  }

  async #dropPersonal(person: string, name: string): Promise<void> {
    const manager = this.#personal.get(person)?.get(name);
    this.#personal.get(person)?.delete(name);
    await manager?.close();
  }

  #personalManager(
    person: string,
    config: McpServerConfig,
    credentials: CredentialStore,
    authorizer?: OAuthAuthorizer,
  ): McpManager {
    const manager = new McpManager({
      servers: [config],
      env: this.#env,
      auth: { credentials, signInHint: () => SIGN_IN_HINT, ...(authorizer ? { authorizer } : {}) },
    });
    let mine = this.#personal.get(person);
    if (!mine) {
      mine = new Map();
      this.#personal.set(person, mine);
    }
    mine.set(config.name, manager);
    return manager;
  }

  /**
   * Connects every enabled server in the background (once); `ready()` resolves when each has
   * connected or failed. A failing server never blocks the others.
   */
  startAll(): Promise<void> {
    this.#started ??= Promise.all(
      [...this.#configs.values()]
        .filter((c) => c.enabled && !this.isPerPerson(c.name))
        .map((c) => this.connect(c.name).catch(() => undefined)),
    ).then(() => undefined);
    return this.#started;
  }

  /** Resolves once the first connection attempt of every server settled (at once when none started). */
  ready(): Promise<void> {
    return this.#started ?? Promise.resolve();
  }

  /** The tools of the connected servers now. */
  tools(): Tool[] {
    return this.registry.list();
  }

  /** Names of the configured servers, enabled or not. */
  serverNames(): string[] {
    return [...this.#configs.keys()];
  }

  list(): McpServerView[] {
    return [...this.#configs.values()].map((config) => this.#view(config));
  }

  /** Starts (or restarts a failed) server; resolves once it connected or failed. */
  async connect(name: string): Promise<McpServerView> {
    const config = this.#config(name);
    if (!config.enabled) throw conflict(`MCP server "${name}" is disabled in ${config.source}`);
    let manager = this.#managers.get(name);
    if (!manager) {
      manager = new McpManager({ servers: [config], env: this.#env, registry: this.registry });
      this.#managers.set(name, manager);
    }
    await manager.start([name]);
    return this.#view(config);
  }

  /** Stops a server and removes its tools. */
  async disconnect(name: string): Promise<McpServerView> {
    const config = this.#config(name);
    const manager = this.#managers.get(name);
    this.#managers.delete(name);
    await manager?.close();
    return this.#view(config);
  }

  async add(config: McpServerConfig): Promise<McpServerView> {
    if (this.#configs.has(config.name))
      throw conflict(`MCP server "${config.name}" already exists`, "choose another name");
    this.#configs.set(config.name, config);
    if (config.enabled && !this.isPerPerson(config.name))
      await this.connect(config.name).catch(() => undefined);
    return this.#view(config);
  }

  async setAccess(name: string, visible: StoredVisible): Promise<McpServerView> {
    const { ownerId: _o, visibility: _v, allowedUsers: _a, ...rest } = this.#config(name);
    const next: McpServerConfig = {
      ...rest,
      ...(visible.ownerId ? { ownerId: visible.ownerId } : {}),
      ...(visible.visibility ? { visibility: visible.visibility } : {}),
      ...(visible.allowedUsers ? { allowedUsers: [...visible.allowedUsers] } : {}),
    };
    this.#configs.set(name, next);
    return this.#view(next);
  }

  /** Who sees each configured server (for filtering runs' tools, prompts and routes). */
  access(name: string): StoredVisible | undefined {
    const config = this.#configs.get(name);
    if (!config) return undefined;
    return {
      ...(config.ownerId ? { ownerId: config.ownerId } : {}),
      ...(config.visibility ? { visibility: config.visibility } : {}),
      ...(config.allowedUsers ? { allowedUsers: config.allowedUsers } : {}),
    };
  }

  async remove(name: string): Promise<void> {
    this.#config(name);
    const managers: McpManager[] = [];
    const shared = this.#managers.get(name);
    if (shared) managers.push(shared);
    this.#managers.delete(name);
    for (const mine of this.#personal.values()) {
      const manager = mine.get(name);
      if (manager) managers.push(manager);
      mine.delete(name);
    }
    this.#configs.delete(name);
    await Promise.all(managers.map((m) => m.close()));
  }

  /** Stops every server (server shutdown). */
  async close(): Promise<void> {
    const managers = [...this.#managers.values()];
    this.#managers.clear();
    for (const mine of this.#personal.values()) managers.push(...mine.values());
    this.#personal.clear();
    await Promise.all(managers.map((m) => m.close()));
  }

  #config(name: string): McpServerConfig {
    const config = this.#configs.get(name);
    if (!config) throw notFound(`MCP server "${name}" (add it to mcp.json) not found`);
    return config;
  }

  #view(config: McpServerConfig): McpServerView {
    const view = viewOf(config, this.#managers.get(config.name)?.status(config.name));
    return this.isPerPerson(config.name) ? { ...view, perPerson: true } : view;
  }
}
