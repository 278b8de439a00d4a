/**
 * Every page of the web UI and its main dialogs in Simplified Chinese, in real headless Chromium
 * against a real server (team, schedules, connectors, knowledge, memory) whose chats hold real
 * answers from the scripted fake LLM: home, both kinds of chat, chat settings, agents and the agent
 * editor, schedules, knowledge (with a base open), connectors (the setup steps and fields of every
 * platform), templates, memory, every Settings tab, the not-found page; the new-chat, meeting,
 * search, keyboard-help and confirm dialogs. At 1440×900 and 390×844 each shows no console error,
 * nothing scrolls sideways, and no visible text, placeholder, title or ARIA label is an English
 * catalogue string (strings the two catalogues share, such as "Webhook", aside). Screenshots in
 * test-artifacts/e2e/i18n-pages/.
 */
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { en } from "../../web/src/i18n/en.js";
import type { Message } from "../../web/src/i18n/messages.js";
import { zhCN } from "../../web/src/i18n/zh-CN.js";
import { SETTINGS_SECTIONS } from "../../web/src/state/route.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { AgentScripts } from "../team/harness.js";
import { flow, PageLog, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const scripts = new AgentScripts();
let server: E2eServer;
let context: BrowserContext;
let page: Page;
let log: PageLog;
let owner: Session;
let direct: ChannelRecord;
let group: ChannelRecord;

const byTest = (id: string) => page.getByTestId(id);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

function texts(message: Message): string[] {
  return typeof message === "string" ? [message] : Object.values(message);
}

/** Every text of the Chinese catalogue: a text both catalogues use ("Webhook", "App ID") is not English left over. */
const CHINESE = new Set(Object.values(zhCN as Record<string, Message>).flatMap(texts));

/** Every English string of the catalogue (each plural form too) that Chinese does not use as well. */
const ENGLISH = new Set(
  Object.values(en)
    .flatMap(texts)
    .filter((text) => !text.includes("{") && /[A-Za-z]{3}/.test(text) && !CHINESE.has(text)),
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
        if (parent.closest("code, pre, kbd, .msg-body, .visually-hidden")) continue;
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

/** At both sizes: no console error, nothing sideways, no English catalogue string, a screenshot. */
async function check(name: string): Promise<void> {
  for (const [size, viewport] of [
    ["wide", WIDE],
    ["phone", PHONE],
  ] as const) {
    await page.setViewportSize(viewport);
    await until(() => sidewaysOverflow(page)).toBeLessThanOrEqual(0);
    expect(await englishOnPage(page), `${name} at ${size}`).toEqual([]);
    // The side panel slides away when the viewport narrows: the screenshot waits out its transition.
    if (size === "phone") await page.waitForTimeout(400);
    await screenshot(page, `i18n-pages/${name}-${size}`);
  }
  await page.setViewportSize(WIDE);
  expect(log.errors(), name).toEqual([]);
}

/** Opens `path` at the wide size and waits for `ready` and the network to settle. */
async function visit(path: string, ready: string): Promise<void> {
  await page.setViewportSize(WIDE);
  await page.goto(`${server.url}${path}`);
  await byTest(ready).waitFor();
  await page.waitForLoadState("networkidle");
}

const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);

async function api<T>(path: string, body?: unknown, method?: string): Promise<T> {
  const res = await call(server.url, path, {
    session: owner,
    ...(body === undefined ? {} : { body }),
    ...(method ? { method } : {}),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

async function messagesIn(channelId: string, count: number): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if ((await api<unknown[]>(`/api/channels/${channelId}/messages`)).length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`channel ${channelId} never reached ${count} messages`);
}

e2eStack(
  {
    before: () => resetArtifacts("i18n-pages"),
    llm: {
      defaultTurn: (request) =>
        JSON.stringify(request.body).includes("Write a title") ? { text: "发布计划" } : scripts.turn(request),
    },
    server: { schedules: true, connectors: true, mcp: () => new McpServerPool([], process.env) },
  },
  async (stack) => {
    server = stack.server;
    ({ owner } = await withUsers(server.url, ["member"]));
    await api("/api/auth/locale", { locale: "zh-CN" }, "PUT");
    direct = await api<ChannelRecord>("/api/channels", {
      kind: "direct",
      name: "助手",
      agentIds: ["assistant"],
      userIds: [],
    });
    group = await api<ChannelRecord>("/api/channels", {
      kind: "group",
      name: "发布小组",
      leaderAgentId: "writer",
      agentIds: ["writer", "editor"],
      userIds: [],
    });
    scripts.add("assistant", { text: "好的，这是发布计划：\n\n1. 起草公告\n2. 审阅\n3. 发布" });
    await api(`/api/channels/${direct.id}/messages`, { text: "请帮我规划发布。" });
    await api(`/api/channels/${group.id}/messages`, { text: "@writer 起草公告" });
    await messagesIn(direct.id, 2);
    await messagesIn(group.id, 2);
    await api("/api/schedules", {
      name: "每日报告",
      timing: { kind: "cron", expression: "0 9 * * 1-5", timezone: "Asia/Shanghai" },
      target: { type: "agent", agentId: "writer", channelId: group.id, prompt: "总结昨天的工作" },
    });
    await api("/api/kb", { name: "handbook" });
    context = await stack.browser.newContext({ viewport: WIDE, locale: "zh-CN" });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    log = new PageLog(page);
    await page.goto(server.url);
    await byTest("login-username").fill("alice");
    await byTest("login-password").fill("owner-password-1");
    await byTest("login-submit").click();
    await byTest("home-page").waitFor();
  },
);

describe("every page and main dialog in Chinese", () => {
  it("the pages", async () => {
    expect(await page.evaluate(() => document.documentElement.lang)).toBe("zh-CN");
    const pages: Array<[string, string, string]> = [
      ["home", "/", "home-page"],
      ["chat-direct", `/c/${direct.id}`, "chat-page"],
      ["chat-group", `/c/${group.id}`, "chat-page"],
      ["group-settings", `/c/${group.id}/settings`, "channel-settings-page"],
      ["direct-settings", `/c/${direct.id}/settings`, "channel-settings-page"],
      ["agents", "/agents", "agents-page"],
      ["agent-editor", "/agents/assistant", "agents-page"],
      ["agent-new", "/agents/_new", "agents-page"],
      ["schedules", "/schedules", "schedules-page"],
      ["knowledge", "/knowledge", "knowledge-page"],
      ["connectors", "/connectors", "connectors-page"],
      ["templates", "/templates", "templates-page"],
      ["memory", "/memory", "memory-page"],
      ["memory-agent", "/memory/assistant", "memory-page"],
      ...SETTINGS_SECTIONS.map((s): [string, string, string] => [
        `settings-${s}`,
        `/settings/${s}`,
        "settings-page",
      ]),
      ["not-found", "/no/such/page", "not-found-page"],
    ];
    for (const [name, path, ready] of pages) {
      await step(`i18n-pages/${name}`, async () => {
        await visit(path, ready);
        await check(name);
      });
    }
  }, 240_000);

  it("a knowledge base opened, and every connector platform's setup steps and fields", async () => {
    await step("i18n-pages/knowledge-base", async () => {
      await visit("/knowledge", "knowledge-page");
      await byTest("kb-open").first().click();
      await byTest("kb-detail").waitFor();
      await byTest("kb-documents-empty").waitFor();
      await check("knowledge-base");
    });
    await step("i18n-pages/connectors", async () => {
      await visit("/connectors", "connectors-page");
      for (const type of ["telegram", "webhook", "feishu", "dingtalk", "wecom"]) {
        await byTest("connector-type").selectOption(type);
        await byTest("connector-guide").waitFor();
        await check(`connector-${type}`);
      }
      // The form's own checks, in Chinese.
      await byTest("connector-create-submit").click();
      await until(() => byTest("connector-error-name").textContent()).toBe("请为连接器起个名字。");
      await check("connector-errors");
    });
  }, 120_000);

  it("the main dialogs", async () => {
    await step("i18n-pages/new-chat", async () => {
      await visit("/", "home-page");
      await byTest("new-channel").click();
      await byTest("new-channel-dialog").waitFor();
      await check("new-chat-dialog");
      await page.keyboard.press("Escape");
    });
    await step("i18n-pages/search", async () => {
      await visit(`/c/${direct.id}`, "chat-page");
      await page.keyboard.press("Control+k");
      await byTest("message-search").waitFor();
      await check("search-dialog-empty");
      await byTest("search-input").fill("发布");
      await until(() => byTest("search-status").getAttribute("data-phase")).toBe("done");
      await check("search-dialog-results");
      await byTest("search-input").fill("没有这个词");
      await byTest("search-empty").waitFor();
      await check("search-dialog-none");
      await byTest("search-close").click();
    });
    await step("i18n-pages/keyboard-help", async () => {
      await visit(`/c/${direct.id}`, "chat-page");
      await byTest("nav-shortcuts").click();
      await byTest("keyboard-help").waitFor();
      await check("keyboard-help");
      await page.keyboard.press("Escape");
    });
    await step("i18n-pages/confirm", async () => {
      await visit(`/c/${direct.id}`, "chat-page");
      await byTest("message-delete").first().click({ force: true });
      await byTest("confirm-dialog").waitFor();
      await check("confirm-dialog");
      await byTest("confirm-cancel").click();
    });
    await step("i18n-pages/meeting", async () => {
      await visit(`/c/${group.id}`, "chat-page");
      await byTest("meeting-open-form").click();
      await byTest("meeting-form").waitFor();
      await check("meeting-dialog");
    });
  }, 120_000);
});
