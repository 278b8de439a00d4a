/**
 * A real Dimsum server with the team, the connector routes and the public inbound endpoint, over a
 * temp SQLite file, its agents answering from the scripted fake LLM server; plus helpers to call the
 * connector API as the owner and to restart the connectors (as a server restart would).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { ConnectorManager } from "../../src/connectors/connector-manager.js";
import { manageChannelGrant } from "../../src/connectors/manage-channel-tool.js";
import { createSqliteConnectorStore } from "../../src/connectors/store/connector-store.js";
import type { ConnectorView } from "../../src/connectors/types.js";
import { createServer } from "../../src/server/app.js";
import { UserStore } from "../../src/server/auth/user-store.js";
import { buildTeam } from "../../src/server/compose.js";
import {
  connectorUsersFrom,
  mountConnectorInbound,
  mountConnectorRoutes,
} from "../../src/server/routes/connectors.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { AuditLog } from "../../src/store/audit/audit-log.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { sqliteDatabase } from "../../src/store/sql-database.js";
import type { Actor, ChannelMessage, Team } from "../../src/team/types.js";
import { type FakeLlmServer, startFakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type LogLines, login, memoryLog, type Session } from "../server/helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Registers something to close after the test. */
export function onCleanup(cleanup: () => Promise<void>): void {
  cleanups.push(cleanup);
}

export interface ConnectorServer {
  readonly url: string;
  llm: FakeLlmServer;
  readonly team: Team;
  readonly db: Database;
  log: LogLines;
  owner: Session;
  ownerActor: Actor;
  readonly connectors: ConnectorManager;
  /** Stops server, connectors and team, and boots them again on the same database (new port). */
  restart(): Promise<void>;
  /** Calls the API as the owner. */
  api(path: string, options?: { method?: string; body?: unknown }): Promise<Response>;
  /** Creates a connector through the API and returns its view. */
  createConnector(body: Record<string, unknown>): Promise<ConnectorView>;
  /** Row counts that must not move when a request is refused. */
  counts(): { messages: number; runs: number; channels: number; users: number; inbound: number };
  /** Messages of the channel mapped to an external chat. */
  channelMessages(connectorId: string, chatId: string): Promise<ChannelMessage[]>;
}

export interface ConnectorServerOptions {
  /** Pause between the fake LLM's stream chunks (streamed previews). */
  chunkDelayMs?: number;
  /** Characters per streamed chunk of the fake LLM. */
  chunkSize?: number;
  /** The agents' model (default `openai:gpt-test`, which the catalogue does not know). */
  model?: string;
  /** The config file's contents (`$DIMSUM_HOME/config.json`), e.g. attachment limits. */
  config?: Record<string, unknown>;
  /** More environment variables of the server (e.g. `DIMSUM_STT_BASE_URL`). */
  env?: Record<string, string>;
}

interface Booted {
  url: string;
  db: Database;
  team: Team;
  connectors: ConnectorManager;
  stop(): Promise<void>;
}

async function boot(
  home: string,
  llm: FakeLlmServer,
  log: LogLines,
  model: string,
  extraEnv: Record<string, string> = {},
): Promise<Booted> {
  const db = openDatabase(join(home, "dimsum.db"));
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: model,
      OPENAI_API_KEY: "sk-test-key-1234",
      OPENAI_BASE_URL: `${llm.url}/v1`,
      ...extraEnv,
    },
  });
  const settings = new SettingsStore(db, openSecretBox(home));
  const users = new UserStore(db, { hashParams: { N: 1024, r: 8, p: 1 } });
  let connectors: ConnectorManager | undefined;
  const team = await buildTeam(
    { db, config, settings, log },
    {
      streamOptions: { retry: { maxRetries: 0 } },
      grantableTools: manageChannelGrant(
        () => connectors,
        (id) => users.get(id),
      ),
    },
  );
  // One audit log for the server's routes and the chats' buttons, as `dimsum serve` has.
  const audit = new AuditLog(sqliteDatabase(db), { instance: "connector-test" });
  connectors = new ConnectorManager({
    store: createSqliteConnectorStore(db, openSecretBox(home)),
    team,
    users: connectorUsersFrom(users),
    log,
    attachments: config.attachments,
    ...(config.speechToText ? { speechToText: config.speechToText } : {}),
    backoff: { baseDelayMs: 20, maxDelayMs: 200 },
    editIntervalMs: 20,
    audit: (entry) => audit.record(entry),
  });
  const server = createServer({
    db,
    audit,
    config,
    home,
    log,
    team,
    settings,
    ensureOwner: false,
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: join(home, "no-web-build"),
    routes: [mountTeamRoutes({ team }), mountConnectorRoutes(connectors)],
    publicRoutes: [mountConnectorInbound(connectors)],
  });
  const listening = await server.listen(0, "127.0.0.1");
  await connectors.startEnabled();
  return {
    url: listening.url,
    db,
    team,
    connectors,
    async stop() {
      // The order of `dimsum serve`: no more requests, then connectors, then the team.
      await listening.close();
      await connectors.close();
      await team.close();
      db.close();
    },
  };
}

/** Starts everything on 127.0.0.1:0; closed after the test. */
export async function startConnectorServer(options: ConnectorServerOptions = {}): Promise<ConnectorServer> {
  const llm = await startFakeLlmServer({
    defaultTurn: { text: "Hello from the assistant." },
    chunkDelayMs: options.chunkDelayMs ?? 0,
    ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}),
  });
  const home = mkdtempSync(join(tmpdir(), "dimsum-connectors-"));
  if (options.config) writeFileSync(join(home, "config.json"), JSON.stringify(options.config));
  const model = options.model ?? "openai:gpt-test";
  const log = memoryLog();
  let current = await boot(home, llm, log, model, options.env);
  cleanups.push(async () => {
    await current.stop();
    await llm.close();
    rmSync(home, { recursive: true, force: true });
  });
  const owner = await login(current.url, "alice", "owner-password-1", "/api/auth/setup");
  const api = (path: string, opts: { method?: string; body?: unknown } = {}) =>
    call(current.url, path, { session: owner, as: "bearer", ...opts });
  const count = (table: string) =>
    (current.db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const ownerActor: Actor = { userId: owner.userId, role: "owner" };
  return {
    get url() {
      return current.url;
    },
    get db() {
      return current.db;
    },
    get team() {
      return current.team;
    },
    get connectors() {
      return current.connectors;
    },
    llm,
    log,
    owner,
    ownerActor,
    async restart() {
      await current.stop();
      current = await boot(home, llm, log, model, options.env);
    },
    api,
    async createConnector(body) {
      const res = await api("/api/connectors", { body });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`creating a connector: ${res.status} ${text}`);
      return JSON.parse(text) as ConnectorView;
    },
    counts: () => ({
      messages: count("team_messages"),
      runs: count("team_runs"),
      channels: count("team_channels"),
      users: count("users"),
      inbound: count("connector_inbound"),
    }),
    async channelMessages(connectorId, chatId) {
      const row = current.db
        .prepare("SELECT channel_id FROM connector_chats WHERE connector_id = ? AND external_chat_id = ?")
        .get(connectorId, chatId) as { channel_id: string } | undefined;
      if (!row) return [];
      return current.team.listMessages(ownerActor, row.channel_id);
    },
  };
}

/** Starts a connector through the API, failing loudly. */
export async function startConnector(server: ConnectorServer, id: string): Promise<ConnectorView> {
  const res = await server.api(`/api/connectors/${id}/start`, { method: "POST" });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`starting ${id}: ${res.status} ${text}`);
  return JSON.parse(text) as ConnectorView;
}

/** Polls a condition that depends on background work (no fixed sleeps in assertions). */
export async function eventually(
  test: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await test())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
