/**
 * The server the browser tests drive: `dimsum serve`'s wiring (real team, memory, knowledge bases,
 * SQLite in a temp folder) serving the built web UI from `web/dist`, its agents talking to the
 * scripted fake LLM.
 */

import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../src/config/load-config.js";
import { ConnectorManager } from "../../src/connectors/connector-manager.js";
import { createSqliteConnectorStore } from "../../src/connectors/store/connector-store.js";
import { type McpControl, McpServerPool } from "../../src/mcp/server-pool.js";
import { createSqliteScheduleStore } from "../../src/schedules/schedule-store.js";
import { createScheduling, type Scheduling } from "../../src/schedules/setup.js";
import { createServer, type ServerDeps } from "../../src/server/app.js";
import { UserStore } from "../../src/server/auth/user-store.js";
import { buildKnowledge, buildMemory, buildTeam } from "../../src/server/compose.js";
import type { ServerLog } from "../../src/server/context.js";
import { loadHttpToolSettings } from "../../src/server/http-tools.js";
import { mountProcessRoutes } from "../../src/server/previews/process-routes.js";
import { loadRemoteAgents } from "../../src/server/remote-agents.js";
import {
  connectorUsersFrom,
  mountConnectorInbound,
  mountConnectorRoutes,
} from "../../src/server/routes/connectors.js";
import { type KnowledgeRoutesOptions, mountKnowledgeRoutes } from "../../src/server/routes/knowledge.js";
import { mountScheduleRoutes } from "../../src/server/routes/schedules.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { TeamDeps } from "../../src/team/team.js";
import { ProcessManager } from "../../src/tools/process/process-manager.js";
import { DEFAULT_PROCESS_SETTINGS } from "../../src/tools/process/types.js";

/** The built single-page app the server serves. */
export const WEB_DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));

export interface E2eServer {
  /** e.g. `http://127.0.0.1:PORT` */
  url: string;
  /** Warnings and errors the server logged, for failure reports. */
  logLines: string[];
  /** What the server said at info level (e.g. the owner's one-time password). */
  infoLines: string[];
  /** The owner account created at start (`ensureOwner`), with its one-time password. */
  owner: { username: string; generatedPassword: string | undefined } | undefined;
  /**
   * Stops the HTTP and WebSocket server (every socket is cut) and resolves `start`, which serves
   * again on the same port over the same database and team, as a restarted `dimsum serve` would.
   */
  stop(): Promise<{ start: () => Promise<void> }>;
  close(): Promise<void>;
}

export interface E2eServerOptions {
  /** Upload limits of `/api/kb` (default: `dimsum serve`'s, 20 MB and 100 files per upload). */
  knowledge?: KnowledgeRoutesOptions;
  /**
   * The model environment instead of the default (`openai:gpt-test` with a key, at the fake LLM);
   * `DIMSUM_HOME` is always set. `{}` starts a server with no model at all.
   */
  env?: Record<string, string>;
  /** Like `env`, from the fake LLM's URL (for base URLs of several providers). */
  envFor?: (llmUrl: string) => Record<string, string>;
  /** The default environment's model instead of `openai:gpt-test` (e.g. one with catalogue prices). */
  model?: string;
  /** Keep the queue modes' defaults (groups `collect`); default: groups `followup`, a run per message. */
  queueDefaults?: boolean;
  /** Create the owner at start with a printed one-time password, as `dimsum serve` does (default: no owner). */
  ensureOwner?: boolean;
  /** The MCP servers `/api/mcp` controls, made over the server's home folder (default: none). */
  mcp?: (home: string, db: Database) => McpControl;
  /** Serve `/api/connectors` and the inbound endpoint with a connector manager (default: not). */
  connectors?: boolean;
  /** Overrides of the team's deps (e.g. remote A2A agents). */
  team?: Partial<TeamDeps>;
  /** The content of an a2a.json written into the home before the server starts (default: none). */
  a2a?: unknown;
  /** The content of a config.json written into the home before the server starts (default: none). */
  configFile?: unknown;
  /** Serve `/api/schedules` with a running scheduler, as `dimsum serve` does (default: no schedules). */
  schedules?: boolean;
}

const generous = { capacity: 10_000, perMinute: 10_000 };

/** Fails with the fix when the web UI has not been built (npm test builds it first). */
export function assertWebBuilt(): void {
  if (!existsSync(join(WEB_DIST, "index.html"))) {
    throw new Error(
      `the web UI is not built (${join(WEB_DIST, "index.html")} is missing); run \`npm run build\` first (\`npm test\` does)`,
    );
  }
}

/** Starts the server on 127.0.0.1:0, by default with no owner yet (the test sets one up through the UI). */
export async function startE2eServer(llmUrl: string, options: E2eServerOptions = {}): Promise<E2eServer> {
  assertWebBuilt();
  const home = mkdtempSync(join(tmpdir(), "dimsum-e2e-"));
  const db = openDatabase(join(home, "dimsum.db"));
  const logLines: string[] = [];
  const infoLines: string[] = [];
  const log: ServerLog = {
    info: (m) => infoLines.push(m),
    warn: (m) => logLines.push(`warn: ${m}`),
    error: (m, err) =>
      logLines.push(`error: ${m} ${err instanceof Error ? (err.stack ?? err.message) : String(err ?? "")}`),
  };
  if (options.a2a !== undefined) writeFileSync(join(home, "a2a.json"), JSON.stringify(options.a2a));
  if (options.configFile !== undefined)
    writeFileSync(join(home, "config.json"), JSON.stringify(options.configFile));
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      ...(options.envFor?.(llmUrl) ??
        options.env ?? {
          DIMSUM_MODEL: options.model ?? "openai:gpt-test",
          OPENAI_API_KEY: "sk-test-key-1234",
          OPENAI_BASE_URL: `${llmUrl}/v1`,
        }),
    },
  });
  // Groups answer each message with a run of its own here (the default `collect` waits 1.5 s for a
  // burst); approvals.test.ts and test/team/approvals-steering.test.ts cover the queue modes.
  if (!options.queueDefaults) config.queue = { ...config.queue, group: "followup" };
  const settings = new SettingsStore(db, openSecretBox(home));
  const mcp = options.mcp?.(home, db);
  // A pool (as `dimsum serve` builds it) also gives the team's agents its tools.
  const pool = mcp instanceof McpServerPool ? mcp : undefined;
  // a2a.json of the home and those added in Settings, as `dimsum serve` has them.
  const remoteAgents = loadRemoteAgents(config, home, log, settings.remoteAgents);
  const httpTools = loadHttpToolSettings(settings.httpTools, config);
  // The chats' processes, as `dimsum serve` has them (the chat header lists them).
  const processes = new ProcessManager({ settings: DEFAULT_PROCESS_SETTINGS });
  const team = await buildTeam(
    { db, config, settings, log, remoteAgents, httpTools, processes, ...(pool ? { mcp: pool } : {}) },
    { streamOptions: { retry: { maxRetries: 0 } }, ...options.team },
  );
  const connectors = options.connectors
    ? new ConnectorManager({
        store: createSqliteConnectorStore(db, openSecretBox(home)),
        team,
        users: connectorUsersFrom(new UserStore(db, { hashParams: { N: 1024, r: 8, p: 1 } })),
        log,
        backoff: { baseDelayMs: 20, maxDelayMs: 200 },
      })
    : undefined;
  let scheduling: Scheduling | undefined;
  if (options.schedules) {
    const users = new UserStore(db);
    scheduling = createScheduling({
      store: createSqliteScheduleStore(db),
      team,
      actorOf: async (id) => {
        const user = await users.get(id);
        return user ? { userId: user.id, role: user.role } : undefined;
      },
      log,
    });
  }
  const processRoutes = mountProcessRoutes(team, processes);
  const serverDeps = (ensureOwner: boolean): ServerDeps => ({
    db,
    config,
    home,
    log,
    team,
    settings,
    ensureOwner,
    // Cheap hashes keep the suite fast; the default cost has its own test.
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: WEB_DIST,
    rateLimits: {
      loginPerIp: generous,
      messagePerUser: generous,
      messagePerIp: generous,
    },
    routes: [
      mountTeamRoutes({
        team,
        remoteAgents,
        httpTools,
        memory: buildMemory(db, log),
        ...(mcp ? { mcp } : {}),
        ...(scheduling ? { schedules: scheduling.service } : {}),
      }),
      mountKnowledgeRoutes(buildKnowledge(db, config), options.knowledge),
      ...(connectors ? [mountConnectorRoutes(connectors)] : []),
      ...(scheduling ? [mountScheduleRoutes(scheduling.service)] : []),
      processRoutes.api,
    ],
    ...(connectors ? { publicRoutes: [mountConnectorInbound(connectors)] } : {}),
  });
  let listening = await createServer(serverDeps(options.ensureOwner ?? false)).listen(0, "127.0.0.1");
  const port = listening.port;
  await scheduling?.scheduler.start();
  return {
    url: listening.url,
    logLines,
    infoLines,
    owner: listening.owner,
    async stop() {
      await listening.close();
      return {
        start: async () => {
          listening = await createServer(serverDeps(false)).listen(port, "127.0.0.1");
        },
      };
    },
    async close() {
      await listening.close();
      await connectors?.close();
      await processes.closeAll();
      await scheduling?.scheduler.stop();
      await team.close();
      await (mcp as { close?: () => Promise<void> } | undefined)?.close?.();
      db.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
