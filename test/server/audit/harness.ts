/**
 * A real server for the audit tests: `dimsum serve`'s wiring over a temp SQLite file (team, memory,
 * knowledge bases, MCP servers, remote agents, HTTP tools, connectors), its agents talking to the
 * scripted fake LLM.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { loadConfig } from "../../../src/config/load-config.js";
import { ConnectorManager } from "../../../src/connectors/connector-manager.js";
import { createSqliteConnectorStore } from "../../../src/connectors/store/connector-store.js";
import { McpServerPool } from "../../../src/mcp/server-pool.js";
import { createServer } from "../../../src/server/app.js";
import { UserStore } from "../../../src/server/auth/user-store.js";
import { buildKnowledge, buildMemory, buildTeam } from "../../../src/server/compose.js";
import { loadHttpToolSettings } from "../../../src/server/http-tools.js";
import { loadRemoteAgents } from "../../../src/server/remote-agents.js";
import { connectorUsersFrom, mountConnectorRoutes } from "../../../src/server/routes/connectors.js";
import { mountKnowledgeRoutes } from "../../../src/server/routes/knowledge.js";
import { mountTeamRoutes } from "../../../src/server/routes/team.js";
import { openSecretBox } from "../../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../../src/server/settings/settings-store.js";
import { type Database, openDatabase } from "../../../src/store/database.js";
import { memoryLog } from "../helpers.js";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export interface AuditServer {
  url: string;
  db: Database;
  home: string;
  /** What the server logged as warnings and errors. */
  problems(): string[];
}

const generous = { capacity: 10_000, perMinute: 10_000 };

export async function startAuditServer(llmUrl: string, providerKey: string): Promise<AuditServer> {
  const home = mkdtempSync(join(tmpdir(), "dimsum-audit-"));
  const file = join(home, "dimsum.db");
  const db = openDatabase(file);
  const log = memoryLog();
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ tools: { fetch: { allowPrivateNetwork: true } } }),
  );
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: providerKey,
      OPENAI_BASE_URL: `${llmUrl}/v1`,
    },
  });
  config.queue = { ...config.queue, group: "followup" };
  const box = openSecretBox(home);
  const settings = new SettingsStore(db, box);
  const pool = new McpServerPool([], process.env);
  const remoteAgents = loadRemoteAgents(config, home, log, settings.remoteAgents);
  const httpTools = loadHttpToolSettings(settings.httpTools, config);
  const team = await buildTeam(
    { db, config, settings, log, remoteAgents, httpTools, mcp: pool },
    { streamOptions: { retry: { maxRetries: 0 } } },
  );
  const connectors = new ConnectorManager({
    store: createSqliteConnectorStore(db, box),
    team,
    users: connectorUsersFrom(new UserStore(db, { hashParams: { N: 1024, r: 8, p: 1 } })),
    log,
    backoff: { baseDelayMs: 20, maxDelayMs: 200 },
  });
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
    rateLimits: { loginPerIp: generous, messagePerUser: generous, messagePerIp: generous },
    routes: [
      mountTeamRoutes({ team, remoteAgents, httpTools, memory: buildMemory(db, log), mcp: pool }),
      mountKnowledgeRoutes(buildKnowledge(db, config)),
      mountConnectorRoutes(connectors),
    ],
  });
  const listening = await server.listen(0, "127.0.0.1");
  cleanups.push(async () => {
    await listening.close();
    await connectors.close();
    await pool.close();
    await team.close();
    db.close();
    rmSync(home, { recursive: true, force: true });
  });
  return { url: listening.url, db, home, problems: () => log.lines.filter((l) => !l.startsWith("info")) };
}
