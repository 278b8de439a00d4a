/**
 * A real server with the real team mounted (as `dimsum serve` wires it) over a temp SQLite file, its
 * agents talking to the scripted fake LLM server; plus small helpers for the team tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { type McpControl, McpServerPool } from "../../src/mcp/server-pool.js";
import type { MemoryStore } from "../../src/memory/types.js";
import { createServer, type DimsumServer } from "../../src/server/app.js";
import { buildMemory, buildTeam } from "../../src/server/compose.js";
import { loadHttpToolSettings } from "../../src/server/http-tools.js";
import { loadRemoteAgents } from "../../src/server/remote-agents.js";
import { mountTeamRoutes, type TeamRoutesOptions } from "../../src/server/routes/team.js";
import type { RateLimitConfig } from "../../src/server/security/rate-limit.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import type { TeamDeps } from "../../src/team/team.js";
import type { Team } from "../../src/team/types.js";
import { type LogLines, memoryLog, type Session } from "./helpers.js";
import { connect, type Frame, type TestClient } from "./ws-helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export interface TeamServer {
  url: string;
  host: string;
  server: DimsumServer;
  team: Team;
  db: Database;
  home: string;
  log: LogLines;
  memory: MemoryStore | undefined;
}

export interface TeamServerOptions {
  /** The fake LLM server's URL; agents then default to `openai:gpt-test` there (via env). */
  llmUrl?: string;
  env?: Record<string, string>;
  team?: Partial<TeamDeps>;
  /** Wraps the team the routes see (to observe calls). */
  wrap?: (team: Team) => Team;
  /** Mount memory routes over the server's database (default true). */
  memory?: boolean;
  /** The MCP servers, made over the server's home folder and database. */
  mcp?: (home: string, db: Database) => McpControl;
  rateLimits?: RateLimitConfig;
  /** The content of an a2a.json written into the home before the server starts (default: none). */
  a2a?: unknown;
  /** The content of a config.json written into the home before the server starts (default: none). */
  configFile?: unknown;
}

const generous = { capacity: 10_000, perMinute: 10_000 };

/** Starts the server with the team routes on 127.0.0.1:0; closed (and its folder removed) after the test. */
export async function startTeamServer(options: TeamServerOptions = {}): Promise<TeamServer> {
  const home = mkdtempSync(join(tmpdir(), "dimsum-team-server-"));
  const db = openDatabase(join(home, "dimsum.db"));
  const log = memoryLog();
  const llmEnv: Record<string, string> = options.llmUrl
    ? {
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test-key-1234",
        OPENAI_BASE_URL: `${options.llmUrl}/v1`,
      }
    : {};
  if (options.a2a !== undefined) writeFileSync(join(home, "a2a.json"), JSON.stringify(options.a2a));
  if (options.configFile !== undefined)
    writeFileSync(join(home, "config.json"), JSON.stringify(options.configFile));
  const config = loadConfig({ cwd: home, env: { DIMSUM_HOME: home, ...llmEnv, ...options.env } });
  // Groups answer each message with a run of its own here (the default `collect` waits 1.5 s for a
  // burst); test/team/approvals-steering.test.ts covers the queue modes.
  config.queue = { ...config.queue, group: "followup" };
  const settings = new SettingsStore(db, openSecretBox(home));
  const mcp = options.mcp?.(home, db);
  // A pool (as `dimsum serve` builds it) also gives the team's agents its tools.
  const pool = mcp instanceof McpServerPool ? mcp : undefined;
  // a2a.json of the home and those added in Settings, as `dimsum serve` has them.
  const remoteAgents = loadRemoteAgents(config, home, log, settings.remoteAgents);
  const httpTools = loadHttpToolSettings(settings.httpTools, config);
  const inner = await buildTeam(
    { db, config, settings, log, remoteAgents, httpTools, ...(pool ? { mcp: pool } : {}) },
    { streamOptions: { retry: { maxRetries: 0 } }, ...options.team },
  );
  const team = options.wrap ? options.wrap(inner) : inner;
  const memory = options.memory === false ? undefined : buildMemory(db, log);
  const routes: TeamRoutesOptions = { team, remoteAgents, httpTools };
  if (memory) routes.memory = memory;
  if (mcp) routes.mcp = mcp;
  const server = createServer({
    db,
    config,
    home,
    log,
    team,
    settings,
    ensureOwner: false,
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: join(home, "no-web-build"),
    rateLimits: {
      loginPerIp: generous,
      messagePerUser: generous,
      messagePerIp: generous,
      ...options.rateLimits,
    },
    routes: [mountTeamRoutes(routes)],
  });
  const listening = await server.listen(0, "127.0.0.1");
  cleanups.push(async () => {
    await listening.close();
    await inner.close();
    db.close();
    rmSync(home, { recursive: true, force: true });
  });
  return {
    url: listening.url,
    host: new URL(listening.url).host,
    server,
    team: inner,
    db,
    home,
    log,
    memory,
  };
}

/** Reads a JSON response body, failing loudly on an unexpected status. */
export async function expectJson<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

/** A WebSocket signed in by the session cookie on a same-origin upgrade (as the web UI connects). */
export async function openSocket(server: TeamServer, session: Session): Promise<TestClient> {
  const client = connect(server.url, { cookie: session.cookie, origin: `http://${server.host}` });
  await client.next((f) => f.type === "ready");
  return client;
}

/** Subscribes and waits for the channel's backlog frame. */
export async function follow(client: TestClient, channelId: string): Promise<Frame> {
  client.send({ type: "subscribe", channelId });
  return client.next((f) => f.type === "backlog" && f.channelId === channelId);
}

/** Sends a ping and waits for its pong: every frame the server sent before is then in `frames`. */
export async function flush(client: TestClient): Promise<void> {
  const pongs = client.frames.filter((f) => f.type === "pong").length;
  client.send({ type: "ping" });
  await client.next(
    (f) => f.type === "pong" && client.frames.filter((g) => g.type === "pong").length > pongs,
  );
}

/** The frame of a run reaching a status. */
export const runFrame = (runId: string, status: string) => (f: Frame) =>
  f.type === "run" &&
  (f.run as { id: string; status: string }).id === runId &&
  (f.run as { status: string }).status === status;
