/**
 * The server the browser tests drive: `dimsum serve`'s wiring (real team, memory, knowledge bases,
 * SQLite in a temp folder) serving the built web UI from `web/dist`, its agents talking to the
 * scripted fake LLM.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../src/config/load-config.js";
import type { McpControl } from "../../src/mcp/server-pool.js";
import { createServer } from "../../src/server/app.js";
import { buildKnowledge, buildMemory, buildTeam } from "../../src/server/compose.js";
import type { ServerLog } from "../../src/server/context.js";
import { type KnowledgeRoutesOptions, mountKnowledgeRoutes } from "../../src/server/routes/knowledge.js";
import { mountTeamRoutes } from "../../src/server/routes/team.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { openDatabase } from "../../src/store/database.js";

/** The built single-page app the server serves. */
export const WEB_DIST = fileURLToPath(new URL("../../web/dist/", import.meta.url));

export interface E2eServer {
  /** e.g. `http://127.0.0.1:PORT` */
  url: string;
  /** Warnings and errors the server logged, for failure reports. */
  logLines: string[];
  close(): Promise<void>;
}

export interface E2eServerOptions {
  /** Upload limits of `/api/kb` (default: `dimsum serve`'s, 20 MB and 100 files per upload). */
  knowledge?: KnowledgeRoutesOptions;
  /** The MCP servers `/api/mcp` controls, made over the server's home folder (default: none). */
  mcp?: (home: string) => McpControl;
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

/** Starts the server on 127.0.0.1:0 with no owner yet (the test sets one up through the UI). */
export async function startE2eServer(llmUrl: string, options: E2eServerOptions = {}): Promise<E2eServer> {
  assertWebBuilt();
  const home = mkdtempSync(join(tmpdir(), "dimsum-e2e-"));
  const db = openDatabase(join(home, "dimsum.db"));
  const logLines: string[] = [];
  const log: ServerLog = {
    info: () => {},
    warn: (m) => logLines.push(`warn: ${m}`),
    error: (m, err) =>
      logLines.push(`error: ${m} ${err instanceof Error ? (err.stack ?? err.message) : String(err ?? "")}`),
  };
  const config = loadConfig({
    cwd: home,
    env: {
      DIMSUM_HOME: home,
      DIMSUM_MODEL: "openai:gpt-test",
      OPENAI_API_KEY: "sk-test-key-1234",
      OPENAI_BASE_URL: `${llmUrl}/v1`,
    },
  });
  const settings = new SettingsStore(db, openSecretBox(home));
  const mcp = options.mcp?.(home);
  const team = await buildTeam(
    { db, config, settings, log },
    { streamOptions: { retry: { maxRetries: 0 } } },
  );
  const server = createServer({
    db,
    config,
    home,
    log,
    team,
    settings,
    ensureOwner: false,
    // Cheap hashes keep the suite fast; the default cost has its own test.
    passwordHashParams: { N: 1024, r: 8, p: 1 },
    staticDir: WEB_DIST,
    rateLimits: {
      loginPerIp: generous,
      loginPerUsername: generous,
      messagePerUser: generous,
      messagePerIp: generous,
    },
    routes: [
      mountTeamRoutes({ team, memory: buildMemory(db, log), ...(mcp ? { mcp } : {}) }),
      mountKnowledgeRoutes(buildKnowledge(db, config), options.knowledge),
    ],
  });
  const listening = await server.listen(0, "127.0.0.1");
  return {
    url: listening.url,
    logLines,
    async close() {
      await listening.close();
      await team.close();
      await (mcp as { close?: () => Promise<void> } | undefined)?.close?.();
      db.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
