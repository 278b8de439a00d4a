/**
 * An OAuth-protected MCP server used from the web UI, in real headless Chromium against a real
 * server and a local OAuth-protected MCP server (SDK-built, 127.0.0.1): the person connects in
 * Settings → MCP servers, their agent uses the server's tool in the chat; an expired access token is
 * refreshed on the next call without the person noticing; a tool that needs a wider scope fails
 * with "needs more access", the chat (under the failed call) and Settings offer to connect again with
 * that scope, and the call then works; tokens the authorization server revoked make the next call ask to connect; signing out revokes the tokens at the authorization server and deletes the stored sign-in,
 * and the agent no longer has the server's tools.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import { afterAll, describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../src/mcp/config.js";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import { mcpSignIns } from "../../src/server/compose.js";
import { SqliteMcpCredentials } from "../../src/server/settings/mcp-credential-store.js";
import type { Database } from "../../src/store/database.js";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-types.js";
// @ts-expect-error: a plain .mjs fixture without type declarations
import { startOAuthMcpServer } from "../mcp/fixtures/oauth-mcp-server.mjs";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

interface OAuthFixture {
  url: string;
  counts: { authorizations: number; refreshes: number; revocations: number; scopes: string[] };
  notes: string[];
  issued: string[];
  expireAccessTokens(): void;
  revokeEverything(): void;
  stop(): Promise<void>;
}

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const SHOTS = "mcp-oauth";
const oauth = (await startOAuthMcpServer()) as OAuthFixture;
const scripts = new AgentScripts();
/** Tool names the model was offered, request by request. */
const offered: string[][] = [];

let server: E2eServer;
let page: Page;
let log: PageLog;
let database: Database;
let channelPath = "";

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const entry = () => page.locator('[data-testid="mcp-signin"][data-mcp="notes"]');
/** The connect action under the last answer's failed call. */
const chatAction = (state: "needed" | "connected") =>
  page
    .locator('[data-testid="message"]')
    .last()
    .locator(`[data-testid="mcp-connect-action"][data-mcp="notes"][data-state="${state}"]`);

/** The tool's result as the model saw it, said back. */
function sayToolResult(request: RecordedRequest): FakeTurn {
  return { text: `The tool said: ${lastToolResult(request)}` };
}

function recordTools(request: RecordedRequest): FakeTurn {
  const tools = (request.body as { tools?: Array<{ function?: { name?: string } }> }).tools ?? [];
  offered.push(tools.map((t) => t.function?.name ?? ""));
  return scripts.turn(request);
}

async function api(method: "GET" | "POST", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

async function resize(size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await animationsSettled(page);
}

/** Both sizes, with `focus` (default: the chat's end) in view; the phone layout must not scroll sideways. */
async function shots(name: string, focus?: Locator): Promise<void> {
  const show = async () => {
    if (focus) await focus.scrollIntoViewIfNeeded();
    else
      await page.evaluate(() => {
        const list = document.querySelector('[data-testid="message-list"]');
        if (list) list.scrollTop = list.scrollHeight;
      });
  };
  await resize(WIDE);
  await show();
  await screenshot(page, `${SHOTS}/${name}-1440`);
  await resize(PHONE);
  await show();
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
  await screenshot(page, `${SHOTS}/${name}-390`);
  await resize(WIDE);
}

async function openMcpSettings(): Promise<void> {
  await byTest("nav-settings").click();
  await byTest("settings-tab-mcp").click();
  await entry().waitFor();
}

/** Clicks Connect, plays the person in the authorization server's tab, and waits for "signed in". */
async function connect(): Promise<void> {
  const popup = page.context().waitForEvent("page");
  await entry().getByTestId("mcp-signin-button").click();
  const tab = await popup;
  await tab.getByText("Signed in to notes").waitFor();
  await tab.close();
  await page.locator('[data-testid="mcp-signin"][data-mcp="notes"][data-status="connected"]').waitFor();
}

/** Posts `message` in the chat with the agent scripted to call `tool`; the agent's answer text. */
async function askAgent(message: string, tool: string, args: Record<string, unknown>): Promise<string> {
  await page.goto(server.url + channelPath);
  await byTest("composer-input").waitFor();
  scripts.add("assistant", { toolCalls: [{ name: tool, args }] }, sayToolResult);
  const before = await page.locator('[data-testid="message"]').count();
  await byTest("composer-input").fill(message);
  await byTest("composer-send").click();
  await until(() => page.locator('[data-testid="message"]').count()).toBeGreaterThanOrEqual(before + 2);
  await until(() => byTest("run-bubble").count()).toBe(0);
  const answer = page.locator('[data-testid="message"]').last();
  return text(answer.getByTestId("message-text").last());
}

/** The sealed sign-in records the server keeps for its people (in its database). */
function storedSignIns(): string[] {
  return database
    .prepare<[], { key: string }>(
      "SELECT key FROM server_settings WHERE key LIKE 'mcpCredential:%' ORDER BY key",
    )
    .all()
    .map((r) => r.key);
}

e2eStack(
  {
    before: () => resetArtifacts(SHOTS),
    llm: { defaultTurn: recordTools },
    server: {
      mcp: (dir, db) => {
        database = db;
        writeFileSync(
          join(dir, "mcp.json"),
          JSON.stringify({ mcpServers: { notes: { url: oauth.url, oauth: {} } } }),
        );
        return new McpServerPool(
          loadMcpConfig({ home: dir, cwd: dir, env: {} }),
          {},
          { personalCredentials: mcpSignIns(new SqliteMcpCredentials(db), dir) },
        );
      },
    },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);
afterAll(async () => {
  await oauth.stop();
});

describe("An OAuth-protected MCP server from the web UI", () => {
  it("connects, uses the tool, refreshes, steps up to a wider scope, and signs out", async () => {
    await step(`${SHOTS}/01-connected`, async () => {
      await resize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = (await api("POST", "/api/channels", {
        kind: "group",
        name: "Notes",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      })) as { id: string };
      channelPath = `/c/${channel.id}`;
      await openMcpSettings();
      expect(await text(entry().getByTestId("mcp-signin-status"))).toBe("not signed in");
      expect(await text(entry().getByTestId("mcp-signin-button"))).toBe("Connect");
      await connect();
      expect(await text(entry().getByTestId("mcp-signin-status"))).toBe("signed in");
      expect(oauth.counts.authorizations).toBe(1);
      expect(oauth.counts.scopes.at(-1)).toBe("notes:read offline_access");
      expect(storedSignIns()).toHaveLength(1);
      await shots("01-connected", entry());
    });

    await step(`${SHOTS}/02-tool-used`, async () => {
      expect(await askAgent("who am I there?", "notes_whoami", {})).toBe("The tool said: scopes: notes:read");
      expect(offered.at(-1)).toContain("notes_whoami");
    });

    await step(`${SHOTS}/03-refreshed`, async () => {
      oauth.expireAccessTokens();
      expect(await askAgent("and now?", "notes_whoami", {})).toBe("The tool said: scopes: notes:read");
      expect(oauth.counts.refreshes).toBe(1);
      expect(oauth.counts.authorizations).toBe(1);
      await openMcpSettings();
      expect(await text(entry().getByTestId("mcp-signin-status"))).toBe("signed in");
    });

    await step(`${SHOTS}/04-needs-more-access`, async () => {
      const said = await askAgent("write a note", "notes_write_note", { text: "dim" });
      expect(said).toContain("needs more access");
      expect(said).toContain("notes:write");
      expect(said).toContain("Settings → MCP servers");
      expect(oauth.notes).toEqual([]);
      const card = page
        .locator('[data-testid="message"]')
        .last()
        .locator('[data-testid="tool-card"][data-tool="notes_write_note"]');
      expect(await card.getAttribute("data-status")).toBe("error");
      // Under the failed call: what the server asks for, and a way to grant it right there.
      const action = chatAction("needed");
      await action.waitFor();
      expect(await text(action.locator("span").first())).toBe(
        "notes needs more access (notes:read notes:write).",
      );
      expect(await text(action.getByTestId("mcp-connect-action-button"))).toBe("Connect again");
      await shots("04-needs-more-access");
      await openMcpSettings();
      await page.locator('[data-testid="mcp-signin"][data-mcp="notes"][data-status="needs-scope"]').waitFor();
      expect(await text(entry().getByTestId("mcp-signin-status"))).toBe("needs more access");
      expect(await text(entry().getByTestId("mcp-signin-scope"))).toContain("notes:write");
      expect(await text(entry().getByTestId("mcp-signin-button"))).toBe("Connect again");
      await shots("05-settings-needs-more-access", entry());
    });

    await step(`${SHOTS}/06-stepped-up`, async () => {
      // Connecting again from the chat, under the failed call.
      await page.goto(server.url + channelPath);
      const popup = page.context().waitForEvent("page");
      await chatAction("needed").getByTestId("mcp-connect-action-button").click();
      const tab = await popup;
      await tab.getByText("Signed in to notes").waitFor();
      await tab.close();
      await chatAction("connected").waitFor();
      expect(await text(chatAction("connected"))).toBe("✓ notes is connected — ask again to retry.");
      expect(oauth.counts.authorizations).toBe(2);
      expect(oauth.counts.scopes.at(-1)).toContain("notes:write");
      expect(await askAgent("write it now", "notes_write_note", { text: "dim" })).toBe(
        "The tool said: stored note 1",
      );
      expect(oauth.notes).toEqual(["dim"]);
      await shots("06-stepped-up");
      await openMcpSettings();
      expect(await text(entry().getByTestId("mcp-signin-status"))).toBe("signed in");
    });

    await step(`${SHOTS}/07-revoked-by-server`, async () => {
      // An admin of the authorization server revokes every token: the next call asks to connect.
      oauth.revokeEverything();
      const said = await askAgent("who am I now?", "notes_whoami", {});
      expect(said).toContain('MCP server "notes" needs you to sign in');
      expect(said).toContain("connect it again in Settings → MCP servers");
      expect(await text(chatAction("needed").locator("span").first())).toBe("notes needs you to sign in.");
      expect(await text(chatAction("needed").getByTestId("mcp-connect-action-button"))).toBe("Connect");
      await openMcpSettings();
      await page
        .locator('[data-testid="mcp-signin"][data-mcp="notes"]:not([data-status="connected"])')
        .waitFor();
      expect(await text(entry().getByTestId("mcp-signin-button"))).toBe("Connect");
      await shots("07-revoked-by-server", entry());
      // A fresh sign-in asks for the server's default scope again.
      await connect();
      expect(await askAgent("and now?", "notes_whoami", {})).toBe("The tool said: scopes: notes:read");
    });

    await step(`${SHOTS}/08-signed-out`, async () => {
      await openMcpSettings();
      const before = oauth.counts.revocations;
      await entry().getByTestId("mcp-signout").click();
      await page
        .locator('[data-testid="mcp-signin"][data-mcp="notes"][data-status="disconnected"]')
        .waitFor();
      expect(await text(entry().getByTestId("mcp-signin-button"))).toBe("Connect");
      // The refresh and access tokens were revoked at the authorization server, the file is gone.
      expect(oauth.counts.revocations).toBe(before + 2);
      expect(storedSignIns()).toEqual([]);
      for (const token of oauth.issued) {
        const res = await fetch(oauth.url, {
          method: "POST",
          headers: {
            authorization: `Bearer ${token}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
        expect(res.status).toBe(401);
      }
      await shots("08-signed-out", entry());
      // The agent's next run has no tools of the server; calling one fails as unknown.
      scripts.add("assistant", { toolCalls: [{ name: "notes_whoami", args: {} }] }, sayToolResult);
      await page.goto(server.url + channelPath);
      await byTest("composer-input").fill("who am I now?");
      await byTest("composer-send").click();
      await until(() => byTest("run-bubble").count()).toBe(0);
      expect(offered.at(-1)?.some((name) => name.startsWith("notes_"))).toBe(false);
    });
  }, 120_000);
});
