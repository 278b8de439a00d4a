/**
 * A remote A2A agent in the web chat, in headless Chromium against a real server: an agent calls the
 * remote agent (an `@a2a-js/sdk` server started here), whose streamed answer shows as a nested run
 * inside the calling answer, live and after a reload. Screenshots at 1440×900 and 390×844 go to
 * test-artifacts/e2e/a2a/.
 */
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseA2aConfig } from "../../src/a2a/remote-config.js";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const TOKEN = "remote-ui-token-123";
const scripts = new AgentScripts();
let server: E2eServer;
let page: Page;
let log: PageLog;
let remote: RemoteA2aAgent;

const byTest = (id: string) => page.getByTestId(id);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });
const messages = () => page.locator('[data-testid="message"]');

// Registered before the stack's hooks, so the remote agent listens when the server reads its config.
beforeAll(async () => {
  remote = await startRemoteA2aAgent(TOKEN, 400);
});

e2eStack(
  {
    before: () => resetArtifacts("a2a"),
    llm: { defaultTurn: scripts.turn },
    server: {
      team: {
        // Read when the server starts: the remote agent listens by then.
        get remoteAgents() {
          return parseA2aConfig(
            JSON.stringify({ agents: { "order-desk": { url: remote.url, token: TOKEN } } }),
            "a2a.json",
            {},
          );
        },
      },
    },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);
afterAll(async () => remote?.close());

describe("remote A2A agents in the web chat", () => {
  it("shows the remote agent's streamed answer as a nested run", async () => {
    await flow(page, log, server.logLines, "a2a/01-nested-remote-run", async () => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      const channel = await pageApi<{ id: string }>(page, server.url, "POST", "/api/channels", {
        kind: "group",
        name: "Orders",
        leaderAgentId: "assistant",
        agentIds: ["assistant"],
        userIds: [],
      });
      await page.goto(`${server.url}/c/${channel.id}`);
      await byTest("composer-input").waitFor();

      scripts.add(
        "assistant",
        {
          text: "Let me ask the order desk.",
          toolCalls: [{ name: "a2a_order_desk", args: { task: "where is order 42?" } }],
        },
        (request) => ({ text: `The order desk says: ${lastToolResult(request)}` }),
      );
      await byTest("composer-input").fill("where is my order 42?");
      await byTest("composer-send").click();
      // Live: the nested card appears while the remote agent streams.
      const nested = page.getByTestId("agent-run").first();
      await nested.waitFor();
      expect(await nested.getAttribute("data-agent-id")).toBe("a2a:order-desk");
      await until(() => byTest("run-bubble").count()).toBe(0);
      const answer = messages().last();
      await until(() => text(answer.getByTestId("message-text").last())).toContain(
        "The order desk says: Remote says: where is order 42?",
      );
      const stored = answer.getByTestId("agent-run");
      await stored.locator("summary").first().click();
      expect(await text(stored.getByTestId("message-text"))).toBe("Remote says: where is order 42?");
      expect(await text(stored.locator("summary").first())).toContain("a2a:order-desk");
    });
    // After a reload the nested run is still there.
    await page.reload();
    const stored = messages().last().getByTestId("agent-run");
    await stored.waitFor();
    await stored.locator("summary").first().click();
    expect(await text(stored.getByTestId("message-text"))).toBe("Remote says: where is order 42?");
    await screenshot(page, "a2a/02-after-reload-1440");
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    const phone = messages().last().getByTestId("agent-run");
    await phone.waitFor();
    await phone.locator("summary").first().click();
    await phone.getByTestId("message-text").waitFor();
    await screenshot(page, "a2a/03-phone-390");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow).toBe(false);
  }, 60_000);
});
