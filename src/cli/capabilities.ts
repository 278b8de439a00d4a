/**
 * The CLI's composition of the capability assembly: it creates the services a command needs (the
 * HTTP tools, plugins and skills of the tools folders; the MCP servers of mcp.json; memory and the
 * knowledge bases over the session database) and asks `src/capabilities` for the run's tools and
 * layers. Problems are reported, never fatal.
 */

import { pathToFileURL } from "node:url";
import type { Database } from "better-sqlite3";
import type { LayerProvider } from "../agent/layered-context.js";
import { CapabilityAssembly, loadExtensions, type McpToolSource } from "../capabilities/index.js";
import type { DimsumConfig } from "../config/load-config.js";
import type { KnowledgeService } from "../knowledge/knowledge-service.js";
import type { McpClientHandlers } from "../mcp/client-handlers.js";
import { loadMcpConfig } from "../mcp/config.js";
import type { McpManager } from "../mcp/manager.js";
import type { MemoryStore } from "../memory/types.js";
import type { Skill } from "../skills/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { openSessionTools, type SessionToolOptions, type SessionTools } from "./session-tools.js";

export interface Capabilities {
  tools: ToolRegistry;
  /** One line per configured MCP server: connected with N tools, or why it failed. */
  mcpStatus: string[];
  skills: Skill[];
  /** One line per problem: `path[:line]: message`. */
  problems: string[];
  layers: LayerProvider;
  /** The memory store, when the command works on stored sessions. */
  memory?: MemoryStore;
  /** The MCP servers of mcp.json (prompts, resources), when any are configured. */
  mcp?: McpManager;
  /** The session's processes and browser page (`--processes`, `--browser`), for the tool context. */
  environment: SessionTools["environment"];
  /** Stops MCP servers, processes and the browser this command started. */
  close(): Promise<void>;
}

export interface CapabilityOptions {
  /** `--tools a,b`: exactly these tools. */
  only?: string[];
  /** The session database: memory tools and layers for `person`, and `rag_query`. */
  db?: Database;
  /** Whose memory (the session's user). */
  person?: string;
  /** The workspace announced to MCP servers as the root (default: the working directory). */
  workspace?: string;
  /** Elicitation and sampling for MCP servers; absent: declined / refused (headless runs). */
  mcpHandlers?: Omit<McpClientHandlers, "roots">;
  /** Process and browser tools for this command. */
  sessionTools?: SessionToolOptions;
}

/** Builds the run's tool registry and context layers for a CLI command. */
export async function loadCapabilities(
  config: DimsumConfig,
  cwd: string,
  options: CapabilityOptions = {},
): Promise<Capabilities> {
  const extensions = await loadExtensions(config, cwd);
  const problems: string[] = [];
  const mcp = await startMcp(config, cwd, problems, {
    ...options.mcpHandlers,
    roots: [{ uri: pathToFileURL(options.workspace ?? cwd).href, name: "workspace" }],
  });
  const stored: { memory?: MemoryStore; knowledge?: KnowledgeService } = options.db
    ? await storedServices(options.db, config)
    : {};
  const session = await openSessionTools(config, options.sessionTools ?? {});
  const close = async () => {
    await session.close();
    await mcp?.close();
  };
  try {
    const assembly = new CapabilityAssembly({
      config,
      extensions,
      ...stored,
      ...(mcp ? { mcp: mcp.source } : {}),
      ...(session.processes ? { processes: session.processes } : {}),
      ...(session.browser ? { browser: session.browser } : {}),
    });
    const run = await assembly.forRun({
      ...(options.person !== undefined ? { person: options.person } : {}),
      ...(options.only ? { only: options.only } : {}),
    });
    return {
      tools: run.tools,
      layers: run.layers,
      skills: extensions.skills,
      problems: [...assembly.problems, ...problems],
      mcpStatus: mcp?.status ?? [],
      ...(stored.memory ? { memory: stored.memory } : {}),
      ...(mcp ? { mcp: mcp.manager } : {}),
      environment: session.environment,
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Memory and the knowledge bases over the session database; hybrid when an embedding model is set.
 * Loaded here, on first use, so a run without a session never loads them.
 */
async function storedServices(
  db: Database,
  config: DimsumConfig,
): Promise<{ memory: MemoryStore; knowledge: KnowledgeService }> {
  const [{ createEmbedder, resolveEmbeddingModel, SqliteMemoryStore }, { KnowledgeService }] =
    await Promise.all([import("../memory/index.js"), import("../knowledge/knowledge-service.js")]);
  const embeddingModel = resolveEmbeddingModel(config);
  const embedder = embeddingModel ? { embedder: createEmbedder(embeddingModel) } : {};
  return { memory: new SqliteMemoryStore(db, embedder), knowledge: KnowledgeService.sqlite(db, embedder) };
}

/** Connects the servers in mcp.json (in parallel); the SDK loads only if there are any. */
async function startMcp(
  config: DimsumConfig,
  cwd: string,
  problems: string[],
  handlers: McpClientHandlers,
): Promise<
  { source: McpToolSource; status: string[]; manager: McpManager; close: () => Promise<void> } | undefined
> {
  let servers: ReturnType<typeof loadMcpConfig>;
  try {
    servers = loadMcpConfig({ home: config.home, cwd, env: config.env });
  } catch (err) {
    problems.push((err as Error).message);
    return undefined;
  }
  if (servers.length === 0) return undefined;
  const [{ McpManager }, { describeMcpStatus }, { cliCredentialStore }] = await Promise.all([
    import("../mcp/manager.js"),
    import("./render/mcp-status.js"),
    import("./mcp-credentials.js"),
  ]);
  const manager = new McpManager({
    servers,
    env: config.env,
    auth: { credentials: cliCredentialStore(config.home) },
    handlers,
  });
  const statuses = await manager.start();
  return {
    source: {
      tools: () => manager.registry.list(),
      serverNames: () => manager.serverNames(),
      ready: async () => {},
    },
    status: statuses.map(describeMcpStatus),
    manager,
    close: () => manager.close(),
  };
}

/** Parses `--tools a,b` into names; undefined means all built-ins. */
export function toolNames(flag: string | undefined): string[] | undefined {
  return flag
    ? flag
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;
}
