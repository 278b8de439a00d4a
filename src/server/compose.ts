/**
 * The team server's composition: it creates the long-lived services (memory, knowledge bases, the MCP
 * servers of mcp.json, HTTP tools, plugins and skills) and hands them to the team, which asks the
 * capability assembly (`src/capabilities`) for each run's tools and layers, exactly as the CLI does.
 */

import { randomUUID } from "node:crypto";
import { loadExtensions, resolveShellOffer, type ShellOffer, toolsLeftOut } from "../capabilities/index.js";
import type { DimsumConfig } from "../config/load-config.js";
import { resolveModel } from "../config/resolve-model.js";
import { DimsumError, toDimsumError } from "../errors.js";
import { KnowledgeService } from "../knowledge/index.js";
import { fallbackSettings } from "../llm/fallback-chain.js";
import { loadMcpConfig } from "../mcp/config.js";
import { McpServerPool } from "../mcp/server-pool.js";
import { createEmbedder } from "../memory/embedder.js";
import { resolveEmbeddingModel } from "../memory/embedding-config.js";
import { SqliteMemoryStore } from "../memory/sqlite-memory-store.js";
import type { MemoryStore } from "../memory/types.js";
import { BudgetStore } from "../store/budgets/budget-store.js";
import type { Database } from "../store/database.js";
import { sqliteDatabase } from "../store/sql-database.js";
import { createTeam, type TeamDeps } from "../team/team.js";
import type { Team } from "../team/types.js";
import type { BrowserSessions } from "../tools/browser/browser-sessions.js";
import type { ProcessManager } from "../tools/process/process-manager.js";
import { type UserRepository, UserStore } from "./auth/user-store.js";
import type { ServerLog } from "./context.js";
import { type HttpTools, loadHttpToolSettings } from "./http-tools.js";
import { personalMcpCredentials } from "./mcp-credentials.js";
import { loadRemoteAgents, type RemoteAgents } from "./remote-agents.js";
import type { McpCredentialRepository } from "./settings/mcp-credential-store.js";
import { openSecretBox } from "./settings/secret-box.js";
import type { SettingsRepository } from "./settings/settings-store.js";
import type { Cluster, ServerStorage } from "./storage/open-storage.js";

/** What the composition root hands to `buildTeam`. */
export interface TeamContext {
  /** The SQLite file the team lives in, unless `storage` is given. */
  db?: Database;
  /** The server's storage (see storage/open-storage.ts): the team's repositories on either backend. */
  storage?: ServerStorage;
  /** The other instances on the same database, when there are (live events, run leases). */
  cluster?: Cluster;
  config: DimsumConfig;
  settings: SettingsRepository;
  log: ServerLog;
  /** The accounts (display names and roles in runs); default: the `users` table of `db`. */
  users?: UserRepository;
  /** Shared with the memory routes; created when absent. */
  memory?: MemoryStore;
  /** Shared with the knowledge routes; created when absent. */
  knowledge?: KnowledgeService;
  /** The MCP servers (shared with `/api/mcp`); none when absent. */
  mcp?: McpServerPool;
  /** Where the project's skills/ and tools/ folders are looked up (default: the working directory). */
  cwd?: string;
  /** Whether agents get `execute_command` (default: probe the sandbox and decide, see shell-offer.ts). */
  shell?: ShellOffer;
  /** The remote A2A agents (shared with `/api/remote-agents`); default: a2a.json's and Settings'. */
  remoteAgents?: RemoteAgents;
  /** The HTTP tools saved in Settings (shared with `/api/http-tools`); default: the settings store's. */
  httpTools?: HttpTools;
  /** The chats' long-running processes (process_* tools and previews); none: not offered. */
  processes?: ProcessManager;
  /** The chats' browser pages (the browser tool); none: not offered. */
  browser?: BrowserSessions;
}

/**
 * The one place the team facade is built for the server. Agents' models resolve through the
 * settings at each run, so a key or default model saved in the UI applies without a restart.
 * `overrides` lets tests tune the team (retries, a fixed clock) while keeping this wiring.
 */
export async function buildTeam(context: TeamContext, overrides: Partial<TeamDeps> = {}): Promise<Team> {
  const { db, storage, config, settings, log } = context;
  const sqlite = storage?.sqlite ?? db;
  if (!context.users && !sqlite)
    throw new DimsumError("internal", "buildTeam needs `users` without a SQLite file.");
  const users = context.users ?? new UserStore(sqlite as Database);
  const usernames = new Map<string, string>();
  const stores = storage
    ? {
        teamStore: storage.team,
        meetings: storage.meetings,
        store: storage.sessions,
        ...(storage.personas ? { personas: storage.personas } : {}),
      }
    : { db: db as Database };
  const extensions = await loadExtensions(config, context.cwd ?? process.cwd());
  const httpTools = context.httpTools ?? loadHttpToolSettings(settings.httpTools, config);
  httpTools.setFileTools(extensions.http);
  const shell = context.shell ?? (await resolveShellOffer(config.tools.shell));
  const memory =
    context.memory ??
    (storage ? storage.memory({ warn: (message) => log.warn(message) }) : buildMemory(db as Database, log));
  const knowledge =
    context.knowledge ?? (storage ? knowledgeOf(storage, config) : buildKnowledge(db as Database, config));
  return createTeam({
    ...stores,
    // On a shared database runs are leased, with or without the relay of other instances.
    ...(storage?.kind === "postgres"
      ? {
          cluster: context.cluster
            ? { instanceId: context.cluster.team.instanceId, relay: context.cluster.team }
            : { instanceId: `instance-${randomUUID()}` },
        }
      : {}),
    home: config.home,
    budgets: storage?.budgets ?? new BudgetStore(sqliteDatabase(sqlite as Database)),
    config: await settings.effectiveConfig(config),
    capabilities: {
      extensions,
      memory,
      knowledge,
      ...(context.mcp ? { mcp: context.mcp } : {}),
      ...(context.processes ? { processes: context.processes } : {}),
      ...(context.browser ? { browser: context.browser } : {}),
      withoutBuiltins: toolsLeftOut(shell),
    },
    resolveAgentModel: async (agent) => {
      const effective = await settings.effectiveConfig(config);
      return withSettingsFix(() => resolveModel(effective, agent.model));
    },
    remoteAgents: remoteAgentsGetter(
      context.remoteAgents ??
        loadRemoteAgents(config, context.cwd ?? process.cwd(), log, settings.remoteAgents),
    ),
    // Read at the start of each run, so a tool added in Settings is offered from the next one.
    httpTools: () => httpTools.forRuns(),
    // One cooldown store for every run of this instance, or of all instances with Redis.
    fallback: fallbackSettings(config.modelFallback, context.cluster?.cooldowns),
    userName: async (id) => {
      // A username never changes (an account changes only its role and password): read once here.
      const known = usernames.get(id);
      if (known !== undefined) return known;
      const user = await users.get(id);
      if (user) usernames.set(id, user.username);
      return user?.username ?? id;
    },
    roleOf: async (id) => (await users.get(id))?.role,
    onError: (err) => log.error("team", err),
    ...overrides,
  });
}

/** Read at the start of each run, so an agent added in Settings is callable from the next one. */
function remoteAgentsGetter(remotes: RemoteAgents) {
  return () => remotes.forRuns();
}

/**
 * A model that cannot be resolved (none chosen, its key missing) is fixed in the web UI: the run's
 * error, shown in the chat, says where.
 */
function withSettingsFix<T>(resolve: () => T): T {
  try {
    return resolve();
  } catch (err) {
    const error = toDimsumError(err);
    if (error.code !== "config") throw err;
    const fix = error.message.startsWith("no API key")
      ? "add the key in Settings → Providers"
      : error.message.startsWith("no model chosen")
        ? "choose a default model in Settings → Providers"
        : "fix it in Settings → Providers";
    throw new DimsumError("config", `${error.message}: ${fix}`, {
      ...(error.hint ? { hint: error.hint } : {}),
      cause: err,
    });
  }
}

/** Long-term memory over the server's database (listing and deleting from the UI). */
export function buildMemory(db: Database, log: ServerLog): MemoryStore {
  return new SqliteMemoryStore(db, { warn: (message) => log.warn(message) });
}

/** The knowledge base over the server's database; hybrid when DIMSUM_EMBEDDING_MODEL is set. */
export function buildKnowledge(db: Database, config: DimsumConfig): KnowledgeService {
  const embedding = resolveEmbeddingModel(config);
  return KnowledgeService.sqlite(db, embedding ? { embedder: createEmbedder(embedding) } : {});
}

/** The knowledge base on the server's storage; hybrid when DIMSUM_EMBEDDING_MODEL is set. */
export function knowledgeOf(storage: ServerStorage, config: DimsumConfig): KnowledgeService {
  const embedding = resolveEmbeddingModel(config);
  return storage.knowledge(embedding ? { embedder: createEmbedder(embedding) } : {});
}

/**
 * The MCP servers of mcp.json (home and working directory) and those added in Settings → MCP servers
 * (an mcp.json entry wins over a saved one of the same name); `startAll()` connects them. Each
 * person's sign-ins are kept in `credentials` (sealed with the home's secret box); without it,
 * per-person servers cannot be signed in to.
 */
export async function buildMcp(
  config: DimsumConfig,
  cwd: string,
  log: ServerLog,
  settings?: SettingsRepository,
  credentials?: McpCredentialRepository,
): Promise<McpServerPool | undefined> {
  try {
    const files = loadMcpConfig({ home: config.home, cwd, env: config.env });
    const names = new Set(files.map((s) => s.name));
    const saved = ((await settings?.mcp.configs()) ?? []).filter((s) => !names.has(s.name));
    return new McpServerPool(
      [...files, ...saved],
      config.env,
      credentials
        ? { personalCredentials: mcpSignIns(credentials, config.home, config.server.secretKey) }
        : {},
    );
  } catch (err) {
    log.warn(`MCP servers are unavailable: ${toDimsumError(err).toLine()}`);
    return undefined;
  }
}

/**
 * Each person's MCP sign-ins over `records`, sealed with the secret box of `home` (or `secretKey`,
 * `DIMSUM_SECRET_KEY`), opened on first use.
 */
export function mcpSignIns(records: McpCredentialRepository, home: string, secretKey?: string) {
  let box: ReturnType<typeof openSecretBox> | undefined;
  return personalMcpCredentials(records, () => {
    box ??= openSecretBox(home, { key: secretKey });
    return box;
  });
}
