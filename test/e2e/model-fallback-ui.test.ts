/**
 * Model chains in the web UI, in headless Chromium against a real server and the scripted fake LLM:
 * an agent whose model is a chain (saved through the API as an array) and a reasoning effort; the
 * first model is rate limited, the second answers; the answer shows the model that answered and why
 * the chain moved. Screenshots at 1440×900 and 390×844 go to test-artifacts/e2e/model-fallback/.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { AgentRecord, ChannelRecord } from "../../src/team/types.js";
import type { FakeTurn, RecordedRequest } from "../../src/testing/fake-llm-server.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const PASSWORD = "owner-password-1";

let server: E2eServer;
let page: Page;
let log: PageLog;
let requests: RecordedRequest[];

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();

/** OpenAI (the chain's first model) is rate limited; Anthropic (the second) answers. */
const turn = (request: RecordedRequest): FakeTurn =>
  request.protocol === "openai"
    ? { error: { status: 429, headers: { "retry-after-ms": "1" } } }
    : { text: "Paris is sunny today, answered by the backup model." };

async function api(method: "GET" | "POST" | "PATCH", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

e2eStack(
  {
    before: () => resetArtifacts("model-fallback"),
    llm: { defaultTurn: turn },
    server: {
      // One fake speaks every protocol; the chain's two providers both point at it.
      envFor: (llmUrl) => ({
        DIMSUM_MODEL: "openai:gpt-test",
        OPENAI_API_KEY: "sk-test-key-1234",
        OPENAI_BASE_URL: `${llmUrl}/v1`,
        ANTHROPIC_API_KEY: "ak-test-key-1234",
        ANTHROPIC_BASE_URL: llmUrl,
      }),
    },
  },
  (stack) => {
    ({ server, page, log } = stack);
    requests = stack.llm.requests;
  },
);

describe("model chains in the web UI", () => {
  it("an answer from the chain's second model says which model answered and why it moved", async () => {
    await step("model-fallback/01-answer-wide", async () => {
      await page.setViewportSize(WIDE);
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const agent = (await api("POST", "/api/agents", {
        id: "steady",
        name: "Steady",
        emoji: "🛟",
        model: ["openai:gpt-test", "anthropic:claude-test"],
        reasoning: "low",
      })) as AgentRecord;
      expect(agent.model).toBe("openai:gpt-test,anthropic:claude-test");
      expect(agent.reasoning).toBe("low");
      const channel = (await api("POST", "/api/channels", {
        kind: "group",
        name: "Weather",
        leaderAgentId: "steady",
        agentIds: ["steady"],
        userIds: [],
      })) as ChannelRecord;
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("composer-input").waitFor();
      await byTest("composer-input").fill("What is the weather in Paris?");
      await byTest("composer-send").click();
      const answer = page.locator('[data-testid="message"][data-author-id="steady"]');
      await answer.waitFor({ timeout: 20_000 });
      await expect
        .poll(() => text(answer.getByTestId("message-text")), { timeout: 15_000 })
        .toContain("backup model");
      expect(await text(answer.getByTestId("message-model"))).toBe("anthropic:claude-test");
      const moved = await text(answer.getByTestId("run-fallback"));
      expect(moved).toContain("openai:gpt-test failed");
      expect(moved).toContain("429");
      expect(moved).toContain("answered by anthropic:claude-test");
      // OpenAI until its retries (the e2e server's policy) are spent, then one Anthropic call with its thinking budget.
      expect(requests.filter((r) => r.protocol === "openai").length).toBeGreaterThanOrEqual(1);
      const claude = requests.filter((r) => r.protocol === "anthropic");
      expect(claude).toHaveLength(1);
      expect(claude[0]?.body).toMatchObject({ thinking: { type: "enabled", budget_tokens: 2048 } });
    });

    await step("model-fallback/02-answer-phone", async () => {
      await page.setViewportSize(PHONE);
      // The sidebar slides away at phone width: the shot waits for it.
      await animationsSettled(page);
      const answer = page.locator('[data-testid="message"][data-author-id="steady"]');
      await answer.getByTestId("message-model").waitFor();
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(sideways).toBeLessThanOrEqual(0);
    });
  }, 60_000);
});
