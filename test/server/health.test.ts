/**
 * The health probes (src/server/routes/health.ts): `/healthz` and `/readyz` answer without a session on
 * a real `dimsum serve`, readiness asks the real database (SQLite file, PostgreSQL) and answers 503 with
 * the failed check's name, and nothing else, while it cannot reach it.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { serveCommand } from "../../src/cli/commands/serve.js";
import { EXIT_OK } from "../../src/cli/exit-codes.js";
import { loadConfig } from "../../src/config/load-config.js";
import { mountHealthRoutes } from "../../src/server/routes/health.js";
import { openStorage } from "../../src/server/storage/open-storage.js";
import { createTestDatabase, postgresAvailable } from "../support/postgres.js";
import { memoryLog, sink, startServer, tempDir, waitFor } from "./helpers.js";

describe("health probes", () => {
  it("answer on dimsum serve without a session, uncached, and say nothing about the install", async () => {
    const home = tempDir();
    const stdout = sink();
    const stop = new AbortController();
    const running = serveCommand(
      { port: 0 },
      { stdout, stderr: sink(), env: { DIMSUM_HOME: home }, cwd: home, signal: stop.signal },
    );
    const url = await waitFor(() => /serving on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout.text)?.[1]);
    try {
      const live = await fetch(`${url}/healthz`);
      expect(live.status).toBe(200);
      expect(live.headers.get("cache-control")).toBe("no-store");
      expect(await live.json()).toEqual({ status: "ok" });

      const ready = await fetch(`${url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get("cache-control")).toBe("no-store");
      const text = await ready.text();
      expect(JSON.parse(text)).toEqual({ status: "ready", checks: { database: "ok" } });
      expect(text).not.toContain(home);
      // No session cookie is handed out by a probe.
      expect(ready.headers.get("set-cookie")).toBeNull();
    } finally {
      stop.abort();
      expect(await running).toBe(EXIT_OK);
    }
  });

  it("readiness is 503 once the SQLite database is closed, logged once; liveness stays 200", async () => {
    const home = tempDir();
    const storage = await openStorage(loadConfig({ cwd: home, env: { DIMSUM_HOME: home } }));
    const log = memoryLog();
    const server = await startServer({
      publicRoutes: [mountHealthRoutes({ database: () => storage.ping(), log })],
    });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    await storage.close();
    for (let i = 0; i < 2; i++) {
      const down = await fetch(`${server.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: "unready", checks: { database: "unreachable" } });
    }
    expect(log.lines.filter((l) => l.includes("readiness")).length).toBe(1);
    expect(log.lines[0]).toContain("the database does not answer");
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it.skipIf(!postgresAvailable)(
    "readiness asks PostgreSQL, and is 503 when the database is gone",
    async () => {
      const database = await createTestDatabase();
      const home = tempDir();
      const storage = await openStorage(
        loadConfig({
          cwd: home,
          env: {
            DIMSUM_HOME: home,
            DIMSUM_DATABASE_URL: database.url,
            DIMSUM_SECRET_KEY: randomBytes(32).toString("base64"),
          },
        }),
      );
      try {
        const log = memoryLog();
        const server = await startServer({
          publicRoutes: [mountHealthRoutes({ database: () => storage.ping(), log })],
        });
        expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({
          status: "ready",
          checks: { database: "ok" },
        });
        // Dropping the database ends every connection to it (WITH (FORCE)); new ones are refused.
        await database.drop();
        const down = await fetch(`${server.url}/readyz`);
        expect(down.status).toBe(503);
        const text = await down.text();
        expect(JSON.parse(text)).toEqual({ status: "unready", checks: { database: "unreachable" } });
        // The probe's answer never carries the database URL; the log says what failed.
        expect(text).not.toContain("postgres");
        expect(log.lines.join("\n")).toContain("readiness: the database does not answer");
      } finally {
        await storage.close().catch(() => undefined);
        await database.drop();
      }
    },
  );
});
