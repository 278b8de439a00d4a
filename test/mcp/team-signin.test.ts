/**
 * Per-person MCP sign-ins on the team server: each member connects their own account through
 * `/api/mcp/:name/signin` (the Dimsum server receives the redirect), their runs get that server's
 * tools and nobody else's do, the sign-in survives a restart (sealed per person in the database),
 * and signing out revokes it at the authorization server.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool, type McpServerView } from "../../src/mcp/server-pool.js";
import { mcpSignIns } from "../../src/server/compose.js";
import { SqliteMcpCredentials } from "../../src/server/settings/mcp-credential-store.js";
import type { Database } from "../../src/store/database.js";
import { call, withUsers } from "../server/helpers.js";
import { expectJson, startTeamServer } from "../server/team-helpers.js";
// @ts-expect-error: a plain .mjs fixture without type declarations
import { startOAuthMcpServer } from "./fixtures/oauth-mcp-server.mjs";

interface OAuthFixture {
  url: string;
  counts: { authorizations: number; revocations: number };
  stop(): Promise<void>;
}

/** The browser: the authorization server approves at once; the redirect goes to the Dimsum server. */
async function approve(url: string, cookie: string): Promise<Response> {
  const answer = await fetch(url, { redirect: "manual" });
  const location = answer.headers.get("location");
  if (!location) throw new Error(`no redirect: ${answer.status}`);
  return fetch(location, { headers: { cookie } });
}

describe("per-person MCP sign-in on the team server", () => {
  it("lets each member sign in with their own account, and revokes on sign-out", async () => {
    const oauth = (await startOAuthMcpServer()) as OAuthFixture;
    let pool: McpServerPool | undefined;
    let home = "";
    let database: Database | undefined;
    const s = await startTeamServer({
      mcp: (dir, db) => {
        home = dir;
        database = db;
        writeFileSync(
          join(dir, "mcp.json"),
          JSON.stringify({ mcpServers: { notes: { url: oauth.url, oauth: {} } } }),
        );
        const servers = loadMcpConfig({ home: dir, cwd: dir, env: {} });
        pool = new McpServerPool(
          servers,
          {},
          { personalCredentials: mcpSignIns(new SqliteMcpCredentials(db), dir) },
        );
        return pool;
      },
    });
    try {
      const { owner, users } = await withUsers(s.url, ["member"]);
      const member = users.member as typeof owner;
      const mine = await expectJson<McpServerView[]>(
        await call(s.url, "/api/mcp/mine", { session: member }),
        200,
      );
      expect(mine.map((v) => [v.name, v.status, v.perPerson])).toEqual([["notes", "disconnected", true]]);

      const started = await expectJson<{ authorizationUrl: string }>(
        await call(s.url, "/api/mcp/notes/signin", { session: member, method: "POST" }),
        200,
      );
      expect(started.authorizationUrl).toContain("code_challenge=");
      expect(started.authorizationUrl).toContain(encodeURIComponent(`${s.url}/api/mcp/oauth/callback`));
      const callback = await approve(started.authorizationUrl, member.cookie);
      expect(callback.status).toBe(200);
      expect(await callback.text()).toContain("Signed in to notes");

      const memberId = member.userId;
      const tools = await pool?.personalTools(memberId);
      expect(tools?.map((t) => t.name)).toContain("notes_whoami");
      expect(await pool?.personalTools(owner.userId)).toEqual([]);
      const view = await expectJson<McpServerView[]>(
        await call(s.url, "/api/mcp/mine", { session: member }),
        200,
      );
      expect(view[0]?.status).toBe("connected");

      // Stored sealed, per person: a fresh pool (a restart) connects with the stored sign-in.
      const db = database as Database;
      const sealed = db
        .prepare("SELECT value_json FROM server_settings WHERE key LIKE 'mcpCredential:%'")
        .all() as Array<{ value_json: string }>;
      expect(sealed).toHaveLength(1);
      expect(sealed[0]?.value_json).toMatch(/^"v1:/);
      expect(sealed[0]?.value_json).not.toContain("access_token");
      expect(existsSync(join(home, "mcp-credentials"))).toBe(false);
      const restarted = new McpServerPool(
        loadMcpConfig({ home, cwd: home, env: {} }),
        {},
        {
          personalCredentials: mcpSignIns(new SqliteMcpCredentials(db), home),
        },
      );
      try {
        expect((await restarted.personalTools(memberId)).map((t) => t.name)).toContain("notes_whoami");
      } finally {
        await restarted.close();
      }

      const revokedBefore = oauth.counts.revocations;
      const out = await expectJson<McpServerView>(
        await call(s.url, "/api/mcp/notes/signin", { session: member, method: "DELETE" }),
        200,
      );
      expect(out.status).toBe("disconnected");
      expect(oauth.counts.revocations).toBe(revokedBefore + 2);
      expect(await pool?.personalTools(memberId)).toEqual([]);
      // Members list the servers they may see (mcp.json's: everyone), without others' process details.
      const listed = await call(s.url, "/api/mcp", { session: member });
      expect(listed.status).toBe(200);
      const views = (await listed.json()) as Array<{ name: string; pid?: number }>;
      expect(views.map((v) => v.name)).toContain("notes");
      expect(views.every((v) => v.pid === undefined)).toBe(true);
    } finally {
      await pool?.close();
      await oauth.stop();
    }
  }, 120_000);
});

describe("the issuer of the web sign-in's authorization response (RFC 9207)", () => {
  /** Signs the owner in to a server whose authorization server sends `iss`; the callback's answer. */
  async function signInWith(
    issuer: true | string,
  ): Promise<{ status: number; text: string; tools: string[] }> {
    const oauth = (await startOAuthMcpServer({ issuer })) as OAuthFixture;
    let pool: McpServerPool | undefined;
    const s = await startTeamServer({
      mcp: (dir, db) => {
        writeFileSync(
          join(dir, "mcp.json"),
          JSON.stringify({ mcpServers: { notes: { url: oauth.url, oauth: {} } } }),
        );
        pool = new McpServerPool(
          loadMcpConfig({ home: dir, cwd: dir, env: {} }),
          {},
          { personalCredentials: mcpSignIns(new SqliteMcpCredentials(db), dir) },
        );
        return pool;
      },
    });
    try {
      const { owner } = await withUsers(s.url);
      const started = await expectJson<{ authorizationUrl: string }>(
        await call(s.url, "/api/mcp/notes/signin", { session: owner, method: "POST" }),
        200,
      );
      const callback = await approve(started.authorizationUrl, owner.cookie);
      const tools = ((await pool?.personalTools(owner.userId)) ?? []).map((t) => t.name);
      return { status: callback.status, text: await callback.text(), tools };
    } finally {
      await pool?.close();
      await oauth.stop();
    }
  }

  it("forwards the authorization server's `iss` to the code exchange, which accepts its own issuer", async () => {
    const signedIn = await signInWith(true);
    expect(signedIn.text).toContain("Signed in to notes");
    expect(signedIn.status).toBe(200);
    expect(signedIn.tools).toContain("notes_whoami");
  });

  it("refuses a sign-in whose `iss` names another authorization server (a mix-up)", async () => {
    const mixedUp = await signInWith("https://attacker.example/");
    expect(mixedUp.status).toBeGreaterThanOrEqual(400);
    expect(mixedUp.text).not.toContain("Signed in");
    expect(mixedUp.tools).toEqual([]);
  });
});
