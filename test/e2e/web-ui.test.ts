/**
 * The web UI end to end in real headless Chromium against a real server, team and SQLite file, its
 * agents backed by the scripted fake LLM: log in, create an agent with a persona, open a group and
 * @mention an agent, watch the answer stream with a tool card, stop a run, and run a two-step chain
 * that pauses for approval. The flows build on each other, in order, in one page.
 */
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ChannelMessage, FlowRecord, SoulFile, TeamRun } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, agentOf, systemOf } from "../team/harness.js";
import { flow, type PageLog, resetArtifacts, runTextsOf } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const FLOW_TIMEOUT_MS = 30_000;
const PASSWORD = "owner-password-1";
const PERSONA = "# Math Bot\n\nYou check every sum twice.";
const PERSONA_EXTRA = "Always show your working.";
const FIRST_WORDS = "Let me work it out with the calculator first.";
const FINAL_WORDS = "The calculator says six times seven is 42, so the answer is 42.";

const scripts = new AgentScripts();
let llm: FakeLlmServer;
let server: E2eServer;
let page: Page;
let log: PageLog;
let channelId = "";

const byTest = (id: string) => page.getByTestId(id);

/** Runs a flow with a screenshot after it and the browser's view of things on failure. */
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);

const attr = (locator: Locator, name: string) => () => locator.getAttribute(name);
const text = (locator: Locator) => async () => ((await locator.textContent()) ?? "").trim();
/** Polls until the value matches, for up to 10 s (vitest's default of 1 s is tight on a busy CI box). */
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const squash = (s: string) => s.replace(/\s+/g, " ").trim();

/** Waits for a notice, then dismisses every notice, so later steps start from a page without them. */
async function seeNotice(message: string): Promise<void> {
  await page.getByTestId("notice").filter({ hasText: message }).waitFor();
  const buttons = byTest("notice-dismiss");
  // One at a time: Preact re-renders after a click, so the next click waits for the list to shrink.
  for (let left = await buttons.count(); left > 0; left = await buttons.count()) {
    await buttons.first().click();
    await until(() => buttons.count()).toBeLessThan(left);
  }
}

/** GETs an API path with the browser's own session cookie. */
async function apiGet<T>(path: string): Promise<T> {
  const res = await page.request.get(server.url + path);
  const body = await res.text();
  if (res.status() !== 200) throw new Error(`GET ${path}: ${res.status()} ${body}`);
  return JSON.parse(body) as T;
}

e2eStack(
  {
    before: resetArtifacts,
    // Every reply streams in small pieces with a pause between them, so the page shows text growing.
    llm: { defaultTurn: scripts.turn, chunkDelayMs: 40 },
  },
  (stack) => {
    ({ llm, server, page, log } = stack);
  },
);

describe("web UI in headless Chromium", () => {
  it(
    "sets up the owner, logs out, and logs in through the login form",
    async () => {
      await step("01-login", async () => {
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("app-shell").waitFor();
        await byTest("logout").click();

        await byTest("login-form").waitFor();
        await byTest("login-username").fill("owner");
        await byTest("login-password").fill("wrong-password");
        await byTest("login-submit").click();
        await byTest("login-error").waitFor();
        await byTest("login-password").fill(PASSWORD);
        await byTest("login-submit").click();
        await byTest("home-page").waitFor();
        expect(await text(byTest("current-user"))()).toBe("owner");
        expect(await text(byTest("home-username"))()).toBe("owner");
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "creates an agent with a SOUL.md persona in the agent editor",
    async () => {
      await step("02-agent-created", async () => {
        await byTest("nav-agents").click();
        await byTest("agent-new").click();
        await byTest("agent-form").waitFor();
        await byTest("agent-id").fill("mathbot");
        await byTest("agent-name").fill("Math Bot");
        await byTest("agent-emoji").fill("🧮");
        await byTest("agent-tools-list").check();
        await byTest("agent-tools-allow-calculator").check();
        await byTest("agent-memory").uncheck();
        await byTest("soul-input").fill(PERSONA);
        await byTest("agent-save").click();

        const item = byTest("agent-item-mathbot");
        await item.waitFor();
        // textContent runs the parts together; the rendered text has the spaces a person sees.
        // biome-ignore lint/performance/useDomNodeTextContent: the layout's spacing is what is checked
        expect(squash(await item.innerText())).toContain("🧮 Math Bot @mathbot");
        expect(await item.getByTestId("agent-soul-warning").count()).toBe(0);
        await page.waitForURL(/\/agents\/mathbot$/);

        // Edit the saved persona with the SOUL.md editor of the existing agent.
        const soul = byTest("soul-input");
        await until(() => soul.inputValue()).toBe(PERSONA);
        await soul.fill(`${PERSONA}\n\n${PERSONA_EXTRA}`);
        await byTest("soul-save").click();
        await seeNotice("SOUL.md saved.");
      });
      const saved = await apiGet<SoulFile>("/api/agents/mathbot/soul");
      expect(saved).toMatchObject({ status: "ok", content: `${PERSONA}\n\n${PERSONA_EXTRA}` });
      const agents = await apiGet<Array<{ id: string; emoji: string; toolsAllow?: string[] }>>("/api/agents");
      expect(agents.find((a) => a.id === "mathbot")).toMatchObject({
        emoji: "🧮",
        toolsAllow: ["calculator"],
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "opens a group of two agents and sends an @mention picked from the autocomplete",
    async () => {
      scripts.add(
        "mathbot",
        { text: FIRST_WORDS, toolCalls: [{ name: "calculator", args: { expression: "6*7" } }] },
        { text: ` ${FINAL_WORDS}` },
      );
      await step("03-mention-menu", async () => {
        await byTest("new-channel").click();
        await byTest("new-channel-kind-group").click();
        await byTest("new-channel-name").fill("Numbers");
        await byTest("new-channel-agent-mathbot").check();
        await byTest("new-channel-agent-writer").check();
        await byTest("new-channel-submit").click();
        const chat = byTest("chat-page");
        await chat.and(page.locator("[data-channel-id]")).waitFor();
        channelId = (await chat.getAttribute("data-channel-id")) ?? "";
        expect(await text(byTest("chat-title"))()).toBe("# Numbers");
        expect(await text(byTest(`channel-item-${channelId}`))()).toContain("Numbers");

        await byTest("composer-input").click();
        await page.keyboard.type("@");
        await byTest("mention-menu").waitFor();
        const options = await byTest("mention-option").evaluateAll((els) =>
          els.map((el) => el.getAttribute("data-agent-id")),
        );
        expect(options).toEqual(["mathbot", "writer", "all"]);
      });
      await step("03-mention-sent", async () => {
        await page.locator('[data-testid="mention-option"][data-agent-id="mathbot"]').click();
        await byTest("mention-menu").waitFor({ state: "detached" });
        expect(await byTest("composer-input").inputValue()).toBe("@mathbot ");
        await page.keyboard.type("what is 6*7?");
        await byTest("composer-send").click();
        const mine = page.locator('[data-testid="message"][data-author-type="user"]');
        await mine.waitFor();
        expect(squash(await text(mine.getByTestId("message-text"))())).toBe("@mathbot what is 6*7?");
        expect(await byTest("composer-input").inputValue()).toBe("");
      });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "streams the answer live with a calculator tool card, and stores it",
    async () => {
      let runId = "";
      await step("04-streamed-answer", async () => {
        const bubble = byTest("run-bubble").first();
        await bubble.waitFor();
        runId = (await bubble.getAttribute("data-run-id")) ?? "";
        expect(runId).not.toBe("");
        const card = page.locator('[data-testid="tool-card"][data-tool="calculator"]');
        await card.waitFor();
        await until(attr(card, "data-status")).toBe("ok");
        expect(await text(card.getByTestId("tool-name"))()).toBe("calculator");
        expect(await text(card.getByTestId("tool-status"))()).toBe("done");

        const answer = page.locator(`[data-testid="message"][data-run-id="${runId}"]`);
        await answer.waitFor();
        // Its parts in order: what it said first, the tool card, then the final answer.
        const texts = answer.getByTestId("message-text");
        expect(squash(await text(texts.first())())).toBe(FIRST_WORDS);
        expect(squash(await text(texts.last())())).toContain(FINAL_WORDS);
        expect(await answer.getByTestId("message-author").textContent()).toBe("Math Bot");
        await answer.getByTestId("tool-card").locator("summary").click();
        expect(await text(answer.getByTestId("tool-output"))()).toBe("42");
      });

      // The bubble showed the text growing piece by piece before the stored message replaced it.
      const stored = await apiGet<ChannelMessage[]>(`/api/channels/${channelId}/messages`);
      const answer = stored.find((m) => m.runId === runId);
      expect(answer?.author).toEqual({ type: "agent", id: "mathbot" });
      expect(answer?.text).toContain(FINAL_WORDS);
      const full = squash(answer?.text ?? "");
      const seen = (await runTextsOf(page, runId)).map(squash).filter((s) => s !== "");
      expect(seen.length).toBeGreaterThan(2);
      // The bubble shows both turns' text; the stored message is the answer after the tool call.
      const last = seen.at(-1) ?? "";
      expect(last.endsWith(full)).toBe(true);
      expect(seen.filter((shown) => !last.startsWith(shown))).toEqual([]);
      expect(seen.some((shown) => shown.length < FIRST_WORDS.length)).toBe(true);
      expect(seen.some((shown) => shown.length > FIRST_WORDS.length && shown.length < last.length)).toBe(
        true,
      );

      // The persona saved in the editor is the model's system prompt; the tool result came back.
      const mathbot = llm.requests.filter((r) => agentOf(r) === "mathbot");
      expect(mathbot).toHaveLength(2);
      expect(systemOf(mathbot[0])).toContain("You check every sum twice.");
      expect(systemOf(mathbot[0])).toContain(PERSONA_EXTRA);
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "stops a run with its stop button",
    async () => {
      // The model holds its answer far longer than the test waits.
      scripts.add("writer", { delayMs: 25_000, text: "this answer never arrives" });
      let runId = "";
      await step("05-run-stopped", async () => {
        await byTest("composer-input").fill("@writer tell me a very long story");
        await byTest("composer-send").click();
        const bubble = byTest("run-bubble");
        await bubble.waitFor();
        runId = (await bubble.getAttribute("data-run-id")) ?? "";
        await until(attr(bubble.getByTestId("run-status"), "data-status")).toBe("running");
        await bubble.getByTestId("run-stop").click();
        // The stopped answer is stored: the message that replaces the bubble says it was stopped.
        const stopped = page.locator(`[data-testid="message"][data-run-id="${runId}"]`);
        await stopped.waitFor();
        const status = stopped.getByTestId("run-status");
        expect(await status.getAttribute("data-status")).toBe("cancelled");
        expect(await text(status)()).toBe("stopped");
        expect(await text(stopped.getByTestId("run-stopped"))()).toContain("Stopped");
        await page.locator('[data-testid="run-stop"]').waitFor({ state: "detached" });
      });
      expect(await apiGet<TeamRun>(`/api/runs/${runId}`)).toMatchObject({
        id: runId,
        agentId: "writer",
        status: "cancelled",
      });
      const stored = await apiGet<ChannelMessage[]>(`/api/channels/${channelId}/messages`);
      expect(stored.find((m) => m.runId === runId)?.parts.at(-1)).toMatchObject({ type: "stopped" });
    },
    FLOW_TIMEOUT_MS,
  );

  it(
    "sets a two-step chain in the chain editor and runs it through an approval pause",
    async () => {
      await step("06-chain-editor", async () => {
        await byTest("channel-settings-link").click();
        await byTest("chain-editor").waitFor();
        await byTest("chain-add-step").click();
        await byTest("chain-add-step").click();
        const steps = byTest("chain-step");
        await steps.nth(0).getByTestId("chain-step-agent").selectOption("writer");
        await steps.nth(0).getByTestId("chain-step-approval").check();
        await steps.nth(0).getByTestId("chain-step-instruction").fill("Draft a short launch note.");
        await steps.nth(1).getByTestId("chain-step-agent").selectOption("mathbot");
        await byTest("chain-save").click();
        await seeNotice("Chain saved.");
      });
      const channel = await apiGet<{ chain: Array<{ agentId: string; requiresApproval: boolean }> }>(
        `/api/channels/${channelId}`,
      );
      expect(channel.chain.map((s) => [s.agentId, s.requiresApproval])).toEqual([
        ["writer", true],
        ["mathbot", false],
      ]);

      scripts.add("writer", { text: "Draft v1: Dimsum launches today." });
      scripts.add("mathbot", { text: "Checked: the launch note adds up." });
      const panel = byTest("flow-panel");
      const stepRow = (i: number) => page.locator(`[data-testid="flow-step"][data-step-index="${i}"]`);
      await step("06-flow-paused", async () => {
        await byTest("channel-back").click();
        await byTest("composer-input").fill("/flow write the launch note");
        await byTest("composer-send").click();
        await panel.waitFor();
        await until(attr(panel, "data-status")).toBe("paused");
        expect(await text(byTest("flow-status"))()).toBe("paused");
        expect(await stepRow(0).getAttribute("data-status")).toBe("completed");
        expect(await stepRow(1).getAttribute("data-status")).toBe("waiting");
        expect(await text(stepRow(0).getByTestId("flow-step-output"))()).toBe(
          "Draft v1: Dimsum launches today.",
        );
      });
      await step("06-flow-done", async () => {
        await stepRow(0).getByTestId("flow-step-approve").click();
        await until(attr(panel, "data-status")).toBe("done");
        // A finished flow folds away; open it and both steps' outputs.
        await byTest("flow-toggle").click();
        for (const i of [0, 1]) {
          await until(attr(stepRow(i), "data-status")).toBe("completed");
          await stepRow(i).locator("details.step-output > summary").click();
        }
        expect(await text(stepRow(0).getByTestId("flow-step-output"))()).toBe(
          "Draft v1: Dimsum launches today.",
        );
        expect(await text(stepRow(1).getByTestId("flow-step-output"))()).toBe(
          "Checked: the launch note adds up.",
        );
      });
      const flowId = (await panel.getAttribute("data-flow-id")) ?? "";
      const done = await apiGet<FlowRecord>(`/api/flows/${flowId}`);
      expect(done.status).toBe("done");
      expect(done.steps.map((s) => [s.agentId, s.status, s.output])).toEqual([
        ["writer", "completed", "Draft v1: Dimsum launches today."],
        ["mathbot", "completed", "Checked: the launch note adds up."],
      ]);
    },
    FLOW_TIMEOUT_MS,
  );

  it("logged no Content Security Policy violations and no uncaught page errors", () => {
    expect(log.cspViolations()).toEqual([]);
    expect(log.uncaught()).toEqual([]);
  });
});
