/**
 * Message search in the web UI, end to end in real headless Chromium against a real server, team and
 * SQLite file (agents answer through the scripted fake LLM): search every channel, open a hit far back
 * in a channel's history, restrict the search to the open channel, the empty and error states, a hit
 * deleted meanwhile (whose notice must not cover navigation), and the phone layout. The steps build
 * on each other, in order, in one page.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { AgentScripts } from "../team/harness.js";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const STEP_TIMEOUT_MS = 40_000;
const PASSWORD = "owner-password-1";
const WRITER_ANSWER = "Pelican numbers look healthy this season.";
/** Enough later messages that the first one is not in the page a channel opens with (50). */
const FILLER_COUNT = 60;

const scripts = new AgentScripts();
let server: E2eServer;
let page: Page;
let log: PageLog;
const channels = { harbor: "", orchard: "" };
const ids = { firstPelican: 0, orchardBudget: 0 };

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
/** Polls until the value matches, for up to 10 s. */
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const results = () => byTest("search-result");
const resultTexts = (selector: string) =>
  results().evaluateAll(
    (els, sel) => els.map((el) => (el.querySelector(sel)?.textContent ?? "").replace(/\s+/g, " ").trim()),
    selector,
  );

/** A state-changing API call with the browser's own session (cookie plus CSRF token). */
async function apiCall(method: "POST" | "DELETE", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

/** Types `query` into the open search panel, presses Enter and waits for its answer. */
async function searchFor(query: string, scope = "all"): Promise<void> {
  await byTest("search-input").fill(query);
  await byTest("search-input").press("Enter");
  const status = byTest("search-status");
  await until(async () => [
    await status.getAttribute("data-phase"),
    await status.getAttribute("data-query"),
    await status.getAttribute("data-scope"),
  ]).toEqual(["done", query, scope]);
}

/** Creates a group with the writer agent through the new-chat dialog; returns its id. */
async function createGroup(name: string): Promise<string> {
  await byTest("new-channel").click();
  await byTest("new-channel-kind-group").click();
  await byTest("new-channel-name").fill(name);
  await byTest("new-channel-agent-writer").check();
  await byTest("new-channel-submit").click();
  await until(() => text(byTest("chat-title"))).toBe(`# ${name}`);
  return (await byTest("chat-page").getAttribute("data-channel-id")) ?? "";
}

/** Sends a message with the composer; returns the stored message's id once it is shown. */
async function send(message: string): Promise<number> {
  const before = await page.locator('[data-testid="message"][data-author-type="user"]').count();
  await byTest("composer-input").fill(message);
  await byTest("composer-send").click();
  const mine = page.locator('[data-testid="message"][data-author-type="user"]');
  await until(() => mine.count()).toBe(before + 1);
  return Number(await mine.last().getAttribute("data-message-id"));
}

/** Whether the element lies fully inside the visible part of its scrolling message list. */
function inListView(messageId: number): Promise<boolean> {
  return page.evaluate((id) => {
    const el = document.querySelector(`[data-testid="message-list"] [data-message-id="${id}"]`);
    const list = el?.closest('[data-testid="message-list"]');
    if (!el || !list) return false;
    const a = el.getBoundingClientRect();
    const b = list.getBoundingClientRect();
    return a.height > 0 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
  }, messageId);
}

e2eStack(
  {
    // Other browser test files share test-artifacts/e2e; this one empties only its own subfolder.
    before: () => resetArtifacts("search"),
    llm: { defaultTurn: scripts.turn },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);

describe("message search in headless Chromium", () => {
  it(
    "fills two channels with messages, one answered by an agent",
    async () => {
      await step("search/01-channels", async () => {
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("home-page").waitFor();

        channels.harbor = await createGroup("Harbor");
        // Markup in a message must show as text in the results, never as HTML.
        ids.firstPelican = await send("The pelican budget is due on <b>Friday</b>.");
        scripts.add("writer", { text: WRITER_ANSWER });
        await send("@writer how are the pelicans doing?");
        await page.locator('[data-testid="message"][data-author-type="agent"]').waitFor();

        channels.orchard = await createGroup("Orchard");
        ids.orchardBudget = await send("Orchard budget review is on Monday.");
      });
      // Later Harbor traffic pushes its first message out of the page the channel opens with.
      for (let i = 1; i <= FILLER_COUNT; i++) {
        await apiCall("POST", `/api/channels/${channels.harbor}/messages`, { text: `harbor log line ${i}` });
      }
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "finds a word used in one channel only, highlighted, and opens a hit far back in its channel",
    async () => {
      await step("search/02-results", async () => {
        await byTest("search-open").click();
        await byTest("message-search").waitFor();
        expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "search-input",
        );
        await searchFor("pelican");
        expect(await results().count()).toBe(3);
        expect(await resultTexts('[data-testid="search-result-channel"]')).toEqual([
          "#Harbor",
          "#Harbor",
          "#Harbor",
        ]);
        expect((await resultTexts('[data-testid="search-result-author"]')).sort()).toEqual([
          "Writer",
          "You",
          "You",
        ]);
        expect((await resultTexts('[data-testid="search-result-text"]')).sort()).toEqual([
          "@writer how are the pelicans doing?",
          WRITER_ANSWER,
          "The pelican budget is due on <b>Friday</b>.",
        ]);
        // The matched words (a prefix of "pelicans" too) are <mark>ed; the markup stayed text.
        const marks = await page
          .locator('[data-testid="search-result-text"] mark')
          .evaluateAll((els) => els.map((el) => el.textContent));
        expect(marks.map((m) => m?.toLowerCase())).toEqual(["pelican", "pelican", "pelican"]);
        expect(await page.locator('[data-testid="search-result-text"] b').count()).toBe(0);
        expect(await byTest("search-status").textContent()).toBe("3 messages found.");
      });
      await step("search/03-opened-hit", async () => {
        await page.locator(`[data-testid="search-result"][data-message-id="${ids.firstPelican}"]`).click();
        await byTest("message-search").waitFor({ state: "detached" });
        await page.waitForURL(`${server.url}/c/${channels.harbor}`);
        await until(() => text(byTest("chat-title"))).toBe("# Harbor");
        const hit = page.locator(`[data-testid="message"][data-message-id="${ids.firstPelican}"]`);
        await until(() => hit.getAttribute("class")).toContain("msg-search-hit");
        await until(() => inListView(ids.firstPelican)).toBe(true);
        expect(await text(hit.getByTestId("message-text"))).toBe(
          "The pelican budget is due on <b>Friday</b>.",
        );
        expect(await page.locator(".msg-search-hit").count()).toBe(1);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "restricts the search to the open channel, then closes with Escape",
    async () => {
      await step("search/04-this-channel", async () => {
        await page.keyboard.press("Control+k");
        await byTest("message-search").waitFor();
        expect(await byTest("search-input").inputValue()).toBe("pelican");
        await searchFor("budget");
        expect((await resultTexts('[data-testid="search-result-channel"]')).sort()).toEqual([
          "#Harbor",
          "#Orchard",
        ]);
        await byTest("search-this-channel").check();
        await until(() => byTest("search-status").getAttribute("data-scope")).toBe(channels.harbor);
        await until(() => byTest("search-status").getAttribute("data-phase")).toBe("done");
        expect(await resultTexts('[data-testid="search-result-channel"]')).toEqual(["#Harbor"]);
        expect(await results().getAttribute("data-message-id")).toBe(String(ids.firstPelican));
        await page.keyboard.press("Escape");
        await byTest("message-search").waitFor({ state: "detached" });
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "says so when nothing matches, and when the search cannot reach the server",
    async () => {
      await step("search/05-empty", async () => {
        await byTest("search-open").click();
        await byTest("search-this-channel").uncheck();
        await searchFor("zebra");
        expect(await results().count()).toBe(0);
        expect(await text(byTest("search-empty"))).toBe(
          "No messages match “zebra”. Try other or fewer words.",
        );
      });
      await step("search/06-error", async () => {
        await page.context().setOffline(true);
        try {
          await byTest("search-input").fill("pelican");
          await byTest("search-input").press("Enter");
          await until(() => byTest("search-status").getAttribute("data-phase")).toBe("error");
          expect(await text(byTest("search-error"))).toContain("Could not search messages: Cannot reach");
          expect(await byTest("search-error").getAttribute("role")).toBe("alert");
        } finally {
          await page.context().setOffline(false);
        }
        await searchFor("pelican");
        expect(await results().count()).toBe(3);
        await byTest("search-close").click();
        await byTest("message-search").waitFor({ state: "detached" });
        // Focus goes back to the button that opened the panel.
        expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "search-open",
        );
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "opens the channel of a hit deleted meanwhile, with a notice that covers no navigation",
    async () => {
      await step("search/07-deleted-hit", async () => {
        await byTest("search-open").click();
        await searchFor("orchard");
        expect(await results().count()).toBe(1);
        await apiCall("DELETE", `/api/messages/${ids.orchardBudget}`);
        await results().click();
        await until(() => text(byTest("chat-title"))).toBe("# Orchard");
        const notice = byTest("notice").filter({ hasText: "no longer in the channel" });
        await notice.waitFor();

        // Every navigation control stays uncovered and clickable while the notice shows.
        const covered = await page.evaluate(() => {
          const notices = document.querySelector('[data-testid="notices"]')?.getBoundingClientRect();
          const ids = ["channel-settings-link", "nav-settings", "logout", "search-open"];
          return ids.filter((id) => {
            const el = document.querySelector<HTMLElement>(`[data-testid="${id}"]`);
            if (!el || !notices) return true;
            const r = el.getBoundingClientRect();
            const overlaps =
              r.left < notices.right &&
              r.right > notices.left &&
              r.top < notices.bottom &&
              r.bottom > notices.top;
            const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return overlaps || !(top && el.contains(top));
          });
        });
        expect(covered).toEqual([]);
        await screenshot(page, "search/07-notice");
        await byTest("channel-settings-link").click();
        await page.waitForURL(`${server.url}/c/${channels.orchard}/settings`);
        await byTest("notice-dismiss").click();
      });
    },
    STEP_TIMEOUT_MS,
  );

  it(
    "is reachable on a phone-sized screen, from the top bar and from the drawer",
    async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await step("search/08-phone", async () => {
        // The channel drawer has slid shut: the sidebar (and its search entry) is off screen.
        await until(() =>
          page.evaluate(
            () => document.querySelector('[data-testid="sidebar"]')?.getBoundingClientRect().right,
          ),
        ).toBeLessThanOrEqual(0);
        expect(await inViewport("search-open")).toBe(true);
        await screenshot(page, "search/08-phone-topbar");
        await byTest("search-open").click();
        await searchFor("pelican");
        expect(await results().count()).toBe(3);
        const panel = await byTest("message-search").boundingBox();
        expect(panel).toMatchObject({ x: 0, y: 0, width: 390, height: 844 });
        await page.keyboard.press("Escape");
        await byTest("message-search").waitFor({ state: "detached" });

        await byTest("drawer-toggle").click();
        await until(() => inViewport("nav-search")).toBe(true);
        await byTest("nav-search").click();
        await byTest("message-search").waitFor();
        await searchFor("harbor log line 60");
        expect(await results().count()).toBe(1);
      });
    },
    STEP_TIMEOUT_MS,
  );

  it("logged no Content Security Policy violations and no uncaught page errors", () => {
    expect(log.cspViolations()).toEqual([]);
    expect(log.uncaught()).toEqual([]);
  });
});

/** Whether the element with this test id lies fully inside the viewport. */
function inViewport(testId: string): Promise<boolean> {
  return page.evaluate((id) => {
    const el = document.querySelector(`[data-testid="${id}"]`);
    if (!el) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight;
  }, testId);
}
