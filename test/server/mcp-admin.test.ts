/**
 * Settings → MCP servers over HTTP: owners and admins add a stdio server (a real process from npm)
 * whose tools reach the catalogue at once, remove it again, and the saved servers come back when
 * the server is built anew over the same home. Members are refused; bad names and private URLs too.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CatalogueEntry } from "../../src/capabilities/index.js";
import { loadConfig } from "../../src/config/load-config.js";
import { McpServerPool, type McpServerView } from "../../src/mcp/server-pool.js";
import { buildMcp } from "../../src/server/compose.js";
import { openSecretBox } from "../../src/server/settings/secret-box.js";
import { SettingsStore } from "../../src/server/settings/settings-store.js";
import { openDatabase } from "../../src/store/database.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { call, memoryLog, type Session, withUsers } from "./helpers.js";
import { expectJson, startTeamServer } from "./team-helpers.js";

const SECRET = "tok-very-secret-value-42";

async function toolNames(url: string, session: Session): Promise<string[]> {
  const res = await call(url, "/api/tools", { session });
  return (await expectJson<CatalogueEntry[]>(res, 200)).map((e) => e.name);
}

describe("POST /api/mcp and DELETE /api/mcp/:name", () => {
  it("adds a stdio server whose tools agents get at once, keeps it over a restart, removes it", async () => {
    let pool: McpServerPool | undefined;
    const s = await startTeamServer({
      mcp: () => {
        pool = new McpServerPool([], process.env);
        return pool;
      },
    });
    try {
      const { owner, users } = await withUsers(s.url, ["member"]);
      const member = users.member!;
      const stdio = {
        name: "ev",
        transport: "stdio",
        command: process.execPath,
        args: [EVERYTHING, "stdio"],
        env: { EV_TOKEN: SECRET },
      };

      const forbidden = await call(s.url, "/api/mcp", { session: member, body: stdio });
      expect(forbidden.status).toBe(403);

      const added = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp", { session: owner, body: stdio }),
        201,
      );
      expect(added).toMatchObject({ name: "ev", transport: "stdio", status: "connected", removable: true });
      expect(added.tools).toBeGreaterThan(0);
      expect(JSON.stringify(added)).not.toContain(SECRET);
      const listed = await call(s.url, "/api/mcp", { session: owner });
      expect(await listed.text()).not.toContain(SECRET);
      expect(await toolNames(s.url, owner)).toContain("ev_echo");

      const twice = await call(s.url, "/api/mcp", { session: owner, body: stdio });
      expect(twice.status).toBe(409);
      expect(((await twice.json()) as { error: { message: string } }).error.message).toContain(
        "already exists",
      );

      // A restart over the same home: the saved server is part of the new pool, its env decrypted.
      const stored = s.db
        .prepare("SELECT value_json FROM server_settings WHERE key = 'mcpServers'")
        .get() as {
        value_json: string;
      };
      expect(stored.value_json).not.toContain(SECRET);
      const db = openDatabase(join(s.home, "dimsum.db"));
      const again = await buildMcp(
        loadConfig({ cwd: s.home, env: { DIMSUM_HOME: s.home } }),
        s.home,
        memoryLog(),
        new SettingsStore(db, openSecretBox(s.home)),
      );
      try {
        expect(again?.list().map((v) => [v.name, v.removable])).toEqual([["ev", true]]);
        await again?.startAll();
        expect(again?.registry.names()).toContain("ev_echo");
        const config = (await new SettingsStore(db, openSecretBox(s.home)).mcp.configs())[0];
        expect(config?.transport === "stdio" ? config.env : {}).toEqual({ EV_TOKEN: SECRET });
      } finally {
        await again?.close();
        db.close();
      }

      expect((await call(s.url, "/api/mcp/ev", { session: member, method: "DELETE" })).status).toBe(403);
      expect((await call(s.url, "/api/mcp/ev", { session: owner, method: "DELETE" })).status).toBe(204);
      expect(await toolNames(s.url, owner)).not.toContain("ev_echo");
      expect(
        await expectJson<McpServerView[]>(await call(s.url, "/api/mcp", { session: owner }), 200),
      ).toEqual([]);
      expect(await new SettingsStore(s.db, openSecretBox(s.home)).mcp.configs()).toEqual([]);
      expect((await call(s.url, "/api/mcp/ev", { session: owner, method: "DELETE" })).status).toBe(404);
    } finally {
      await pool?.close();
    }
  });

  it("refuses bad names, private and loopback URLs, and removing mcp.json's servers", async () => {
    let pool: McpServerPool | undefined;
    const s = await startTeamServer({
      mcp: () => {
        pool = new McpServerPool(
          [
            {
              name: "fromfile",
              transport: "stdio",
              command: process.execPath,
              args: ["-e", ""],
              env: {},
              enabled: false,
              include: [],
              exclude: [],
              source: "mcp.json",
            },
          ],
          process.env,
        );
        return pool;
      },
    });
    try {
      const { owner } = await withUsers(s.url);
      const refuse = async (body: unknown, status: number) => {
        const res = await call(s.url, "/api/mcp", { session: owner, body });
        expect(res.status).toBe(status);
        return ((await res.json()) as { error: { message: string; hint?: string } }).error;
      };
      const bad = await refuse({ name: "Bad Name!", transport: "stdio", command: "node", args: [] }, 400);
      expect(bad.message).toContain('MCP server name "Bad Name!" is not allowed');
      expect(bad.message).toContain("lowercase letters, digits, _ or -");
      expect(
        (await refuse({ name: "fromfile", transport: "stdio", command: "node" }, 409)).message,
      ).toContain("already exists");
      for (const url of [
        "http://127.0.0.1:9/mcp",
        "http://10.1.2.3/mcp",
        "http://[::1]:3000/mcp",
        "http://localhost/mcp",
      ]) {
        const error = await refuse({ name: "remote", url }, 400);
        expect(error.message).toMatch(/^MCP server URL .* is refused: .* is a \w+ address/);
        expect(error.message).toContain("tools.fetch.allowPrivateNetwork");
      }
      expect((await refuse({ name: "remote", url: "ftp://example.com/x" }, 400)).message).toContain(
        "not an http(s) URL",
      );
      const fromFile = await call(s.url, "/api/mcp/fromfile", { session: owner, method: "DELETE" });
      expect(fromFile.status).toBe(409);
      expect(await fromFile.text()).toContain("mcp.json");
      expect(pool?.list().map((v) => v.name)).toEqual(["fromfile"]);
    } finally {
      await pool?.close();
    }
  });
});
