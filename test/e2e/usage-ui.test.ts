/**
 * Cost on every answer, in headless Chromium against a real server and the fake LLM: each answer
 * shows its model and, behind a details toggle, tokens, cost and duration; the chat shows its totals;
 * Settings -> Spend shows spend per provider and per agent per day. Screenshots at 1440x900 and
 * 390x844 go to test-artifacts/e2e/usage/.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
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
  await animationsSettled(page);
  await screenshot(page, `usage/${name}-1440`);
  await page.setViewportSize(PHONE);
  await animationsSettled(page);
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
  await screenshot(page, `usage/${name}-390`);
  await page.setViewportSize(WIDE);
}

e2eStack(
  {
    before: () => resetArtifacts("usage"),
    llm: { defaultTurn: { text: "Dumplings are best steamed.", usage: { input: 12_400, output: 320 } } },
    server: { model: "openai:gpt-4o-mini" },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);

describe("answer usage and spend in headless Chromium", () => {
  it("shows each answer's model, its details on demand, the chat's totals and the spend page", async () => {
    await step("usage/01-answer", async () => {
      await page.setViewportSize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = await pageApi<{ id: string }>(page, server.url, "POST", "/api/channels", {
        kind: "group",
        name: "Dim sum",
        agentIds: ["assistant"],
        userIds: [],
      });
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("composer-input").fill("@assistant how should I cook dumplings?");
      await byTest("composer-send").click();
      await until(() => byTest("answer-model").count()).toBe(1);
      // Reopening the chat reads the usage from the stored runs.
      await page.reload();
      await byTest("answer-model").waitFor();
      expect(await byTest("answer-model").textContent()).toBe("gpt-4o-mini");
      expect(await byTest("answer-usage-details").isVisible()).toBe(false);
      await byTest("answer-model").click();
      await byTest("answer-usage-details").waitFor();
      expect(await byTest("usage-input").textContent()).toBe("12.4k tokens");
      expect(await byTest("usage-output").textContent()).toBe("320 tokens");
      // 12,400 x $0.15/M + 320 x $0.60/M.
      expect(await byTest("usage-cost").textContent()).toBe("$0.00205");
      expect(await byTest("chat-totals").textContent()).toContain("$0.00205");
      await shots("answer-details");
    });

    await step("usage/02-spend", async () => {
      await page.goto(`${server.url}/settings/spend`);
      await byTest("spend-by-provider").waitFor();
      const provider = byTest("spend-by-provider").getByTestId("spend-row");
      expect(await provider.count()).toBe(1);
      expect(await provider.first().getAttribute("data-key")).toBe("openai");
      expect(await byTest("spend-by-agent").getByTestId("spend-row").first().getAttribute("data-key")).toBe(
        "assistant",
      );
      expect(await byTest("spend-total").textContent()).toContain("$0.00205");
      await shots("spend");
    });

    await step("usage/03-agent-totals", async () => {
      await page.goto(`${server.url}/agents`);
      await byTest("agent-spend").first().waitFor();
      expect(await byTest("agent-spend").first().textContent()).toContain("$0.00205 / 30 days");
    });
  }, 60_000);
});
