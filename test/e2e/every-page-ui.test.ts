/**
 * Every page of the web UI at 1440×900 and 390×844, in real headless Chromium against a real server
 * (team, schedules, connectors) whose chats hold real answers from the scripted fake LLM: each page
 * loads at that width without a console error, and nothing on it scrolls sideways at either width.
 * The screenshots (`test-artifacts/e2e/pages/<page>-<width>.png`) are the ones to look at before
 * calling UI work done.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { McpServerPool } from "../../src/mcp/server-pool.js";
import type { ChannelRecord } from "../../src/team/types.js";
import { SETTINGS_SECTIONS } from "../../web/src/state/route.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { AgentScripts } from "../team/harness.js";
import { flow, type PageLog, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const scripts = new AgentScripts();
let page: Page;
let log: PageLog;
let server: E2eServer;
let owner: Session;
let direct: ChannelRecord;
let group: ChannelRecord;

const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

const ANSWER = [
  "Here is the plan, with a table and a long command:",
  "",
  "| Step | Owner | Notes |",
  "| --- | --- | --- |",
  "| Draft | @writer | A first version of the launch announcement for the whole company |",
  "| Review | @editor | Checks tone, facts and every link before it goes out |",
  "",
  "```bash",
  "npx dimsum run --model openai:gpt-4o-mini --attach ./reports/quarterly-numbers-2026-q3.pdf 'summarise this report'",
  "```",
].join("\n");

async function api<T>(path: string, body?: unknown): Promise<T> {
  const res = await call(server.url, path, { session: owner, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** Waits until the chat shows at least `count` messages. */
async function messagesIn(channelId: string, count: number): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if ((await api<unknown[]>(`/api/channels/${channelId}/messages`)).length >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`channel ${channelId} never reached ${count} messages`);
}

e2eStack(
  {
    before: () => resetArtifacts("pages"),
    // The chat's title call (one short request without an agent) gets a title, as a model would give.
    llm: {
      defaultTurn: (request) =>
        JSON.stringify(request.body).includes("Write a title")
          ? { text: "Launch plan" }
          : scripts.turn(request),
    },
    // As `dimsum serve` has them: schedules, connectors and an MCP pool (with no servers yet).
    server: { schedules: true, connectors: true, mcp: () => new McpServerPool([], process.env) },
  },
  async (stack) => {
    ({ page, log, server } = stack);
    ({ owner } = await withUsers(server.url, ["member"]));
    direct = await api<ChannelRecord>("/api/channels", {
      kind: "direct",
      name: "Assistant",
      agentIds: ["assistant"],
      userIds: [],
    });
    group = await api<ChannelRecord>("/api/channels", {
      kind: "group",
      name: "Launch crew with a rather long name for a group chat",
      leaderAgentId: "writer",
      agentIds: ["writer", "editor"],
      userIds: [],
    });
    scripts.add("assistant", { text: ANSWER });
    await api(`/api/channels/${direct.id}/messages`, { text: "Plan the launch, please." });
    await api(`/api/channels/${group.id}/messages`, { text: "@writer draft the announcement" });
    await messagesIn(direct.id, 2);
    await messagesIn(group.id, 2);
    await api("/api/schedules", {
      name: "Daily report",
      timing: { kind: "cron", expression: "0 9 * * 1-5", timezone: "Europe/Berlin" },
      target: { type: "agent", agentId: "writer", channelId: group.id, prompt: "summarise yesterday" },
    });
    await page.goto(server.url);
    await page.getByTestId("login-username").fill("alice");
    await page.getByTestId("login-password").fill("owner-password-1");
    await page.getByTestId("login-submit").click();
    await page.getByTestId("home-page").waitFor();
  },
);

/** The app's pages: the address and what shows it is there. */
function pages(): Array<{ name: string; path: string; ready: string }> {
  return [
    { name: "home", path: "/", ready: "home-page" },
    { name: "chat-direct", path: `/c/${direct.id}`, ready: "chat-page" },
    { name: "chat-group", path: `/c/${group.id}`, ready: "chat-page" },
    { name: "group-settings", path: `/c/${group.id}/settings`, ready: "channel-settings-page" },
    { name: "agents", path: "/agents", ready: "agents-page" },
    { name: "agent-editor", path: "/agents/assistant", ready: "agents-page" },
    { name: "agent-new", path: "/agents/_new", ready: "agents-page" },
    { name: "schedules", path: "/schedules", ready: "schedules-page" },
    { name: "knowledge", path: "/knowledge", ready: "knowledge-page" },
    { name: "connectors", path: "/connectors", ready: "connectors-page" },
    { name: "templates", path: "/templates", ready: "templates-page" },
    { name: "memory", path: "/memory", ready: "memory-page" },
    { name: "memory-agent", path: "/memory/assistant", ready: "memory-page" },
    // Every tab there is, so a new one is covered too.
    ...SETTINGS_SECTIONS.map((s) => ({
      name: `settings-${s}`,
      path: `/settings/${s}`,
      ready: "settings-page",
    })),
    { name: "not-found", path: "/no/such/page", ready: "not-found-page" },
  ];
}

describe("every page at both sizes", () => {
  for (const size of SIZES) {
    it(`loads every page at ${size.width} px without errors or sideways scrolling`, async () => {
      await page.setViewportSize(size);
      const overflowing: string[] = [];
      for (const { name, path, ready } of pages()) {
        await flow(page, log, server.logLines, `pages/${name}-${size.width}`, async () => {
          const errorsBefore = log.errors().length;
          await page.goto(`${server.url}${path}`);
          await page.getByTestId(ready).waitFor();
          await page.waitForLoadState("networkidle");
          // Lazy parts (Markdown, code highlighting) settle before the picture is taken.
          await page.evaluate(
            () => new Promise((resolve) => requestAnimationFrame(() => resolve(undefined))),
          );
          await screenshot(page, `pages/${name}-${size.width}`);
          const over = await sidewaysOverflow(page);
          if (over > 0) overflowing.push(`${name}: ${over} px`);
          expect(log.errors().slice(errorsBefore)).toEqual([]);
        });
      }
      expect(overflowing).toEqual([]);
    }, 120_000);
  }

  it("the sign-in page at both sizes", async () => {
    const context = await page.context().browser()?.newContext();
    if (!context) throw new Error("no browser");
    const signIn = await context.newPage();
    for (const size of SIZES) {
      await signIn.setViewportSize(size);
      await signIn.goto(server.url);
      await signIn.getByTestId("login-page").waitFor();
      await screenshot(signIn, `pages/sign-in-${size.width}`);
      expect(await sidewaysOverflow(signIn)).toBeLessThanOrEqual(0);
    }
    await context.close();
  });
});
