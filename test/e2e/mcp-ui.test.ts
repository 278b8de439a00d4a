/**
 * Settings → MCP servers in real headless Chromium against a real server with a local
 * OAuth-protected MCP server (SDK-built, 127.0.0.1): the owner signs in with their own account
 * ("Connect" opens the authorization server in a new tab, which redirects to the Dimsum server),
 * the section shows the connection and its tools, and "Sign out" revokes it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import { mcpSignIns } from "../../src/server/compose.js";
import { SqliteMcpCredentials } from "../../src/server/settings/mcp-credential-store.js";
// @ts-expect-error: a plain .mjs fixture without type declarations
import { startOAuthMcpServer } from "../mcp/fixtures/oauth-mcp-server.mjs";
import { flow, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

interface OAuthFixture {
  url: string;
  counts: { authorizations: number; revocations: number };
  stop(): Promise<void>;
}

const PASSWORD = "owner-password-1";
const oauth = (await startOAuthMcpServer()) as OAuthFixture;

describe("Settings → MCP servers", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack(
    {
      before: () => resetArtifacts("mcp"),
      server: {
        mcp: (home, db) => {
          writeFileSync(
            join(home, "mcp.json"),
            JSON.stringify({ mcpServers: { notes: { url: oauth.url, oauth: {} } } }),
          );
          return new McpServerPool(
            loadMcpConfig({ home, cwd: home, env: {} }),
            {},
            {
              personalCredentials: mcpSignIns(new SqliteMcpCredentials(db), home),
            },
          );
        },
      },
    },
    (stack) => {
      page = stack.page;
      log = stack.log;
      server = stack.server;
    },
  );
  afterAll(async () => {
    await oauth.stop();
  });

  it("signs in with the browser flow, shows the tools, and signs out", async () => {
    await flow(page, log, server.logLines, "mcp/sign-in", async () => {
      await setUpOwner(page, server.url, PASSWORD);
      await page.getByTestId("nav-settings").click();
      // Settings opens on Providers; MCP servers has its own tab.
      await page.getByTestId("settings-tab-mcp").click();
      const entry = page.locator('[data-testid="mcp-signin"][data-mcp="notes"]');
      await entry.waitFor();
      expect(await entry.getByTestId("mcp-signin-status").textContent()).toBe("not signed in");
      const popup = page.context().waitForEvent("page");
      await entry.getByTestId("mcp-signin-button").click();
      const tab = await popup;
      await tab.getByText("Signed in to notes").waitFor();
      await tab.close();
      await page.locator('[data-testid="mcp-signin"][data-mcp="notes"][data-status="connected"]').waitFor();
      expect(await entry.getByTestId("mcp-signin-status").textContent()).toBe("signed in");
      expect(await entry.textContent()).toContain("3 tools");
      expect(oauth.counts.authorizations).toBe(1);
    });
    await flow(page, log, server.logLines, "mcp/sign-out", async () => {
      const before = oauth.counts.revocations;
      const entry = page.locator('[data-testid="mcp-signin"][data-mcp="notes"]');
      await entry.getByTestId("mcp-signout").click();
      await page
        .locator('[data-testid="mcp-signin"][data-mcp="notes"][data-status="disconnected"]')
        .waitFor();
      expect(oauth.counts.revocations).toBe(before + 2);
    });
  }, 90_000);
});
