/**
 * Settings → Remote agents in headless Chromium against a real server: the owner sees a2a.json's
 * agent read-only, a bad name is refused with the field named, a remote A2A agent (an `@a2a-js/sdk`
 * server started here, on loopback, which the config allows) is added with its token, checked, and
 * called by the assistant in the next chat with no restart, its streamed answer a nested run; then
 * removed through the in-app confirm dialog. Screenshots at 1440×900 and 390×844 go to
 * test-artifacts/e2e/a2a-settings/.
 */
import type { Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RemoteA2aAgent, startRemoteA2aAgent } from "../support/a2a-remote-agent.js";
import { AgentScripts, lastToolResult } from "../team/harness.js";
import { flow, type PageLog, pageApi, resetArtifacts, screenshot, sidewaysOverflow } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const PASSWORD = "owner-password-1";
const TOKEN = "settings-ui-token-456";
const scripts = new AgentScripts();
let server: E2eServer;
let page: Page;
let log: PageLog;
let remote: RemoteA2aAgent;

const byTest = (id: string) => page.getByTestId(id);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });

beforeAll(async () => {
  remote = await startRemoteA2aAgent(TOKEN, 200);
});

e2eStack(
  {
    before: () => resetArtifacts("a2a-settings"),
    llm: { defaultTurn: scripts.turn },
    server: {
      configFile: { tools: { fetch: { allowPrivateNetwork: true } } },
      a2a: {
        agents: {
          "research-hub": { url: "https://a2a.example.com/research", description: "Finds papers." },
        },
      },
    },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);
afterAll(async () => remote?.close());

describe("Settings → Remote agents", () => {
  it("adds a remote agent that the next chat calls, and removes it", async () => {
    await flow(page, log, server.logLines, "a2a-settings/01-added-1440", async () => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await setUpOwner(page, server.url, PASSWORD);
      await byTest("home-page").waitFor();
      await page.goto(`${server.url}/settings/remote-agents`);
      await byTest("settings-remote-agents").waitFor();
      const fromFile = page.locator('[data-remote-agent="research-hub"]');
      await fromFile.waitFor();
      expect(await text(fromFile)).toContain("from a2a.json");
      expect(await fromFile.getByTestId("remote-agent-remove").count()).toBe(0);

      // A bad name is refused, naming the field.
      await byTest("remote-agent-add-name").fill("Order Desk");
      await byTest("remote-agent-add-url").fill(remote.url);
      await byTest("remote-agent-add-submit").click();
      await until(() => text(byTest("remote-agent-add-error"))).toMatch(
        /^The name: use 1–40 lowercase letters/,
      );

      await byTest("remote-agent-add-name").fill("order-desk");
      await byTest("remote-agent-add-token").fill(TOKEN);
      await byTest("remote-agent-add-description").fill("Knows where every order is.");
      await byTest("remote-agent-add-submit").click();
      await until(() => text(byTest("remote-agent-added"))).toContain(
        'Added "order-desk" (token saved): agents can call it as a2a_order_desk from their next run.',
      );
      const added = page.locator('[data-remote-agent="order-desk"]');
      await added.getByTestId("remote-agent-token").waitFor();
      expect(await byTest("remote-agent-add-token").inputValue()).toBe("");
      expect(await page.content()).not.toContain(TOKEN);
      await added.getByTestId("remote-agent-check").click();
      await until(() => text(added.getByTestId("remote-agent-check-result"))).toContain(
        "Reachable: “Remote Helper”",
      );
      // Edited in place: the description; the saved token stays (the field is empty, never shown).
      await added.getByTestId("remote-agent-edit").click();
      expect(await added.getByTestId("remote-agent-edit-token").inputValue()).toBe("");
      await added.getByTestId("remote-agent-edit-description").fill("Knows every order, and returns too.");
      await screenshot(page, "a2a-settings/01b-edit-1440");
      await added.getByTestId("remote-agent-edit-save").click();
      await page.getByTestId("notice").filter({ hasText: 'Saved "order-desk"' }).waitFor();
      await until(() => text(added)).toContain("Knows every order, and returns too.");
      await added.getByTestId("remote-agent-token").waitFor();
      // Turned off and on again.
      await added.getByTestId("remote-agent-toggle").click();
      await until(() => text(added)).toContain("disabled");
      await added.getByTestId("remote-agent-toggle").click();
      await until(() => text(added.getByTestId("remote-agent-toggle"))).toBe("Turn off");
      expect(await text(added)).not.toContain("disabled");
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('[data-remote-agent="order-desk"]').waitFor();
    await screenshot(page, "a2a-settings/02-added-390");
    expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);

    await flow(page, log, server.logLines, "a2a-settings/03-nested-run-1440", async () => {
      await page.setViewportSize({ width: 1440, height: 900 });
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
        { toolCalls: [{ name: "a2a_order_desk", args: { task: "where is order 7?" } }] },
        (request) => ({ text: `The order desk says: ${lastToolResult(request)}` }),
      );
      await byTest("composer-input").fill("where is my order 7?");
      await byTest("composer-send").click();
      const nested = page.getByTestId("agent-run").first();
      await nested.waitFor();
      expect(await nested.getAttribute("data-agent-id")).toBe("a2a:order-desk");
      const answer = page.locator('[data-testid="message"]').last();
      await until(() => text(answer.getByTestId("message-text").last())).toContain(
        "The order desk says: Remote says: where is order 7?",
      );
      await answer.getByTestId("agent-run").locator("summary").first().click();
      expect(await text(answer.getByTestId("agent-run").getByTestId("message-text"))).toBe(
        "Remote says: where is order 7?",
      );
      expect(remote.authorizations.at(-1)).toBe(`Bearer ${TOKEN}`);
    });

    await flow(page, log, server.logLines, "a2a-settings/04-removed-1440", async () => {
      await page.goto(`${server.url}/settings/remote-agents`);
      const added = page.locator('[data-remote-agent="order-desk"]');
      await added.getByTestId("remote-agent-remove").click();
      await until(() => text(byTest("confirm-message"))).toContain("a2a_order_desk");
      await byTest("confirm-ok").click();
      await until(() => added.count()).toBe(0);
      await until(() => text(byTest("notice").last())).toContain('Removed the remote agent "order-desk".');
    });
  }, 90_000);
});
