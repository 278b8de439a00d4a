/**
 * `dimsum serve`: one process serving the HTTP API, the WebSocket endpoint and the web UI, with the
 * state in the SQLite database under DIMSUM_HOME, or in PostgreSQL shared with other instances
 * (`DIMSUM_DATABASE_URL`, live events between them through `DIMSUM_REDIS_URL`; see
 * server/storage/open-storage.ts). Stops cleanly on SIGINT/SIGTERM.
 */

import { join } from "node:path";
import { DatabaseA2aTaskStore } from "../../a2a/task-store.js";
import { resolveShellOffer } from "../../capabilities/index.js";
import type { DimsumConfig } from "../../config/load-config.js";
import { loadConfig } from "../../config/load-config.js";
import { ConnectorManager } from "../../connectors/connector-manager.js";
import { manageChannelGrant } from "../../connectors/manage-channel-tool.js";
import { DimsumError, toDimsumError } from "../../errors.js";
import type { McpServerPool } from "../../mcp/server-pool.js";
import { createManageScheduleTool, MANAGE_SCHEDULE_TOOL } from "../../schedules/manage-schedule-tool.js";
import { createScheduling, type Scheduling } from "../../schedules/setup.js";
import { createServer } from "../../server/app.js";
import { AuthEvents } from "../../server/auth/auth-events.js";
import { relayAuthEvents } from "../../server/auth/auth-relay.js";
import { buildMcp, buildTeam, knowledgeOf } from "../../server/compose.js";
import type { ServerLog } from "../../server/context.js";
import { loadHttpToolSettings } from "../../server/http-tools.js";
import { type InstanceSync, joinInstanceSync } from "../../server/instance-sync.js";
import { McpSignIns } from "../../server/mcp-signin.js";
import { mountProcessRoutes } from "../../server/previews/process-routes.js";
import { loadRemoteAgents } from "../../server/remote-agents.js";
import {
  connectorUsersFrom,
  mountConnectorInbound,
  mountConnectorRoutes,
} from "../../server/routes/connectors.js";
import { mountHealthRoutes } from "../../server/routes/health.js";
import { mountKnowledgeRoutes } from "../../server/routes/knowledge.js";
import { mountScheduleRoutes } from "../../server/routes/schedules.js";
import { mountTeamRoutes, type TeamRoutesOptions } from "../../server/routes/team.js";
import { importLegacySignIns } from "../../server/settings/mcp-credential-store.js";
import {
  type Cluster,
  openCluster,
  openStorage,
  type ServerStorage,
} from "../../server/storage/open-storage.js";
import type { GrantableTools } from "../../team/team.js";
import type { Team } from "../../team/types.js";
import { startTelemetry, type Telemetry } from "../../telemetry/index.js";
import { BrowserSessions } from "../../tools/browser/browser-sessions.js";
import { DEFAULT_PROCESS_SETTINGS, ProcessManager } from "../../tools/process/index.js";
import { reportCommandError } from "../command-errors.js";
import type { CommandIo } from "../command-io.js";
import { EXIT_OK } from "../exit-codes.js";

export const DEFAULT_PORT = 18800;
export const DEFAULT_HOST = "127.0.0.1";

export interface ServeOptions {
  port?: number;
  host?: string;
}

export interface ServeIo extends CommandIo {
  /** Stops the server when aborted (tests); SIGINT and SIGTERM always do. */
  signal?: AbortSignal;
}

function waitForStop(signal: AbortSignal | undefined): Promise<string> {
  return new Promise((resolve) => {
    const stop = (reason: string) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      signal?.removeEventListener("abort", onAbort);
      resolve(reason);
    };
    const onInt = () => stop("SIGINT");
    const onTerm = () => stop("SIGTERM");
    const onAbort = () => stop("abort");
    process.once("SIGINT", onInt);
    process.once("SIGTERM", onTerm);
    if (signal?.aborted) stop("abort");
    else signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function listenError(err: unknown, host: string, port: number): DimsumError {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE") {
    return new DimsumError("config", `${host}:${port} is already in use`, {
      hint: "stop the other process or pick another port with --port (or PORT)",
    });
  }
  if (code === "EACCES" || code === "EADDRNOTAVAIL") {
    return new DimsumError("config", `cannot listen on ${host}:${port} (${code})`, {
      hint: "use a port above 1024 and an address of this machine (--host 127.0.0.1 or 0.0.0.0)",
    });
  }
  return toDimsumError(err);
}

/** Runs the server until a stop signal; resolves to the exit code. */
export async function serveCommand(options: ServeOptions, io: ServeIo): Promise<number> {
  const log: ServerLog = {
    info: (message) => io.stdout.write(`${message}\n`),
    warn: (message) => io.stderr.write(`dimsum: ${message}\n`),
    error: (message, err) =>
      io.stderr.write(
        `dimsum: ${message}${err === undefined ? "" : `: ${err instanceof Error ? err.message : String(err)}`}\n`,
      ),
  };
  let storage: ServerStorage | undefined;
  let cluster: Cluster | undefined;
  let stopAuthRelay: (() => void) | undefined;
  let team: Team | undefined;
  let mcp: McpServerPool | undefined;
  let scheduling: Scheduling | undefined;
  let connectors: ConnectorManager | undefined;
  let server: ReturnType<typeof createServer> | undefined;
  let a2aTasks: DatabaseA2aTaskStore | undefined;
  let sync: InstanceSync | undefined;
  let telemetry: Telemetry | undefined;
  let processes: ProcessManager | undefined;
  let browser: BrowserSessions | undefined;
  try {
    const config = loadConfig({ cwd: io.cwd, env: io.env });
    // --port, else PORT (environment or .env), else 18800.
    const port = options.port ?? config.server.port ?? DEFAULT_PORT;
    const host = options.host ?? DEFAULT_HOST;
    storage = await openStorage(config);
    cluster = await openCluster(config, storage);
    if (storage.kind === "postgres") {
      log.info(
        `State in ${storage.label}${cluster ? "; live events through Redis" : " (no DIMSUM_REDIS_URL: one instance only)"}`,
      );
    }
    const authEvents = new AuthEvents((err) => log.error("an auth event listener failed", err));
    if (cluster) stopAuthRelay = relayAuthEvents(authEvents, cluster.auth);
    const { settings } = storage;
    const users = storage.accounts({ events: authEvents }).users;
    const memory = storage.memory({ warn: (message) => log.warn(message) });
    const knowledge = knowledgeOf(storage, config);
    if (storage.sqlite) {
      // Sign-ins an older version kept as files move into the database (and so into a later migrate).
      const imported = await importLegacySignIns(storage.sqlite, config.home);
      if (imported > 0) log.info(`moved ${imported} MCP sign-in(s) from files into the database`);
    }
    mcp = await buildMcp(config, io.cwd, log, settings, storage.mcpCredentials);
    // Started once for the whole process and shared by every agent; a failing server never blocks.
    void mcp?.startAll();
    const mcpSignIns = new McpSignIns();
    const remoteAgents = loadRemoteAgents(config, io.cwd, log, settings.remoteAgents);
    const httpTools = loadHttpToolSettings(settings.httpTools, config);
    // Several instances: what one changes in memory-held state (MCP servers, sign-ins, connectors,
    // the remote agents' list) the others hear.
    if (cluster) {
      sync = joinInstanceSync({
        relay: cluster.server,
        remoteAgents,
        httpTools,
        ...(mcp ? { mcp: { pool: mcp, saved: settings.mcp, signIns: mcpSignIns } } : {}),
        connectors: () => connectors,
        onError: (err) => log.error("applying another instance's change failed", err),
      });
    }
    telemetry = await startTelemetry(config.telemetry, (message) => log.warn(message));
    if (telemetry) log.info(`OpenTelemetry: exporting GenAI spans to ${config.telemetry?.tracesUrl}`);
    const shell = await resolveShellOffer(config.tools.shell);
    if (!shell.sandboxed) log.warn(`shell: ${shell.reason}`);
    processes = openProcesses(config, log);
    // Chromium starts on the first use of the browser tool (playwright-core, an optional dependency).
    browser = new BrowserSessions({ processes, allowPrivate: config.tools.fetch.allowPrivateNetwork });
    team = await buildTeam(
      {
        storage,
        remoteAgents,
        httpTools,
        ...(cluster ? { cluster } : {}),
        users,
        config,
        settings,
        log,
        cwd: io.cwd,
        memory,
        knowledge,
        shell,
        processes,
        browser,
        ...(mcp ? { mcp } : {}),
      },
      // Looked up when a granted agent runs, by then both exist.
      {
        ...(telemetry ? { observe: telemetry.observe } : {}),
        grantableTools: combineGrants([
          manageChannelGrant(
            () => connectors,
            (id) => users.get(id),
          ),
          {
            names: [MANAGE_SCHEDULE_TOOL],
            describe: () =>
              scheduling ? [createManageScheduleTool(scheduling.service, { userId: "", role: "guest" })] : [],
            create: async (_agent, requestedBy) => {
              const user = await users.get(requestedBy);
              return scheduling && user
                ? [createManageScheduleTool(scheduling.service, { userId: user.id, role: user.role })]
                : [];
            },
          },
        ]),
      },
    );
    // The run queue as gauges, read with the owner's rights (the queue is instance-wide, no one's data).
    const queueTeam = team;
    telemetry?.gaugeRunQueue(() => queueTeam.runQueue({ userId: "telemetry", role: "owner" }));
    // A2A tasks are kept in the server's database: readable after a restart and from any instance.
    a2aTasks = new DatabaseA2aTaskStore(
      storage.sqlite
        ? { kind: "sqlite", db: storage.sqlite }
        : { kind: "postgres", url: config.server.databaseUrl ?? "" },
    );
    const routeOptions: TeamRoutesOptions = { team, memory, mcpSignIns, a2aTasks, remoteAgents, httpTools };
    const mcpControl = sync?.mcp ?? mcp;
    if (mcpControl) routeOptions.mcp = mcpControl;
    scheduling = createScheduling({
      store: storage.schedules,
      team,
      actorOf: async (id) => {
        const user = await users.get(id);
        return user ? { userId: user.id, role: user.role } : undefined;
      },
      log,
    });
    routeOptions.schedules = scheduling.service;
    const auditLog = storage.audit;
    connectors = new ConnectorManager({
      store: storage.connectors,
      // One process owns a SQLite file: a restart takes its predecessor's poll lease and claims back.
      instanceId: cluster?.team.instanceId ?? (storage.kind === "sqlite" ? "this-home" : undefined),
      team,
      users: connectorUsersFrom(users),
      log,
      attachments: config.attachments,
      ...(config.speechToText ? { speechToText: config.speechToText } : {}),
      ...(sync ? { onChanged: (id: string) => sync?.connectorChanged(id) } : {}),
      audit: (entry) => auditLog.record(entry),
    });
    const database = storage;
    const processRoutes = mountProcessRoutes(team, processes);
    server = createServer({
      ...(storage.sqlite ? { db: storage.sqlite } : {}),
      accounts: storage.accounts,
      audit: storage.audit,
      budgets: storage.budgets,
      authEvents,
      config,
      home: config.home,
      team,
      settings,
      log,
      shell,
      routes: [
        mountTeamRoutes(routeOptions),
        mountScheduleRoutes(scheduling.service),
        mountConnectorRoutes(connectors),
        mountKnowledgeRoutes(knowledge),
        processRoutes.api,
      ],
      publicRoutes: [
        processRoutes.previews,
        mountHealthRoutes({ database: () => database.ping(), log }),
        mountConnectorInbound(connectors),
      ],
      ...(cluster ? { sharedLimits: cluster.limits } : {}),
      trustProxy: config.server.trustProxy,
    });
    const listening = await server.listen(port, host).catch((err: unknown) => {
      throw listenError(err, host, port);
    });
    io.stdout.write(`Dimsum is serving on ${listening.url}  (Ctrl+C to stop)\n`);
    await scheduling.scheduler.start();
    await connectors.startEnabled();
    const reason = await waitForStop(io.signal);
    io.stdout.write(`Stopping (${reason})...\n`);
    return EXIT_OK;
  } catch (err) {
    return reportCommandError(err, io.stderr);
  } finally {
    await server?.close();
    await browser?.closeAll().catch((err) => log.error("closing the browser failed", err));
    await processes?.closeAll().catch((err) => log.error("stopping session processes failed", err));
    sync?.leave();
    await connectors?.close().catch((err) => log.error("stopping connectors failed", err));
    await scheduling?.scheduler.stop().catch((err) => log.error("stopping the scheduler failed", err));
    await mcp?.close().catch((err) => log.error("stopping MCP servers failed", err));
    await team?.close().catch((err) => log.error("closing the team failed", err));
    await telemetry?.shutdown();
    stopAuthRelay?.();
    await cluster?.close();
    await a2aTasks?.close().catch((err) => log.error("closing the A2A task store failed", err));
    await storage?.close().catch((err) => log.error("closing the database failed", err));
  }
}

/** Several grantable tool sets as one: all their names, all the tools they create. */
function combineGrants(grants: GrantableTools[]): GrantableTools {
  return {
    names: grants.flatMap((g) => g.names),
    create: async (agent, requestedBy) =>
      (await Promise.all(grants.map((g) => g.create(agent, requestedBy)))).flat(),
    describe: () => grants.flatMap((g) => g.describe()),
  };
}

/** The chats' processes, after ending any a killed predecessor on this home left running. */
function openProcesses(config: DimsumConfig, log: ServerLog): ProcessManager {
  const processes = new ProcessManager({
    settings: config.tools.processes ?? DEFAULT_PROCESS_SETTINGS,
    registryDir: join(config.home, "run", "processes"),
  });
  const orphans = processes.sweepOrphans();
  if (orphans > 0) log.info(`ended ${orphans} session process(es) left running by a previous server`);
  return processes;
}
