/**
 * Every Settings tab in Simplified Chinese, in real headless Chromium against a real server and SQLite
 * file: Providers, API tokens (with a created token), MCP (with the add form for a command and for a
 * remote URL), Remote agents (added through the form, checked against a real A2A agent, and its edit
 * form open), Shell, People, Notifications and Spend, each at 1440×900 and 390×844: no console error,
 * nothing scrolls sideways, and no visible text, placeholder, title or ARIA label equals an English
 * catalogue string. Screenshots in test-artifacts/e2e/i18n-settings/.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import { en } from "../../web/src/i18n/en.js";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { AgentScripts } from "../team/harness.js";
import {
  flow,
  PageLog as Log,
  type PageLog,
  resetArtifacts,
  screenshot,
  sidewaysOverflow,
} from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const TIMEOUT_MS = 120_000;
const PASSWORD = "owner-password-1";
const TOKEN = "remote-secret-token";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const scripts = new AgentScripts();
let server: E2eServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let log: PageLog;
let remote: RemoteA2aAgent;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

/** Console errors, but the 401 of the session check a signed-out page makes on load. */
function errors(pageLog: PageLog): string[] {
  return pageLog.errors().filter((line) => !line.includes("status of 401"));
}

/** Every English string of the catalogue (each plural form too), as a page would show it. */
const ENGLISH = new Set(
  Object.values(en)
    .flatMap((m) => (typeof m === "string" ? [m] : Object.values(m)))
    .filter((text) => !text.includes("{") && /[A-Za-z]{3}/.test(text)),
);

/** The visible text nodes, placeholders, titles and ARIA labels that are exactly an English catalogue string. */
function englishOnPage(target: Page): Promise<string[]> {
  return target.evaluate(
    (english: string[]) => {
      const wanted = new Set(english);
      const found: string[] = [];
      const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = (node.textContent ?? "").trim();
        const parent = node.parentElement;
        if (!text || !parent || !wanted.has(text)) continue;
        if (parent.closest("code, pre, kbd, option, .visually-hidden")) continue;
        if (parent.offsetParent === null && getComputedStyle(parent).position !== "fixed") continue;
        found.push(text);
      }
      for (const el of Array.from(
        document.querySelectorAll<HTMLElement>("[placeholder], [aria-label], [title]"),
      )) {
        for (const name of ["placeholder", "aria-label", "title"]) {
          const value = el.getAttribute(name)?.trim();
          if (value && wanted.has(value)) found.push(`${name}=${value}`);
        }
      }
      return found;
    },
    [...ENGLISH],
  );
}

/** At both sizes: a screenshot, nothing sideways, no English catalogue string. */
async function check(name: string): Promise<void> {
  for (const [size, viewport] of [
    ["wide", WIDE],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await until(() => sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await englishOnPage(page), `${name} at ${size}`).toEqual([]);
    // The side panel slides away when the viewport narrows: the screenshot waits out its transition.
    if (size === "phone") await page.waitForTimeout(500);
    await screenshot(page, `i18n-settings/${name}-${size}`);
  }
  await page.setViewportSize(WIDE);
}

/** Opens a Settings tab by its link and waits for what it shows. */
async function openTab(tab: string, shows: string): Promise<void> {
  await byTest(`settings-tab-${tab}`).click();
  await byTest(shows).waitFor();
}

beforeAll(async () => {
  remote = await startRemoteA2aAgent(TOKEN);
});

e2eStack(
  {
    before: () => resetArtifacts("i18n-settings"),
    llm: { defaultTurn: scripts.turn },
    server: {
      configFile: { tools: { fetch: { allowPrivateNetwork: true } } },
      mcp: () => new McpServerPool([], process.env),
    },
  },
  async (stack) => {
    ({ server, browser } = stack);
    context = await browser.newContext({ viewport: WIDE, locale: "zh-CN" });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    log = new Log(page);
  },
);
afterAll(async () => remote?.close());

describe("the Settings tabs in Chinese", () => {
  it(
    "every tab, its forms and its results show in Chinese at both sizes",
    async () => {
      await step("i18n-settings/01-setup", async () => {
        await page.goto(server.url);
        await byTest("setup-form").waitFor();
        await byTest("login-username").fill("laowang");
        await byTest("login-password").fill(PASSWORD);
        await byTest("setup-confirm").fill(PASSWORD);
        await byTest("login-submit").click();
        await byTest("home-page").waitFor();
        await byTest("nav-settings").click();
      });
      await step("i18n-settings/02-providers", async () => {
        await openTab("providers", "settings-provider-list");
        expect(await byTest("settings-provider-list").locator("h3").textContent()).toBe("模型服务商");
        await check("providers");
      });
      await step("i18n-settings/03-tokens", async () => {
        await openTab("tokens", "settings-tokens");
        await byTest("token-name").fill("脚本");
        await byTest("token-create").click();
        await byTest("token-created").waitFor();
        await byTest("token-row").first().waitFor();
        expect(await byTest("token-created").locator("p").textContent()).toBe(
          "请立即复制此令牌——它不会再次显示。",
        );
        await check("tokens");
      });
      await step("i18n-settings/04-mcp", async () => {
        await openTab("mcp", "mcp-add-form");
        await check("mcp-stdio");
        await byTest("mcp-add-transport").selectOption("remote");
        await byTest("mcp-add-oauth").waitFor();
        await check("mcp-remote");
      });
      await step("i18n-settings/05-remote-agents", async () => {
        await openTab("remote-agents", "remote-agent-add-form");
        await check("remote-agents-empty");
        await byTest("remote-agent-add-name").fill("order-desk");
        await byTest("remote-agent-add-url").fill(remote.url);
        await byTest("remote-agent-add-token").fill(TOKEN);
        await byTest("remote-agent-add-submit").click();
        await until(async () => (await byTest("remote-agent-added").textContent()) ?? "").toContain(
          "已添加“order-desk”（令牌已保存）",
        );
        const added = page.locator('[data-remote-agent="order-desk"]');
        await added.getByTestId("remote-agent-check").click();
        await until(
          async () => (await added.getByTestId("remote-agent-check-result").textContent()) ?? "",
        ).toContain("可以连接");
        await added.getByTestId("remote-agent-edit").click();
        await added.getByTestId("remote-agent-edit-form").waitFor();
        await check("remote-agents-edit");
      });
      await step("i18n-settings/06-shell", async () => {
        await openTab("shell", "settings-tabs");
        await check("shell");
      });
      await step("i18n-settings/07-people", async () => {
        await openTab("people", "settings-users");
        await byTest("user-add-name").fill("xiaoli");
        await byTest("user-add-password").fill("member-password-1");
        await byTest("user-add-submit").click();
        await page.locator('[data-testid="user-row"][data-username="xiaoli"]').waitFor();
        await check("people");
      });
      await step("i18n-settings/08-notifications", async () => {
        await openTab("notifications", "settings-notifications");
        await check("notifications");
      });
      await step("i18n-settings/09-spend", async () => {
        await openTab("spend", "spend-section");
        await byTest("spend-total").waitFor();
        await check("spend");
      });
      expect(errors(log)).toEqual([]);
    },
    TIMEOUT_MS,
  );
});
