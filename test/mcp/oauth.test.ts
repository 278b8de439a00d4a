/**
 * OAuth from the CLI against a local OAuth-protected MCP server (built with the SDK, on 127.0.0.1):
 * `dimsum mcp login` with the loopback redirect, later runs using and refreshing the stored token,
 * step-up to a wider scope, logout with revocation, and a token the server revoked.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanEnv, runCli } from "../support/cli.js";
import { projectRoot } from "../support/fixtures.js";
// @ts-expect-error: a plain .mjs fixture without type declarations
import { startOAuthMcpServer } from "./fixtures/oauth-mcp-server.mjs";
import { ensureBuilt, makeTempDir, removeTempDir } from "./helpers.js";

interface OAuthFixture {
  url: string;
  counts: {
    authorizations: number;
    refreshes: number;
    revocations: number;
    registrations: number;
    scopes: string[];
  };
  notes: string[];
  expireAccessTokens(): void;
  revokeEverything(): void;
  stop(): Promise<void>;
}

/** Runs `dimsum mcp login <server> --no-browser` and plays the browser: follows the printed URL. */
function login(server: string, env: Record<string, string | undefined>, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [join(projectRoot, "bin/dimsum.js"), "mcp", "login", server, "--no-browser"],
      { cwd, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    let followed = false;
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const match = /^\s+(http\S+)$/m.exec(stdout);
      if (match?.[1] && !followed) {
        followed = true;
        void follow(match[1]).catch((err) => {
          stderr += `browser: ${String(err)}`;
        });
      }
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The authorization server approves at once and redirects to Dimsum's loopback listener. */
async function follow(url: string): Promise<void> {
  const approve = await fetch(url, { redirect: "manual" });
  const location = approve.headers.get("location");
  if (!location) throw new Error(`no redirect from ${url}: ${approve.status}`);
  const done = await fetch(location);
  if (!done.ok) throw new Error(`loopback answered ${done.status}`);
}

describe("MCP OAuth from the CLI", () => {
  let fixture: OAuthFixture;
  let env: Record<string, string | undefined>;
  let cwd: string;
  let home: string;
  const cli = (args: string[]) => runCli(args, { env, cwd, timeoutMs: 30_000 });

  beforeAll(async () => {
    ensureBuilt();
    fixture = (await startOAuthMcpServer()) as OAuthFixture;
    cwd = await makeTempDir("dimsum-oauth-cwd-");
    env = cleanEnv();
    home = env.DIMSUM_HOME as string;
    await writeFile(join(home, "mcp.json"), JSON.stringify({ mcpServers: { notes: { url: fixture.url } } }));
  }, 120_000);

  afterAll(async () => {
    await fixture?.stop();
    await removeTempDir(cwd);
    await removeTempDir(home);
  });

  it("reports that a sign-in is needed before login, without registering", async () => {
    const result = await cli(["mcp", "list"]);
    expect(result.stdout).toContain("needs you to sign in");
    expect(result.stdout).toContain("dimsum mcp login notes");
    expect(fixture.counts.registrations).toBe(0);
  }, 60_000);

  it("logs in through the loopback redirect and stores the tokens encrypted", async () => {
    const result = await login("notes", env, cwd);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Signed in to "notes" (scope: notes:read)');
    expect(fixture.counts.registrations).toBe(1);
    // offline_access was asked for, since the authorization server lists it.
    expect(fixture.counts.scopes.at(-1)).toBe("notes:read offline_access");
    const dir = join(home, "mcp-credentials");
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    const sealed = readFileSync(join(dir, files[0] as string), "utf8");
    expect(sealed.startsWith("v1:")).toBe(true);
    expect(sealed).not.toContain("at-");
    expect(sealed).not.toContain("notes:read");
  }, 60_000);

  it("later runs use the stored token, and refresh it when it expired", async () => {
    const first = await cli(["mcp", "call", "notes", "whoami"]);
    expect(first.stdout).toContain("scopes: notes:read");
    expect(fixture.counts.refreshes).toBe(0);
    fixture.expireAccessTokens();
    const second = await cli(["mcp", "call", "notes", "whoami"]);
    expect(second.stderr).toBe("");
    expect(second.stdout).toContain("scopes: notes:read");
    expect(fixture.counts.refreshes).toBe(1);
    expect(fixture.counts.authorizations).toBe(1);
  }, 60_000);

  it("step-up: a call that needs more scope asks for a new login, which then requests it", async () => {
    const denied = await cli(["mcp", "call", "notes", "write_note", '{"text":"dim"}']);
    expect(denied.code).not.toBe(0);
    expect(denied.stdout + denied.stderr).toContain("dimsum mcp login notes");
    expect(denied.stdout + denied.stderr).toContain("notes:write");
    const again = await login("notes", env, cwd);
    expect(again.code).toBe(0);
    expect(fixture.counts.scopes.at(-1)).toContain("notes:write");
    const allowed = await cli(["mcp", "call", "notes", "write_note", '{"text":"dim"}']);
    expect(allowed.stderr).toBe("");
    expect(allowed.stdout).toContain("stored note 1");
    expect(fixture.notes).toEqual(["dim"]);
  }, 90_000);

  it("a token the server revoked leads to a clear sign-in message", async () => {
    fixture.revokeEverything();
    const result = await cli(["mcp", "call", "notes", "whoami"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("dimsum mcp login notes");
  }, 60_000);

  it("logout revokes the tokens at the authorization server and deletes them", async () => {
    const relogin = await login("notes", env, cwd);
    expect(relogin.code).toBe(0);
    const before = fixture.counts.revocations;
    const result = await cli(["mcp", "logout", "notes"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("the authorization server revoked the tokens");
    expect(fixture.counts.revocations).toBe(before + 2);
    expect(readdirSync(join(home, "mcp-credentials"))).toHaveLength(0);
    const after = await cli(["mcp", "call", "notes", "whoami"]);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain("dimsum mcp login notes");
    expect(existsSync(join(home, "secret.key"))).toBe(true);
  }, 90_000);
});
