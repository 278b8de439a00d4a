/**
 * Browser notifications (issue 27), in real headless Chromium against a real server and the scripted
 * fake LLM, with the notification permission granted to the test's browser context: Settings →
 * Notifications turns them on; while the tab is hidden, an agent's answer in a direct chat and a
 * mention in a group show a notification through the service worker (read back with
 * `getNotifications()`), the sidebar's unread count moves without the chat open; nothing is shown
 * while the tab is visible or for a kind turned off; a click relayed by the service worker opens the
 * chat at the message. Screenshots at 1440×900 and 390×844 in `test-artifacts/e2e/notifications/`.
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
const scripts = new AgentScripts();
let page: Page;
let log: PageLog;
let server: E2eServer;
let owner: Session;
let member: Session;
let direct: ChannelRecord;
let group: ChannelRecord;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

async function api<T>(session: Session, path: string, body?: unknown): Promise<T> {
  const res = await call(server.url, path, { session, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

interface Shown {
  title: string;
  body: string;
  tag: string;
  data: { channelId?: string; messageId?: number };
}

/** The notifications the service worker shows now (Chromium keeps them until closed). */
function shown(): Promise<Shown[]> {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    const list = await registration.getNotifications();
    return list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data }));
  });
}

function closeAll(): Promise<void> {
  return page.evaluate(async () => {
    const registration = await navigator.serviceWorker.ready;
    for (const n of await registration.getNotifications()) n.close();
  });
}

/** Headless Chromium keeps every tab visible: the page is told it is hidden (or visible again). */
function setHidden(hidden: boolean): Promise<void> {
  return page.evaluate(
    (value) => {
      Object.defineProperty(document, "visibilityState", { configurable: true, get: () => value });
      Object.defineProperty(document, "hidden", { configurable: true, get: () => value === "hidden" });
      document.dispatchEvent(new Event("visibilitychange"));
    },
    hidden ? "hidden" : "visible",
  );
}

e2eStack(
  {
    before: () => resetArtifacts("notifications"),
    llm: { defaultTurn: scripts.turn },
  },
  async (stack) => {
    ({ page, log, server } = stack);
    let users: Record<string, Session>;
    ({ owner, users } = await withUsers(server.url, ["member"]));
    member = users.member as Session;
    const me = await api<{ user: { id: string } }>(owner, "/api/auth/me");
    const memberMe = await api<{ user: { id: string } }>(member, "/api/auth/me");
    direct = await api<ChannelRecord>(owner, "/api/channels", {
      kind: "direct",
      name: "Assistant",
      agentIds: ["assistant"],
      userIds: [],
    });
    group = await api<ChannelRecord>(owner, "/api/channels", {
      kind: "group",
      name: "Launch crew",
      leaderAgentId: "writer",
      agentIds: ["writer"],
      userIds: [me.user.id, memberMe.user.id],
    });
    await page.context().grantPermissions(["notifications"], { origin: server.url });
    await page.goto(server.url);
    await byTest("login-username").fill("alice");
    await byTest("login-password").fill("owner-password-1");
    await byTest("login-submit").click();
    await byTest("home-page").waitFor();
    await page.evaluate(() => navigator.serviceWorker.ready.then(() => undefined));
  },
);

describe("browser notifications", () => {
  it(
    "Settings → Notifications turns them on for this browser",
    async () => {
      await step("notifications/01-settings", async () => {
        await page.goto(`${server.url}/settings/notifications`);
        const section = byTest("settings-notifications");
        await section.waitFor();
        expect(await section.getAttribute("data-state")).toBe("off");
        expect(await byTest("notification-permission").getAttribute("data-permission")).toBe("granted");
        await byTest("notifications-on").click();
        await until(() => section.getAttribute("data-state")).toBe("on");
        expect(await byTest("notifications-status").textContent()).toContain("on for this browser");
        for (const kind of ["answers", "mentions", "approvals"])
          expect(await byTest(`notify-${kind}`).isChecked()).toBe(true);
        await page.setViewportSize({ width: 1440, height: 900 });
        await screenshot(page, "notifications/01-settings-1440");
        await page.setViewportSize({ width: 390, height: 844 });
        // Loaded at this width: the sidebar is a closed drawer, not one sliding away.
        await page.reload();
        await until(() => byTest("settings-notifications").getAttribute("data-state")).toBe("on");
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await screenshot(page, "notifications/01-settings-390");
        await page.setViewportSize({ width: 1440, height: 900 });
        // The choice is this browser's: it survives a reload.
        await page.reload();
        await until(() => byTest("settings-notifications").getAttribute("data-state")).toBe("on");
      });
    },
    TIMEOUT_MS,
  );

  it(
    "an answer in a direct chat notifies while the tab is hidden, and the click opens it",
    async () => {
      await step("notifications/02-answer", async () => {
        await page.goto(server.url);
        await byTest("home-page").waitFor();
        await closeAll();
        // Visible: an answer arrives without a notification.
        scripts.add("assistant", { text: "Seen while you looked." });
        await api(owner, `/api/channels/${direct.id}/messages`, { text: "first question" });
        await until(async () => (await byTest(`channel-item-${direct.id}`).textContent()) ?? "").toContain(
          "1",
        );
        expect(await shown()).toEqual([]);

        await setHidden(true);
        scripts.add("assistant", { text: "The quarterly numbers are ready for review." });
        await api(owner, `/api/channels/${direct.id}/messages`, { text: "second question" });
        await until(async () => (await shown()).length).toBe(1);
        const [note] = await shown();
        expect(note?.title).toBe("Assistant answered");
        expect(note?.body).toBe("The quarterly numbers are ready for review.");
        expect(note?.data.channelId).toBe(direct.id);
        // Your own message never notifies you: only the answer did.
        const answerId = note?.data.messageId;
        expect(typeof answerId).toBe("number");

        // The service worker's click relay: the page opens the chat at the message.
        await setHidden(false);
        await page.evaluate(
          (data) =>
            navigator.serviceWorker.dispatchEvent(
              new MessageEvent("message", { data: { type: "open-notification", ...data } }),
            ),
          { channelId: direct.id, messageId: answerId as number },
        );
        await page.locator(`[data-testid="chat-page"][data-channel-id="${direct.id}"]`).waitFor();
        await page.locator(`[data-message-id="${answerId}"].msg-search-hit`).waitFor();
      });
    },
    TIMEOUT_MS,
  );

  it(
    "a mention in a group notifies; a kind turned off does not",
    async () => {
      await step("notifications/03-mention", async () => {
        await page.goto(server.url);
        await byTest("home-page").waitFor();
        await closeAll();
        await setHidden(true);
        await api(member, `/api/channels/${group.id}/messages`, {
          text: "@alice can you sign off the launch?",
        });
        await until(async () => (await shown()).length).toBe(1);
        const [note] = await shown();
        expect(note?.title).toBe("Someone mentioned you in Launch crew");
        expect(note?.body).toBe("@alice can you sign off the launch?");
        // The leader's answer mentions nobody: no second notification.
        await closeAll();

        // Mentions turned off: the next one is silent.
        await setHidden(false);
        await page.goto(`${server.url}/settings/notifications`);
        await byTest("notify-mentions").uncheck();
        await page.goto(server.url);
        await byTest("home-page").waitFor();
        await setHidden(true);
        await api(member, `/api/channels/${group.id}/messages`, { text: "@alice one more thing" });
        await until(async () => (await byTest(`channel-item-${group.id}`).textContent()) ?? "").toMatch(/\d/);
        // The answer to it went through the same socket: had a notification been due, it was shown by now.
        await api(owner, `/api/channels/${direct.id}/messages`, { text: "ping" });
        await until(async () => (await shown()).map((n) => n.title)).toEqual(["Assistant answered"]);
      });
    },
    TIMEOUT_MS,
  );
});
