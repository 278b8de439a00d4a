/**
 * The defects a day of use found (issue 27, items 1–12), in real headless Chromium against a real
 * server, team, scheduler and SQLite file, the agents backed by the scripted fake LLM: a group
 * without a leader says whom to mention before sending; success clears earlier errors and says what
 * was done; two chats with one agent get distinct names; nothing scrolls sideways at 390 px; the
 * New chat dialog asks for what is missing; the agent name field stops at 80 characters; an unknown
 * address shows "not found"; the composer has the caret when a chat opens; a schedule's prompt is
 * shown as the schedule's, without an Edit button.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { AgentScripts } from "../team/harness.js";
import { flow, type PageLog, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const TIMEOUT_MS = 60_000;
const LONG_NAME = `Agent ${"with a very long descriptive name ".repeat(2)}`.slice(0, 80);
const scripts = new AgentScripts();
let page: Page;
let log: PageLog;
let server: E2eServer;
let owner: Session;
let group: ChannelRecord;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function api<T>(path: string, body?: unknown, status = body === undefined ? 200 : 201): Promise<T> {
  const res = await call(server.url, path, { session: owner, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${path}: ${res.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

e2eStack(
  {
    before: () => resetArtifacts("daily"),
    llm: { defaultTurn: scripts.turn },
    server: { schedules: true },
  },
  async (stack) => {
    ({ page, log, server } = stack);
    ({ owner } = await withUsers(server.url));
    // The starter agents (assistant, coder, writer, editor, translator) are there already.
    await api("/api/agents", { id: "longname", name: LONG_NAME, emoji: "🦒" });
    group = await api<ChannelRecord>("/api/channels", {
      kind: "group",
      name: "Writers room without a leader",
      agentIds: ["writer", "editor"],
      userIds: [],
    });
    await page.goto(server.url);
    await byTest("login-username").fill("alice");
    await byTest("login-password").fill("owner-password-1");
    await byTest("login-submit").click();
    await byTest("home-page").waitFor();
  },
);

describe("the defects of a day of use", () => {
  it(
    "a group without a leader says whom to mention before sending, and the composer has the caret",
    async () => {
      await step("daily/01-mention-needed", async () => {
        await byTest(`channel-item-${group.id}`).click();
        await page.locator(`[data-testid="chat-page"][data-channel-id="${group.id}"]`).waitFor();
        // The caret is in the composer as soon as the chat opens.
        await until(() => page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "composer-input",
        );
        // Before sending: the composer says the message would reach no agent, and whom to mention.
        await page.keyboard.type("hello team, anyone there?");
        const hint = byTest("composer-mention-needed");
        await hint.waitFor();
        await screenshot(page, "daily/01-mention-hint");
        expect(await hint.textContent()).toContain("@editor, @writer or @all");
        expect(await byTest("composer-pick-leader").getAttribute("href")).toBe(`/c/${group.id}/settings`);
        expect(await byTest("message").count()).toBe(0);
        await byTest("composer-input").fill("@writer hello team, anyone there?");
        await until(() => hint.count()).toBe(0);
        await page.keyboard.press("Enter");
        await page.getByText("answer from @writer").waitFor();
      });
    },
    TIMEOUT_MS,
  );

  it(
    "keyboard: Esc stops the streaming answer, ↑ in the empty composer edits the last message, ? lists them",
    async () => {
      await step("daily/01b-keyboard", async () => {
        scripts.add("writer", { delayMs: 60_000, text: "never shown" });
        await byTest("composer-input").fill("@writer a slow one");
        await page.keyboard.press("Enter");
        const stop = byTest("run-stop");
        await stop.waitFor();
        await page.keyboard.press("Escape");
        await until(() => stop.count()).toBe(0);
        await byTest("run-stopped").first().waitFor();

        await byTest("composer-input").focus();
        await page.keyboard.press("ArrowUp");
        const edit = byTest("message-edit-input");
        await edit.waitFor();
        expect(await edit.inputValue()).toBe("@writer a slow one");
        expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "message-edit-input",
        );
        // Escape in the editor cancels the edit (and stops nothing).
        await page.keyboard.press("Escape");
        await until(() => edit.count()).toBe(0);

        // Out of any text field (the title is a rename button now): the conversation's subtitle.
        await page.locator(".chat-sub").click();
        await page.keyboard.press("?");
        const help = byTest("keyboard-help");
        await help.waitFor();
        const listed = await help.textContent();
        for (const what of ["Search messages", "Stop the answer", "edit your last message"])
          expect(listed).toContain(what);
        await screenshot(page, "daily/01b-shortcuts");
        await page.keyboard.press("Escape");
        await until(() => help.count()).toBe(0);
      });
    },
    TIMEOUT_MS,
  );

  it(
    "a Mermaid block becomes a diagram (source one click away, shown when it does not parse); code blocks get a label and Copy",
    async () => {
      await step("daily/01c-diagrams", async () => {
        scripts.add("writer", {
          text: [
            "Here is the flow:",
            "```mermaid\ngraph TD\n  Draft-->Edit\n  Edit-->Publish\n```",
            "And the code:",
            "```ts\nconst answer: number = 42;\n```",
            "And a broken one:",
            "```mermaid\ngraph TD\n  A-->\n```",
          ].join("\n\n"),
        });
        await byTest("composer-input").fill("@writer draw the flow");
        await page.keyboard.press("Enter");
        const answer = page.locator('[data-testid="message"][data-author-type="agent"]').last();
        const drawn = answer.locator('.mermaid-block[data-mermaid="drawn"]');
        await drawn.waitFor();
        await drawn.locator(".mermaid-diagram svg").waitFor();
        expect(await drawn.locator(".mermaid-diagram").textContent()).toContain("Publish");
        expect(await drawn.locator("pre").isVisible()).toBe(false);
        await drawn.getByTestId("mermaid-toggle").click();
        expect(await drawn.locator("pre").isVisible()).toBe(true);
        expect(await drawn.locator(".mermaid-diagram").isVisible()).toBe(false);
        await drawn.getByTestId("mermaid-toggle").click();

        const broken = answer.locator('.mermaid-block[data-mermaid="failed"]');
        await broken.waitFor();
        expect(await broken.locator("pre").isVisible()).toBe(true);
        expect(await broken.getByTestId("mermaid-error").textContent()).toContain("could not be drawn");

        const code = answer.locator(".code-block:not(.mermaid-block)");
        expect(await code.locator(".code-lang").textContent()).toBe("ts");
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
        await code.locator(".code-copy").click();
        await until(() => code.locator(".code-copy").textContent()).toBe("✓ Copied");
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("const answer: number = 42;");
        await screenshot(page, "daily/01c-diagram");
      });
    },
    TIMEOUT_MS,
  );

  it(
    "New chat: a direct chat without an agent says to pick one; two chats with one agent get distinct names",
    async () => {
      await step("daily/02-new-chat", async () => {
        await byTest("new-channel").click();
        await byTest("new-channel-submit").click();
        await byTest("notice").filter({ hasText: "Pick the agent to chat with." }).waitFor();
        expect(await byTest("notice").filter({ hasText: "Give the group a name" }).count()).toBe(0);
        for (const expected of ["Writer", "Writer 2"]) {
          if (!(await byTest("new-channel-form").isVisible())) await byTest("new-channel").click();
          await byTest("new-channel-agent-writer").check();
          await byTest("new-channel-submit").click();
          await until(async () => (await byTest("chat-title").textContent())?.trim()).toBe(expected);
        }
        // The error of the first try went once a chat was created.
        expect(await byTest("notice").filter({ hasText: "Pick the agent" }).count()).toBe(0);
      });
    },
    TIMEOUT_MS,
  );

  it(
    "chats you can name and find: home composer, a title from the first exchange, rename, pin and archive persist",
    async () => {
      await step("daily/02b-titles-pins", async () => {
        // The title call is not an agent's: the fake model answers it from the "?" queue.
        scripts.add("?", { text: "Title: “Quick bread at home”." });
        await page.goto(server.url);
        await byTest("home-composer").waitFor();
        await byTest("home-composer-agent").selectOption("writer");
        await byTest("home-composer-input").fill("How do I bake bread at home quickly?");
        await page.keyboard.press("Enter");
        await byTest("chat-page").waitFor();
        await page.getByText("answer from @writer").waitFor();
        await until(async () => (await byTest("chat-title").textContent())?.trim()).toBe(
          "Quick bread at home",
        );
        const chatId = (await byTest("chat-page").getAttribute("data-channel-id")) ?? "";

        // Rename in place.
        await byTest("chat-rename").click();
        await byTest("chat-rename-input").fill("Bread notes");
        await page.keyboard.press("Enter");
        await until(async () => (await byTest("chat-title").textContent())?.trim()).toBe("Bread notes");

        // Pin it; archive the group.
        const item = page.locator(`.channel-item[data-channel-id="${chatId}"]`);
        await item.hover();
        await item.getByTestId("channel-pin").click();
        await byTest("channel-list-pinned").getByText("Bread notes").waitFor();
        const groupItem = page.locator(`.channel-item[data-channel-id="${group.id}"]`);
        await groupItem.hover();
        await groupItem.getByTestId("channel-archive").click();
        await byTest("channel-list-archived").waitFor();
        await screenshot(page, "daily/02b-pinned-archived");

        await page.reload();
        await byTest("channel-list-pinned").getByText("Bread notes").waitFor();
        expect(await byTest("channel-list-groups").getByText("Writers room without a leader").count()).toBe(
          0,
        );
        await byTest("channel-list-archived").locator("summary").click();
        const archivedGroup = byTest("channel-list-archived").locator(
          `.channel-item[data-channel-id="${group.id}"]`,
        );
        await archivedGroup.waitFor();
        expect(await byTest("chat-title").textContent()).toContain("Bread notes");

        // The home page lists recent chats by title, pinned first, archived left out.
        await page.goto(server.url);
        const recent = byTest("home-recent-chat");
        await recent.first().waitFor();
        expect((await recent.first().textContent())?.trim()).toContain("Bread notes");
        expect(await byTest("home-recent").getByText("Writers room without a leader").count()).toBe(0);
        await screenshot(page, "daily/02b-home");

        // Restore the group for the steps after this one.
        await byTest("channel-list-archived").locator("summary").click();
        await archivedGroup.hover();
        await archivedGroup.getByTestId("channel-unarchive").click();
        await byTest("channel-list-groups").getByText("Writers room without a leader").waitFor();
      });
    },
    TIMEOUT_MS,
  );

  it(
    "the agent name field stops at 80 characters; an unknown address shows not found",
    async () => {
      await step("daily/03-agent-name-and-not-found", async () => {
        await page.goto(`${server.url}/agents/_new`);
        await byTest("agent-form").waitFor();
        expect(await byTest("agent-name").getAttribute("maxlength")).toBe("80");
        await byTest("agent-name").fill("x".repeat(120));
        expect((await byTest("agent-name").inputValue()).length).toBe(80);

        await page.goto(`${server.url}/no/such/page`);
        await byTest("not-found-page").waitFor();
        expect(await byTest("not-found-page").textContent()).toContain("/no/such/page");
        expect(await byTest("home-page").count()).toBe(0);
        await byTest("not-found-home").click();
        await byTest("home-page").waitFor();
      });
    },
    TIMEOUT_MS,
  );

  it(
    "schedules: errors go once a schedule is created, which is said; its prompt is the schedule's, not yours",
    async () => {
      await step("daily/04-schedules", async () => {
        await page.goto(`${server.url}/schedules`);
        await byTest("schedule-form").waitFor();
        await byTest("schedule-name").fill("Morning notes");
        await byTest("schedule-kind-cron").click();
        await byTest("schedule-cron").fill("0 9 * * *");
        await byTest("schedule-timezone").fill("Mars/Olympus");
        await byTest("schedule-channel").selectOption(group.id);
        await byTest("schedule-agent").selectOption("writer");
        await byTest("schedule-prompt").fill("write the morning notes");
        await byTest("schedule-create").click();
        await until(() => page.locator('[data-testid="notice"].notice-error').count()).toBe(1);
        await byTest("schedule-timezone").fill("UTC");
        await byTest("schedule-cron").fill("99 99 * * *");
        await byTest("schedule-create").click();
        await until(() => page.locator('[data-testid="notice"].notice-error').count()).toBe(2);
        await byTest("schedule-cron").fill("0 9 * * *");
        await byTest("schedule-create").click();
        await byTest("notice").filter({ hasText: 'Schedule "Morning notes" created.' }).waitFor();
        expect(await page.locator('[data-testid="notice"].notice-error').count()).toBe(0);
        await byTest("schedule-row").waitFor();

        await byTest("schedule-run-now").click();
        await page.goto(`${server.url}/c/${group.id}`);
        const prompt = page.locator('[data-testid="message"]').filter({ hasText: "write the morning notes" });
        await prompt.waitFor();
        expect((await prompt.getByTestId("message-author").textContent())?.trim()).toBe(
          "Schedule “Morning notes”",
        );
        expect(await prompt.getByTestId("message-edit").count()).toBe(0);
      });
    },
    TIMEOUT_MS,
  );

  it(
    "installable: the manifest (with icons) is served, a service worker caching only the shell is registered, the offline page is served",
    async () => {
      await step("daily/06-installable", async () => {
        await page.goto(server.url);
        await byTest("home-page").waitFor();
        const href = await page.locator('link[rel="manifest"]').getAttribute("href");
        expect(href).toBe("/manifest.webmanifest");
        const res = await page.request.get(server.url + href);
        expect(res.headers()["content-type"]).toContain("application/manifest+json");
        const manifest = (await res.json()) as {
          display: string;
          icons: Array<{ src: string; sizes: string }>;
        };
        expect(manifest.display).toBe("standalone");
        expect(manifest.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(["192x192", "512x512"]));
        for (const icon of manifest.icons)
          expect((await page.request.get(server.url + icon.src)).status()).toBe(200);
        const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
        expect(scope).toBe(`${server.url}/`);
        // The worker keeps only the shell: no API answer is in its cache.
        await until(() =>
          page.evaluate(async () => {
            const cache = await caches.open("dimsum-shell-v1");
            return (await cache.keys()).map((r) => new URL(r.url).pathname);
          }),
        ).toEqual(expect.arrayContaining(["/", "/offline.html"]));
        const cached = await page.evaluate(async () =>
          (await (await caches.open("dimsum-shell-v1")).keys()).map((r) => new URL(r.url).pathname),
        );
        expect(cached.filter((p) => p.startsWith("/api"))).toEqual([]);
        const offline = await page.request.get(`${server.url}/offline.html`);
        expect(await offline.text()).toContain("You are offline");
      });
    },
    TIMEOUT_MS,
  );

  it(
    "at 390 px nothing scrolls sideways: home, chat, agent editor, knowledge tables, new chat dialog",
    async () => {
      await step("daily/05-phone", async () => {
        await api("/api/kb", { name: "handbook" });
        const form = new FormData();
        form.append(
          "files",
          new Blob(["# Handbook\n\nA very long line without breaks: ".concat("x".repeat(300))]),
          "a-rather-long-document-name-that-does-not-fit-a-phone-screen.md",
        );
        const upload = await fetch(`${server.url}/api/kb/handbook/upload`, {
          method: "POST",
          headers: { authorization: `Bearer ${owner.token}` },
          body: form,
        });
        expect(upload.status).toBe(202);
        await api<ChannelRecord>("/api/channels", {
          kind: "direct",
          name: `A chat with a very long name that runs on and on ${"and on ".repeat(6)}`.slice(0, 100),
          agentIds: ["longname"],
          userIds: [],
        });
        await page.setViewportSize({ width: 390, height: 844 });
        const pages: Array<[string, string, string]> = [
          ["home", "/", "home-page"],
          ["chat", `/c/${group.id}`, "chat-page"],
          ["agent", "/agents/longname", "agent-form"],
          ["knowledge", "/knowledge", "knowledge-page"],
          ["schedules", "/schedules", "schedules-page"],
          ["not-found", "/nowhere", "not-found-page"],
        ];
        for (const [name, path, testId] of pages) {
          await page.goto(server.url + path);
          await byTest(testId).waitFor();
          if (name === "knowledge") {
            await byTest("kb-open").first().click();
            await byTest("kb-document").first().waitFor();
          }
          expect(await sidewaysOverflow(page), `${name} at 390 px`).toBeLessThanOrEqual(0);
          await screenshot(page, `daily/390-${name}`);
        }
        await page.goto(server.url);
        await byTest("drawer-toggle").click();
        await byTest("new-channel").click();
        await byTest("new-channel-kind-group").click();
        const box = await byTest("new-channel-agent-longname").boundingBox();
        expect(box?.width ?? 0).toBeGreaterThan(8);
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, "daily/390-new-chat");
        await page.keyboard.press("Escape");
        await page.setViewportSize({ width: 1440, height: 900 });
      });
    },
    TIMEOUT_MS,
  );
});
