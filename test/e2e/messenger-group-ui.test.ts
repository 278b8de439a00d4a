/**
 * One conversation across the web UI and a messenger, in real headless Chromium: a Telegram group
 * (the fake Bot API on loopback, the connector polling it) is bound to a Dimsum group; a message said
 * in Telegram shows in the web group under the sender's Telegram name with a small "via Telegram"
 * label, with the leader's answer; a message typed in the web group is posted to the Telegram group
 * labelled with the person's name. Screenshots at 1440×900 and 390×844 in
 * `test-artifacts/e2e/messenger/`, nothing scrolling sideways.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const CHAT = -3003;
const SIZES = [
  { name: "1440", width: 1440, height: 900 },
  { name: "390", width: 390, height: 844 },
] as const;

/** Resizes and waits for the layout's transitions (the sidebar drawer) to finish. */
async function resize(page: Page, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
}

async function until<T>(read: () => T | undefined | Promise<T | undefined>, what: string): Promise<T> {
  const end = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a messenger group in the web UI", () => {
  let page: Page;
  let log: PageLog;
  let server: E2eServer;
  e2eStack(
    {
      before: () => resetArtifacts("messenger"),
      llm: { defaultTurn: { text: "On it, the release goes out tonight." } },
      server: { connectors: true },
    },
    (stack) => {
      page = stack.page;
      log = stack.log;
      server = stack.server;
    },
  );

  it("shows Telegram messages with the sender and platform, and posts web messages to Telegram", async () => {
    const telegram = await FakeTelegram.start();
    const byTest = (id: string) => page.getByTestId(id);
    const inChat = () => telegram.sent.filter((m) => m.chatId === String(CHAT));
    const say = (text: string) =>
      telegram.userMessage({ chatId: CHAT, userId: 501, text, username: "ana", chatTitle: "Release crew" });
    try {
      let groupId = "";
      await flow(page, log, server.logLines, "messenger/01-bound", async () => {
        await page.setViewportSize(SIZES[0]);
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("home-page").waitFor();
        const connector = await pageApi<{ id: string }>(page, server.url, "POST", "/api/connectors", {
          type: "telegram",
          name: "Tg bot",
          agentId: "assistant",
          settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
          secrets: { botToken: telegram.token },
        });
        await pageApi(page, server.url, "POST", `/api/connectors/${connector.id}/start`);
        const group = await pageApi<{ id: string }>(page, server.url, "POST", "/api/channels", {
          kind: "group",
          name: "Release crew",
          leaderAgentId: "assistant",
          agentIds: ["assistant", "coder"],
          userIds: [],
        });
        groupId = group.id;
        // The chat is seen once (answered as a direct chat), then bound to the group.
        say("hello bot");
        await until(() => (inChat().length > 0 ? true : undefined), "the direct answer");
        await pageApi(page, server.url, "PATCH", `/api/connectors/${connector.id}/chats/${CHAT}`, {
          mode: "group",
          channelId: group.id,
        });
        await page.goto(`${server.url}/c/${group.id}`);
        await byTest("composer-input").waitFor();
      });

      await flow(page, log, server.logLines, "messenger/02-from-telegram", async () => {
        say("Can we ship the release tonight?");
        const message = page
          .locator('[data-testid="message"]')
          .filter({ hasText: "ship the release tonight" });
        await message.waitFor();
        expect(await message.getByTestId("message-author").textContent()).toBe("ana");
        const label = message.getByTestId("message-platform");
        expect(await label.textContent()).toBe("via Telegram");
        expect(await label.getAttribute("data-platform")).toBe("telegram");
        // The leader's answer, in the web group and back in Telegram.
        await page.getByText("On it, the release goes out tonight.").first().waitFor();
        await until(
          () =>
            inChat().some((m) => m.text.includes("On it, the release goes out tonight.")) ? true : undefined,
          "the answer in Telegram",
        );
        for (const size of SIZES) {
          await resize(page, size);
          await message.scrollIntoViewIfNeeded();
          expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
          await screenshot(page, `messenger/02-from-telegram-${size.name}`);
        }
        await page.setViewportSize(SIZES[0]);
      });

      await flow(page, log, server.logLines, "messenger/03-from-web", async () => {
        await byTest("composer-input").fill("Release at five, everyone");
        await byTest("composer-send").click();
        const mirrored = await until(
          () => inChat().find((m) => m.text.endsWith("Release at five, everyone")),
          "the web message in Telegram",
        );
        expect(mirrored.bold).toEqual(["💬 owner"]);
        // The web message itself has no platform label: it was said here.
        const mine = page.locator('[data-testid="message"]').filter({ hasText: "Release at five, everyone" });
        await mine.waitFor();
        expect(await mine.getByTestId("message-platform").count()).toBe(0);
        await page.getByText("On it, the release goes out tonight.").nth(1).waitFor();
        for (const size of SIZES) {
          await resize(page, size);
          await mine.scrollIntoViewIfNeeded();
          expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
          await screenshot(page, `messenger/03-from-web-${size.name}`);
        }
        await page.setViewportSize(SIZES[0]);
      });
      expect(groupId).not.toBe("");
    } finally {
      await telegram.close();
    }
  }, 90_000);
});
