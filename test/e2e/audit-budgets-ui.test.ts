/**
 * Settings → Spend's budgets and Settings → Audit in headless Chromium against a real server and the
 * fake LLM: the owner adds a hard limit of $0.01 for themselves, the second answer is refused in the
 * chat with the reason, and the audit page lists, filters and verifies what happened. Screenshots at
 * 1440x900 and 390x844 go to test-artifacts/e2e/audit/.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

let server: E2eServer;
let page: Page;
let log: PageLog;

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function shots(name: string): Promise<void> {
  await page.setViewportSize(WIDE);
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
  await screenshot(page, `audit/${name}-1440`);
  await page.setViewportSize(PHONE);
  await page.evaluate(() => Promise.all(document.getAnimations().map((a) => a.finished)));
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
  await screenshot(page, `audit/${name}-390`);
  await page.setViewportSize(WIDE);
}

e2eStack(
  {
    before: () => resetArtifacts("audit"),
    // gpt-4o-mini: 40,000 input tokens at $0.15/M = $0.006 an answer.
    llm: { defaultTurn: { text: "Steamed, ten minutes.", usage: { input: 40_000, output: 0 } } },
    server: { model: "openai:gpt-4o-mini" },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);

describe("budgets and the audit log in headless Chromium", () => {
  it("adds a budget, refuses the answer past it, and shows, filters and verifies the audit log", async () => {
    let channelId = "";
    await step("audit/01-budget", async () => {
      await page.setViewportSize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const me = await pageApi<{ user: { id: string } }>(page, server.url, "GET", "/api/auth/me");
      await page.goto(`${server.url}/settings/spend`);
      await byTest("budgets-panel").waitFor();
      await byTest("budget-scope-id").fill(me.user.id);
      await byTest("budget-period").selectOption("day");
      await byTest("budget-soft").fill("0.005");
      await byTest("budget-hard").fill("0.01");
      await byTest("budget-add").click();
      await byTest("all-budgets").waitFor();
      await until(() => byTest("my-budgets").locator("[data-testid=budget-remaining]").textContent()).toBe(
        "$0.0100",
      );
      await shots("spend-budgets");
    });

    await step("audit/02-refused", async () => {
      const channel = await pageApi<{ id: string }>(page, server.url, "POST", "/api/channels", {
        kind: "group",
        name: "Kitchen",
        agentIds: ["assistant"],
        userIds: [],
      });
      channelId = channel.id;
      await page.goto(`${server.url}/c/${channelId}`);
      await byTest("composer-input").fill("@assistant how long do dumplings steam?");
      await byTest("composer-send").click();
      await until(() => byTest("answer-model").count()).toBe(1);
      await byTest("composer-input").fill("@assistant and buns?");
      await byTest("composer-send").click();
      await byTest("run-error").waitFor();
      expect(await byTest("run-error").textContent()).toContain("your daily budget of $0.01 is spent");
      await shots("chat-refused");
      // The person sees where they stand: spent, nothing left, past the soft limit.
      await page.goto(`${server.url}/settings/spend`);
      const mine = byTest("my-budgets");
      await mine.waitFor();
      expect(await mine.locator("[data-testid=budget-soft-passed]").textContent()).toBe(
        "past the soft limit of $0.00500",
      );
      expect(await mine.locator("[data-testid=budget-remaining]").textContent()).toContain("$0.00400");
      await shots("spend-soft-passed");
    });

    await step("audit/03-audit-page", async () => {
      await page.goto(`${server.url}/settings/audit`);
      await byTest("audit-list").waitFor();
      const actions = await byTest("audit-row").evaluateAll((rows) =>
        rows.map((r) => r.getAttribute("data-action")),
      );
      expect(actions).toEqual(["budget.create", "account.create"]);
      await byTest("audit-row").first().locator("summary").click();
      await shots("audit-list");
      await byTest("audit-action").fill("account");
      await byTest("audit-apply").click();
      await until(() => byTest("audit-row").count()).toBe(1);
      expect(await byTest("audit-export-csv").getAttribute("href")).toBe(
        "/api/audit/export?action=account&format=csv",
      );
      await byTest("audit-verify").click();
      await until(() => page.getByText("The audit log holds: 2 entries verified.").count()).toBe(1);
      await shots("audit-verified");
    });
  }, 90_000);
});
