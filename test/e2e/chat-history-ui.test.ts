/**
 * History is the record, in headless Chromium against a real server and the scripted fake LLM: a
 * finished chat (reasoning, tool cards, a called agent's nested card, an error, a stopped answer)
 * looks the same after a reload; regenerate keeps the old answer as a version; the last message can
 * be edited and resent; the flow panel shows Approve, Retry and Skip only where they apply and sits
 * beside the chat (a sheet on a phone). Screenshots at 1440×900 and 390×844 go to
 * test-artifacts/e2e/history/.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ChannelMessage, FlowRecord } from "../../src/team/types.js";
import { AgentScripts } from "../team/harness.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const FLOW_TIMEOUT_MS = 40_000;
const PASSWORD = "owner-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

const scripts = new AgentScripts();
let server: E2eServer;
let page: Page;
let log: PageLog;
let channelId = "";

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const messages = () => page.locator('[data-testid="message"]');
const stepRow = (i: number) => page.locator(`[data-testid="flow-step"][data-step-index="${i}"]`);

async function api(method: "GET" | "POST" | "PUT", path: string, data?: unknown): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

/** Sends with the composer and waits until the run it started has a stored answer. */
async function send(message: string): Promise<void> {
  const before = await messages().count();
  await byTest("composer-input").fill(message);
  await byTest("composer-send").click();
  await until(() => messages().count()).toBeGreaterThan(before);
}

/** Waits until no run is streaming (every answer is a stored message). */
async function settled(): Promise<void> {
  await until(() => byTest("run-bubble").count()).toBe(0);
}

/**
 * The message list as markup, with what legitimately differs between two loads taken out: relative
 * times and whitespace between tags.
 */
function listSnapshot(): Promise<string> {
  return page.evaluate(() => {
    const list = document.querySelector('[data-testid="message-list"]');
    if (!list) return "";
    const copy = list.cloneNode(true) as HTMLElement;
    for (const time of Array.from(copy.querySelectorAll("time"))) time.textContent = "";
    return copy.innerHTML.replace(/>\s+</g, "><").replace(/\s+/g, " ");
  });
}

/** The page does not scroll sideways. */
async function expectNoSidewaysScroll(): Promise<void> {
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
}

/** Resizes the page and waits for the layout's transitions (the sidebar sliding away) to end. */
async function resize(size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await animationsSettled(page);
}

async function shots(name: string): Promise<void> {
  await resize(WIDE);
  await screenshot(page, `history/${name}-1440`);
  await resize(PHONE);
  await expectNoSidewaysScroll();
  await screenshot(page, `history/${name}-390`);
  await page.setViewportSize(WIDE);
}

e2eStack(
  {
    before: () => resetArtifacts("history"),
    llm: { defaultTurn: scripts.turn, chunkDelayMs: 5 },
  },
  (stack) => {
    ({ server, page, log } = stack);
  },
);

describe("chat history in headless Chromium", () => {
  it(
    "shows a finished chat the same after a reload: reasoning, tools, a called agent, an error, a stop",
    async () => {
      await step("history/01-live", async () => {
        await page.setViewportSize(WIDE);
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("home-page").waitFor();
        const channel = (await api("POST", "/api/channels", {
          kind: "group",
          name: "History",
          leaderAgentId: "assistant",
          agentIds: ["assistant", "coder"],
          userIds: [],
        })) as { id: string };
        channelId = channel.id;
        await page.goto(`${server.url}/c/${channelId}`);
        await byTest("composer-input").waitFor();

        // An answer that reasons, calls the coder (whose card nests inside it) and a tool.
        scripts.add(
          "assistant",
          {
            reasoning: "The person wants a prime; the coder knows primes.",
            text: "Let me ask the coder.",
            toolCalls: [{ name: "call_agent", args: { agentId: "coder", task: "name a prime" } }],
          },
          { text: "Checking the sum too.", toolCalls: [{ name: "calculator", args: { expression: "3+4" } }] },
          { text: "The coder says **seven**, and 3+4 is 7." },
        );
        scripts.add("coder", { reasoning: "Small primes first.", text: "seven" });
        await send("name a prime please");
        await settled();
        const answer = messages().last();
        await until(() => answer.getAttribute("data-author-id")).toBe("assistant");
        expect(await answer.getByTestId("tool-card").first().getAttribute("data-tool")).toBe("call_agent");
        const nested = answer.getByTestId("agent-run");
        expect(await nested.getAttribute("data-agent-id")).toBe("coder");
        await nested.locator("summary").first().click();
        expect(await text(nested.getByTestId("message-text"))).toBe("seven");
        expect(await answer.locator('[data-testid="tool-card"][data-tool="calculator"]').count()).toBe(1);
        // Reasoning is there, folded.
        const reasoning = answer.getByTestId("reasoning").first();
        expect(await reasoning.getAttribute("open")).toBeNull();
        await nested.locator("summary").first().click();

        // A failed answer shows its error instead of nothing.
        scripts.add("assistant", { error: { status: 400 } });
        await send("this one fails");
        await settled();
        await until(() => messages().last().getByTestId("run-error").count()).toBe(1);

        // A slow answer is stopped after the next message was sent; it stays above that message.
        scripts.add("assistant", { delayMs: 20_000, text: "never" });
        await byTest("composer-input").fill("tell me a long story");
        await byTest("composer-send").click();
        await byTest("run-bubble").waitFor();
        scripts.add("coder", { text: "Quick answer from the coder." });
        await send("@coder quick one");
        await until(() => page.locator('[data-testid="message"][data-author-id="coder"]').count()).toBe(1);
        await byTest("run-stop").click();
        await settled();
        const order = await messages().evaluateAll((els) =>
          els.map((el) => {
            const who =
              el.getAttribute("data-author-type") === "user" ? "me" : el.getAttribute("data-author-id");
            return `${who}:${el.querySelector('[data-testid="run-stopped"]') ? "stopped" : ""}`;
          }),
        );
        expect(order.slice(-4)).toEqual(["me:", "assistant:stopped", "me:", "coder:"]);
      });

      const before = await listSnapshot();
      expect(before).toContain('data-testid="agent-run"');
      await shots("01-finished");
      await step("history/02-reloaded", async () => {
        await page.reload();
        await byTest("composer-input").waitFor();
        await until(() => messages().count()).toBe(8);
        await until(listSnapshot).toBe(before);
      });
      // The first answer opened up: reasoning, the called agent's card and the tool cards.
      const first = messages().nth(1);
      await first.getByTestId("agent-run").locator("summary").first().click();
      await first.getByTestId("reasoning").first().locator("summary").click();
      await first.locator('[data-testid="tool-card"][data-tool="calculator"] summary').click();
      await first.scrollIntoViewIfNeeded();
      await screenshot(page, "history/02-first-answer-1440");
      await resize(PHONE);
      await first.scrollIntoViewIfNeeded();
      await expectNoSidewaysScroll();
      await screenshot(page, "history/02-first-answer-390");
      await resize(WIDE);
      // The stored record says the same: an error part, a stop part, the nested run's parts.
      const stored = (await api("GET", `/api/channels/${channelId}/messages`)) as ChannelMessage[];
      expect(stored.map((m) => m.parts.at(-1)?.type)).toEqual([
        "text",
        "text",
        "text",
        "error",
        "text",
        "text",
        "text",
        "stopped",
      ]);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "regenerates an answer with a version switcher and edits the last message",
    async () => {
      await step("history/03-regenerated", async () => {
        scripts.add("coder", { text: "A second quick answer." });
        const answer = page.locator('[data-testid="message"][data-author-id="coder"]');
        await answer.hover();
        await answer.getByTestId("message-regenerate").click();
        await until(() => answer.getAttribute("data-versions")).toBe("2");
        await settled();
        expect(await text(answer.getByTestId("version-label"))).toBe("2/2");
        expect(await text(answer.getByTestId("message-text"))).toBe("A second quick answer.");
        await answer.getByTestId("version-prev").click();
        expect(await text(answer.getByTestId("version-label"))).toBe("1/2");
        expect(await text(answer.getByTestId("message-text"))).toBe("Quick answer from the coder.");
        await answer.getByTestId("version-next").click();

        // Copy puts the shown version's text on the clipboard.
        await page.context().grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
        await answer.getByTestId("message-copy").click();
        await until(() => text(answer.getByTestId("message-copy"))).toBe("✓ Copied");
        expect(await page.evaluate(() => navigator.clipboard.readText())).toBe("A second quick answer.");
      });
      await step("history/04-edited", async () => {
        scripts.add("coder", { text: "An answer to the edited question." });
        const mine = page.locator('[data-testid="message"][data-author-type="user"]').last();
        // Only the last own message offers Edit.
        expect(await page.locator('[data-testid="message-edit"]').count()).toBe(1);
        await mine.hover();
        await mine.getByTestId("message-edit").click();
        await mine.getByTestId("message-edit-input").fill("@coder a better question");
        await mine.getByTestId("message-edit-save").click();
        await until(() => text(mine.getByTestId("message-text"))).toBe("@coder a better question");
        expect(await mine.getByTestId("message-edited").count()).toBe(1);
        const answer = page.locator('[data-testid="message"][data-author-id="coder"]');
        await until(() => answer.getAttribute("data-versions")).toBe("3");
        await settled();
        await until(() => text(answer.getByTestId("message-text"))).toBe("An answer to the edited question.");
        expect(await text(answer.getByTestId("version-label"))).toBe("3/3");
      });
      await shots("04-versions");
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "offers Approve, Retry and Skip only where they apply, beside the chat",
    async () => {
      await api("PUT", `/api/channels/${channelId}/chain`, {
        steps: [
          { agentId: "coder", requiresApproval: true },
          { agentId: "assistant", requiresApproval: false },
        ],
      });
      const panel = byTest("flow-panel");
      await step("history/05-flow-approval", async () => {
        scripts.add("coder", { text: "Draft one." });
        await byTest("composer-input").fill("/flow write a note");
        await byTest("composer-send").click();
        await until(() => panel.getAttribute("data-status")).toBe("paused");
        expect(await stepRow(0).getByTestId("flow-step-approve").count()).toBe(1);
        expect(await stepRow(1).getByTestId("flow-step-approve").count()).toBe(0);
        // Beside the messages, not over them.
        const list = await byTest("message-list").boundingBox();
        const side = await byTest("chat-flow").boundingBox();
        expect(list && side && side.x >= list.x + list.width - 1).toBe(true);

        // An edited output is what the chat shows.
        await stepRow(0).getByTestId("flow-step-edit").click();
        await byTest("flow-step-edit-input").fill("Draft one, edited.");
        await byTest("flow-step-edit-save").click();
        const draft = page.locator('[data-testid="message"][data-author-id="coder"]').last();
        await until(() => text(draft.getByTestId("message-text"))).toBe("Draft one, edited.");
      });
      await shots("05-flow-approval");

      await step("history/06-flow-error", async () => {
        scripts.add("assistant", { error: { status: 400 } });
        await stepRow(0).getByTestId("flow-step-approve").click();
        await until(() => panel.getAttribute("data-status")).toBe("error");
        // The panel stays open on an error, with Retry and Skip; nothing to approve.
        expect(await stepRow(1).getByTestId("flow-step-retry").isVisible()).toBe(true);
        expect(await stepRow(1).getByTestId("flow-step-skip").isVisible()).toBe(true);
        expect(await page.locator('[data-testid="flow-step-approve"]').count()).toBe(0);
      });
      await shots("06-flow-error");

      await step("history/07-flow-paused-running", async () => {
        scripts.add("assistant", { delayMs: 1_500, text: "Final note." });
        await stepRow(1).getByTestId("flow-step-retry").click();
        await until(() => stepRow(1).getAttribute("data-status")).toBe("running");
        await byTest("flow-pause").click();
        await until(() => panel.getAttribute("data-status")).toBe("paused");
        // Paused while a step runs: nothing waits for approval; Resume goes on.
        expect(await page.locator('[data-testid="flow-step-approve"]').count()).toBe(0);
        await until(() => stepRow(1).getAttribute("data-status")).toBe("completed");
        expect(await page.locator('[data-testid="flow-step-approve"]').count()).toBe(0);
        await byTest("flow-resume").click();
        await until(() => panel.getAttribute("data-status")).toBe("done");
      });
      const flowId = (await panel.getAttribute("data-flow-id")) ?? "";
      const done = (await api("GET", `/api/flows/${flowId}`)) as FlowRecord;
      expect(done.steps.map((s) => s.output)).toEqual(["Draft one, edited.", "Final note."]);
      await shots("07-flow-done");
    },
    FLOW_TIMEOUT_MS,
  );

  it("logged no uncaught page errors", () => {
    expect(log.uncaught()).toEqual([]);
  });
});
