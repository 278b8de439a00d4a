/**
 * Settings → MCP servers → Add server in real headless Chromium against a real server: the owner
 * adds a stdio server (a real MCP server process from npm) through the form, sees it connected with
 * its tools, has a bad name refused inline, and removes it through the in-app confirm dialog.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { flow, type PageLog, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";

describe("Settings → MCP servers → Add server", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack(
    {
      before: () => resetArtifacts("mcp-admin"),
      server: { mcp: () => new McpServerPool([], process.env) },
    },
    (stack) => {
      page = stack.page;
      log = stack.log;
      server = stack.server;
    },
  );

  it("adds a stdio server through the form and removes it", async () => {
    await flow(page, log, server.logLines, "mcp-admin/add", async () => {
      await setUpOwner(page, server.url, PASSWORD);
      await page.getByTestId("nav-settings").click();
      await page.getByTestId("settings-tab-mcp").click();
      const form = page.getByTestId("mcp-add-form");
      await form.waitFor();
      await page.getByTestId("mcp-add-name").fill("Bad Name");
      await page.getByTestId("mcp-add-command").fill(process.execPath);
      await page.getByTestId("mcp-add-submit").click();
      const error = page.getByTestId("mcp-add-error");
      await error.waitFor();
      expect(await error.textContent()).toContain('MCP server name "Bad Name" is not allowed');

      await page.getByTestId("mcp-add-name").fill("everything");
      await page.getByTestId("mcp-add-args").fill(`${EVERYTHING}\nstdio`);
      await page.getByTestId("mcp-add-env").fill("EV_TOKEN=secret-123");
      await page.getByTestId("mcp-add-submit").click();
      const entry = page.locator(
        '[data-testid="mcp-server"][data-mcp="everything"][data-status="connected"]',
      );
      await entry.waitFor();
      expect(await entry.textContent()).toMatch(/\d+ tools/);
      expect(await page.getByTestId("mcp-add-error").count()).toBe(0);
      expect(await page.getByTestId("settings-mcp").textContent()).not.toContain("secret-123");
    });
    await flow(page, log, server.logLines, "mcp-admin/remove", async () => {
      const entry = page.locator('[data-testid="mcp-server"][data-mcp="everything"]');
      await entry.getByTestId("mcp-remove").click();
      await page.getByTestId("confirm-dialog").getByTestId("confirm-ok").click();
      await entry.waitFor({ state: "detached" });
      expect(await page.locator('[data-testid="mcp-server"]').count()).toBe(0);
    });
  }, 90_000);
});
