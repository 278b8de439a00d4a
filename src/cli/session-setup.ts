/**
 * The composition root for commands that work on stored sessions: configuration, the database, the
 * model and the tool registry, created once and closed together.
 */
import { userInfo } from "node:os";
import { join } from "node:path";
import { UsageCalibrator } from "../agent/context/index.js";
import type { LayerProvider } from "../agent/layered-context.js";
import type { ObserveRun } from "../agent/run-observer.js";
import { secretsFrom } from "../agent/trace-recorder.js";
import { type DimsumConfig, loadConfig } from "../config/load-config.js";
import { resolveModel } from "../config/resolve-model.js";
import { type FallbackSettings, fallbackSettings } from "../llm/fallback-chain.js";
import type { ModelSpec } from "../llm/types.js";
import type { McpClientHandlers } from "../mcp/client-handlers.js";
import type { McpManager } from "../mcp/manager.js";
import type { MemoryStore } from "../memory/index.js";
import type { Database } from "../store/database.js";
import { openDatabase } from "../store/database.js";
import { SqliteSessionStore } from "../store/sqlite-session-store.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import { startTelemetry } from "../telemetry/index.js";
import type { ToolRegistry } from "../tools/registry.js";
import { loadCapabilities, toolNames } from "./capabilities.js";
import type { CliIo } from "./command-io.js";
import { type SessionTools, sessionToolOptions } from "./session-tools.js";

export { toolNames } from "./capabilities.js";

export type { CliIo } from "./command-io.js";

export interface StoreHandle {
  config: DimsumConfig;
  store: SessionStore;
  dbPath: string;
  db: Database;
  close(): void;
}

/** Opens the database under DIMSUM_HOME. */
export function openStore(io: Pick<CliIo, "env" | "cwd">): StoreHandle {
  const config = loadConfig({ cwd: io.cwd, env: io.env });
  const dbPath = join(config.home, "dimsum.db");
  const db = openDatabase(dbPath);
  return { config, store: new SqliteSessionStore(db), db, dbPath, close: () => db.close() };
}

/** The user id for CLI sessions: `--user`, else DIMSUM_USER, else the OS account name. */
export function defaultUserId(config: Pick<DimsumConfig, "user">, explicit?: string): string {
  if (explicit) return explicit;
  if (config.user) return config.user;
  try {
    return userInfo().username || "local";
  } catch {
    return "local";
  }
}

export interface SessionSetup extends StoreHandle {
  ref: SessionRef;
  model: ModelSpec;
  tools: ToolRegistry;
  layers: LayerProvider;
  memory: MemoryStore;
  /** Tools, plugins or skills that failed to load: `path[:line]: message`. */
  problems: string[];
  mcpStatus: string[];
  /** The MCP servers of this session (prompts, resources), when any are configured. */
  mcp?: McpManager;
  /** The session's processes and browser page, for the tool context. */
  environment: SessionTools["environment"];
  /** Stops MCP servers, processes and the browser, then closes the database. */
  shutdown(): Promise<void>;
  calibrator: UsageCalibrator;
  secrets: string[];
  /** The OpenTelemetry reader of runs, when an OTLP endpoint is set (flushed by `shutdown`). */
  observe?: ObserveRun;
  /** The model chain's cooldowns (`modelFallback`), shared by every turn of this process. */
  fallback: FallbackSettings;
}

/** Everything a session command needs; the model is resolved (and checked) up front. */
export async function setUpSession(
  io: Pick<CliIo, "env" | "cwd"> & { stderr?: NodeJS.WritableStream },
  options: {
    user?: string;
    session?: string;
    model?: string;
    tools?: string;
    workspace?: string;
    mcpHandlers?: Omit<McpClientHandlers, "roots">;
    processes?: boolean;
    browser?: boolean;
  },
): Promise<SessionSetup> {
  const handle = openStore(io);
  try {
    const model = resolveModel(handle.config, options.model);
    const userId = defaultUserId(handle.config, options.user);
    const only = toolNames(options.tools);
    const capabilities = await loadCapabilities(handle.config, io.cwd, {
      db: handle.db,
      person: userId,
      ...(only ? { only } : {}),
      ...(options.workspace ? { workspace: options.workspace } : {}),
      ...(options.mcpHandlers ? { mcpHandlers: options.mcpHandlers } : {}),
      sessionTools: sessionToolOptions(options),
    });
    if (!capabilities.memory) throw new Error("the session database has no memory store");
    const telemetry = await startTelemetry(handle.config.telemetry, (message) =>
      io.stderr?.write(`dimsum: ${message}\n`),
    );
    return {
      ...handle,
      ref: { userId, sessionId: options.session ?? "default" },
      model,
      tools: capabilities.tools,
      layers: capabilities.layers,
      memory: capabilities.memory,
      problems: capabilities.problems,
      mcpStatus: capabilities.mcpStatus,
      ...(capabilities.mcp ? { mcp: capabilities.mcp } : {}),
      environment: capabilities.environment,
      ...(telemetry ? { observe: telemetry.observe } : {}),
      shutdown: async () => {
        // Spans still buffered are sent before the process exits.
        await telemetry?.shutdown();
        await capabilities.close();
        handle.close();
      },
      calibrator: new UsageCalibrator(),
      fallback: fallbackSettings(handle.config.modelFallback),
      secrets: secretsFrom(handle.config.env, [model.apiKey]),
    };
  } catch (err) {
    handle.close();
    throw err;
  }
}
