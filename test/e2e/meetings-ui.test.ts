/**
 * Meetings in headless Chromium against a real server and the fake LLM: a person starts a meeting
 * from the form, watches the speakers take turns in the meeting bar, reads the minutes card, and
 * finds the meeting in the Decisions list. Screenshots at 1440x900 and 390x844 go to
 * test-artifacts/e2e/meetings/.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-server.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

const MINUTES = {
  decision: "Steam the dumplings",
  reason: "Both agreed steaming keeps them juicy; frying was kept for leftovers.",
  options: [
    { option: "Steam", for: ["juicy", "quick"], against: ["needs a steamer"] },
    { option: "Pan-fry", for: ["crispy bottoms"], against: ["more oil"] },
  ],
  dissent: [{ who: "@coder", why: "prefers crispy potstickers" }],
  actionItems: [
    { task: "Write the steaming recipe", owner: "@assistant", due: "2026-12-10" },
    { task: "Buy a bamboo steamer", owner: "Olivia", due: "next week" },
  ],
  openQuestions: ["How many dumplings per person?"],
};

let server: E2eServer;
let page: Page;
let log: PageLog;
let turns = 0;

/** Each meeting turn answers by its agent; the moderator's minutes turn answers with the minutes. */
function meetingTurn(request: RecordedRequest): FakeTurn {
  const messages = (request.body as { messages?: Array<{ content?: unknown }> }).messages ?? [];
  const system = String(messages[0]?.content ?? "");
  const agent = /\(@([a-z0-9_-]+)\)/.exec(system)?.[1] ?? "?";
  if (system.includes("the moderator of a meeting")) return { text: JSON.stringify(MINUTES), delayMs: 600 };
  turns++;
  const said =
    agent === "assistant"
      ? `Steaming keeps them juicy (turn ${turns}).`
      : `Pan-frying gives a crispy bottom (turn ${turns}).`;
  return { text: said, delayMs: 1200 };
}

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 20_000, interval: 50 });

/** Waits for the page's finite animations (a streaming cursor blinks for ever; a removed one aborts). */
async function settle(): Promise<void> {
  await animationsSettled(page);
}

async function shots(name: string): Promise<void> {
  await page.setViewportSize(WIDE);
  await settle();
  await screenshot(page, `meetings/${name}-1440`);
  await page.setViewportSize(PHONE);
  await settle();
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
  await screenshot(page, `meetings/${name}-390`);
  await page.setViewportSize(WIDE);
}

e2eStack({ before: () => resetArtifacts("meetings"), llm: { defaultTurn: meetingTurn } }, (stack) => {
  ({ server, page, log } = stack);
});

describe("meetings in headless Chromium", () => {
  it("starts a meeting from the form, shows the speakers, the minutes card and the Decisions list", async () => {
    let channelId = "";
    await step("meetings/01-form", async () => {
      await page.setViewportSize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = await pageApi<{ id: string }>(page, server.url, "POST", "/api/channels", {
        kind: "group",
        name: "Kitchen council",
        leaderAgentId: "assistant",
        agentIds: ["assistant", "coder"],
        userIds: [],
      });
      channelId = channel.id;
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("meeting-open-form").click();
      await byTest("meeting-form").waitFor();
      // Every agent of the group takes part by default; the leader moderates.
      expect(await byTest("meeting-participant-assistant").isChecked()).toBe(true);
      expect(await byTest("meeting-participant-coder").isChecked()).toBe(true);
      expect(await byTest("meeting-moderator").inputValue()).toBe("assistant");
      expect(await byTest("meeting-rounds").inputValue()).toBe("2");
      await byTest("meeting-topic").fill("How should we cook the dumplings?");
      await byTest("meeting-rounds").fill("1");
      await shots("01-form");
    });

    await step("meetings/02-speakers", async () => {
      await byTest("meeting-start").click();
      await byTest("meeting-bar").waitFor();
      // The first speaker, then the second, each shown in the bar while speaking.
      await until(() => byTest("meeting-bar").getAttribute("data-speaker")).toBe("assistant");
      expect(await byTest("meeting-speaking").textContent()).toContain("Round 1 of 1");
      await until(() => byTest("meeting-bar").getAttribute("data-speaker")).toBe("coder");
      await until(() => page.getByText("Steaming keeps them juicy").count()).toBe(1);
      await shots("02-speakers");
    });

    await step("meetings/03-minutes", async () => {
      await byTest("minutes-card").waitFor({ timeout: 20_000 });
      await until(() => byTest("meeting-bar").count()).toBe(0);
      expect(await byTest("minutes-decision").textContent()).toContain("Decision: Steam the dumplings");
      const card = byTest("minutes-card");
      expect(await card.textContent()).toContain("prefers crispy potstickers");
      expect(await card.textContent()).toContain("How many dumplings per person?");
      // Only the agent's action item can be started here.
      expect(await byTest("minutes-start-item").count()).toBe(1);
      expect(await byTest("minutes-export").getAttribute("href")).toMatch(
        /\/api\/meetings\/meeting_.+\/minutes\.md$/,
      );
      await card.scrollIntoViewIfNeeded();
      await shots("03-minutes");
      await byTest("minutes-start-item").click();
      await until(() => page.getByText("@assistant Write the steaming recipe (due 2026-12-10)").count()).toBe(
        1,
      );
    });

    await step("meetings/04-decisions", async () => {
      await byTest("decisions-open").click();
      await byTest("decisions-list").waitFor();
      await until(() => byTest("decision-row").count()).toBe(1);
      await byTest("decisions-search").fill("potstickers");
      await until(() => byTest("decision-row").count()).toBe(1);
      await byTest("decision-row").locator("button").first().click();
      await byTest("decisions-list").getByTestId("minutes-card").waitFor();
      await shots("04-decisions");
      await byTest("decisions-search").fill("sushi");
      await byTest("decisions-empty").waitFor();
      const stored = await pageApi<Array<{ status: string }>>(
        page,
        server.url,
        "GET",
        `/api/channels/${channelId}/meetings`,
      );
      expect(stored.map((m) => m.status)).toEqual(["done"]);
    });
  }, 120_000);
});
