/**
 * The web UI in Simplified Chinese, in real headless Chromium against a real server and SQLite file,
 * agents backed by the scripted fake LLM. A browser whose language is Chinese sets the server up in
 * Chinese: `<html lang="zh-CN">`, the owner's starter agents and the template gallery in Chinese, and
 * a team created from the gallery runs its chain. The pages and dialogs translated so far are visited
 * at 1440×900 and 390×844: no console error, nothing scrolls sideways, and no visible text equals an
 * English catalogue string. An IME composition's Enter never sends; the language switch in Settings →
 * Account persists across a reload and in a second browser context of the same person.
 */
import type { Browser, BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { FlowRecord } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { en } from "../../web/src/i18n/en.js";
import { AgentScripts, agentOf, systemOf } from "../team/harness.js";
import {
  flow,
  PageLog as Log,
  type PageLog,
  pageApi,
  resetArtifacts,
  screenshot,
  sidewaysOverflow,
} from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const TIMEOUT_MS = 90_000;
const PASSWORD = "owner-password-1";
const OWNER = "laowang";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const scripts = new AgentScripts();
let server: E2eServer;
let llm: FakeLlmServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let log: PageLog;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

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

/** The visible text nodes of the page that are exactly an English catalogue string. */
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
      // Labels people read without a text node: placeholders, titles and ARIA labels.
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
    await screenshot(page, `i18n/${name}-${size}`);
  }
  await page.setViewportSize(WIDE);
}

async function chineseContext(): Promise<{ context: BrowserContext; page: Page; log: PageLog }> {
  const next = await browser.newContext({ viewport: WIDE, locale: "zh-CN" });
  const opened = await next.newPage();
  opened.setDefaultTimeout(10_000);
  return { context: next, page: opened, log: new Log(opened) };
}

e2eStack(
  {
    before: () => resetArtifacts("i18n"),
    llm: { defaultTurn: scripts.turn },
  },
  async (stack) => {
    ({ server, llm, browser } = stack);
    ({ context, page, log } = await chineseContext());
  },
);

describe("the web UI in Chinese", () => {
  it(
    "a Chinese browser sets the server up in Chinese: starters, pages and dialogs in Chinese",
    async () => {
      await step("i18n/01-setup", async () => {
        await page.goto(server.url);
        await byTest("setup-form").waitFor();
        expect(await page.evaluate(() => document.documentElement.lang)).toBe("zh-CN");
        expect(await byTest("login-submit").textContent()).toBe("创建所有者账号");
        await check("setup");
        await byTest("login-username").fill(OWNER);
        await byTest("login-password").fill(PASSWORD);
        await byTest("setup-confirm").fill(PASSWORD);
        await byTest("login-submit").click();
        await byTest("home-page").waitFor();
      });
      await step("i18n/02-home", async () => {
        // The owner's starter agents are the Chinese set.
        await until(() => byTest("home-composer-agent").locator("option").allTextContents()).toContain(
          "🥟 助手",
        );
        await check("home");
      });
      // The pages translated so far (the other settings tabs, agents, schedules, knowledge, connectors
      // and memory pages are not yet).
      const pages: Array<[string, string]> = [["nav-templates", "templates-page"]];
      for (const [nav, testId] of pages) {
        await step(`i18n/03-${testId}`, async () => {
          await byTest(nav).click();
          await byTest(testId).waitFor();
          await check(testId);
        });
      }
      await step("i18n/04-account", async () => {
        await byTest("nav-settings").click();
        await byTest("settings-tab-account").click();
        await byTest("settings-language").waitFor();
        await byTest("settings-sessions").locator(".session").first().waitFor();
        await check("settings-account");
      });
      await step("i18n/05-dialogs", async () => {
        await page.keyboard.press("Escape");
        await page.locator("body").press("?");
        await byTest("keyboard-help").waitFor();
        await check("keyboard-help");
        await page.keyboard.press("Escape");
        await page.goto(`${server.url}/no/such/page`);
        await byTest("not-found-page").waitFor();
        await check("not-found");
      });
      expect(errors(log)).toEqual([]);
    },
    TIMEOUT_MS,
  );

  it(
    "a team from the Chinese gallery runs its chain",
    async () => {
      let flowId = "";
      await step("i18n/06-gallery", async () => {
        await byTest("nav-templates").click();
        const card = byTest("template-card-writing-room");
        await card.getByText("写作室").waitFor();
        expect(await card.getByTestId("template-chain").textContent()).toBe(
          "协作链： 执笔人 → 文字编辑 → 本地化译者",
        );
        await byTest("template-create-writing-room").click();
        await page.locator('[data-testid="chat-page"][data-channel-id]').waitFor();
        await byTest("notice").filter({ hasText: "已创建“写作室”" }).waitFor();
      });
      scripts.add("wordsmith", { text: "初稿：Dimsum 现在有团队模板了。" });
      scripts.add("copyeditor", { text: "修改稿：Dimsum 现已提供团队模板。" });
      scripts.add("localizer", { text: "Dimsum now ships team templates." });
      const before = llm.requests.length;
      await step("i18n/07-flow", async () => {
        await byTest("composer-input").fill("/flow 一句话的发布说明，译成英文");
        await byTest("composer-send").click();
        const panel = byTest("flow-panel");
        await panel.waitFor();
        await until(() => panel.getAttribute("data-status")).toBe("done");
        flowId = (await panel.getAttribute("data-flow-id")) ?? "";
        await page.getByText("Dimsum now ships team templates.").first().waitFor();
      });
      const done = await pageApi<FlowRecord>(page, server.url, "GET", `/api/flows/${flowId}`);
      expect(done.steps.map((s) => [s.agentId, s.status])).toEqual([
        ["wordsmith", "completed"],
        ["copyeditor", "completed"],
        ["localizer", "completed"],
      ]);
      const requests = llm.requests.slice(before);
      expect(requests.map((r) => agentOf(r))).toEqual(["wordsmith", "copyeditor", "localizer"]);
      expect(systemOf(requests[0])).toContain("# 执笔人");
    },
    TIMEOUT_MS,
  );

  it(
    "an IME composition's Enter never sends; Enter after it does",
    async () => {
      await step("i18n/08-ime", async () => {
        const input = byTest("composer-input");
        await input.fill("");
        await input.focus();
        const sent = () => page.locator('[data-testid="message"][data-author-type="user"]').count();
        const before = await sent();
        await input.evaluate((el: HTMLTextAreaElement) => {
          el.dispatchEvent(new CompositionEvent("compositionstart", { bubbles: true, data: "" }));
        });
        await page.keyboard.insertText("你好");
        await input.evaluate((el: HTMLTextAreaElement) => {
          const enter = (init: KeyboardEventInit, keyCode?: number) => {
            const event = new KeyboardEvent("keydown", {
              key: "Enter",
              bubbles: true,
              cancelable: true,
              ...init,
            });
            if (keyCode !== undefined) Object.defineProperty(event, "keyCode", { value: keyCode });
            el.dispatchEvent(event);
          };
          // Chromium and Firefox: Enter picks the candidate while composing.
          enter({ isComposing: true });
          el.dispatchEvent(new CompositionEvent("compositionend", { bubbles: true, data: "你好" }));
          // Safari: the candidate's Enter comes after compositionend, marked only by keyCode 229.
          enter({ isComposing: false }, 229);
        });
        await page.waitForTimeout(300);
        expect(await sent()).toBe(before);
        expect(await input.inputValue()).toBe("你好");
        await input.press("Enter");
        await until(sent).toBe(before + 1);
        expect(await input.inputValue()).toBe("");
      });
    },
    TIMEOUT_MS,
  );

  it(
    "the language chosen in Settings → Account persists across a reload and in another browser",
    async () => {
      await step("i18n/09-switch", async () => {
        await page.goto(`${server.url}/settings/account`);
        await byTest("language-select").selectOption("en");
        await until(() => page.evaluate(() => document.documentElement.lang)).toBe("en");
        await until(() => byTest("settings-tab-account").textContent()).toBe("Account");
        await page.reload();
        await byTest("settings-page").waitFor();
        expect(await page.evaluate(() => document.documentElement.lang)).toBe("en");
        expect(await byTest("settings-tab-account").textContent()).toBe("Account");
      });
      // A second browser whose own language is Chinese: the person's choice wins once signed in.
      const other = await chineseContext();
      try {
        await other.page.goto(server.url);
        await other.page.getByTestId("login-form").waitFor();
        expect(await other.page.getByTestId("login-submit").textContent()).toBe("登录");
        await other.page.getByTestId("login-username").fill(OWNER);
        await other.page.getByTestId("login-password").fill(PASSWORD);
        await other.page.getByTestId("login-submit").click();
        await other.page.getByTestId("home-page").waitFor();
        await expect
          .poll(() => other.page.evaluate(() => document.documentElement.lang), { timeout: 10_000 })
          .toBe("en");
        await expect.poll(() => other.page.getByTestId("nav-settings").textContent()).toContain("Settings");
        await screenshot(other.page, "i18n/10-second-browser-english");
        expect(errors(other.log)).toEqual([]);
      } finally {
        await other.context.close();
      }
      // And back to Chinese.
      await byTest("language-select").selectOption("zh-CN");
      await until(() => byTest("settings-tab-account").textContent()).toBe("账号");
      await context.close();
    },
    TIMEOUT_MS,
  );
});
