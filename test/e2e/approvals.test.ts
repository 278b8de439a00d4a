/**
 * Approvals as a run state, in headless Chromium against a real server and the scripted fake LLM:
 * the assistant's `git push origin main` (a default shell confirm rule) waits as an approval card in
 * its answer; Approve runs it and the model gets its result; Reject with a reason gives the model
 * the reason; Always runs it and the next such call in the chat runs without a card. A member who is
 * neither the asker nor a manager of the group sees the card without buttons (and the server refuses
 * their answer). The chat settings list the "always" grant (revoked there) and the queue mode; the
 * agent editor saves an ask-first list. Screenshots at 1440×900 and 390×844 go to
 * test-artifacts/e2e/approvals/.
 */
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { AgentRecord, ApprovalGrant, ChannelRecord } from "../../src/team/types.js";
import type { RecordedRequest } from "../../src/testing/fake-llm-server.js";
import { AgentScripts, agentOf, messagesOf } from "../team/harness.js";
import { animationsSettled, flow, type PageLog, pageApi, resetArtifacts, screenshot } from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack, setUpOwner } from "./stack.js";

const TEST_TIMEOUT_MS = 60_000;
const PASSWORD = "owner-password-1";
const MEMBER_PASSWORD = "member-password-1";
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const PUSH = "git push origin main";

const scripts = new AgentScripts();
let server: E2eServer;
let browser: Browser;
let page: Page;
let log: PageLog;
let requests: RecordedRequest[];
let channelId = "";
/** A member of the group who neither asked nor manages it, in a browser context of their own. */
let memberContext: BrowserContext | undefined;
let member: Page;
let memberCsrf = "";

const byTest = (id: string) => page.getByTestId(id);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const text = async (locator: Locator) => ((await locator.textContent()) ?? "").replace(/\s+/g, " ").trim();
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 50 });
const messages = (target: Page = page) => target.locator('[data-testid="message"]');
const answers = (target: Page = page) =>
  target.locator('[data-testid="message"][data-author-id="assistant"]');
/** The approval card of a call, in its stored answer. */
const pendingCard = (callId: string, target: Page = page) =>
  target.locator(
    `[data-testid="message"][data-author-id="assistant"] [data-testid="approval-card"][data-call-id="${callId}"]`,
  );
/** The stored answer holding a call (as an approval card or a tool card). */
const answerOf = (callId: string, target: Page = page) =>
  answers(target).filter({ has: target.locator(`[data-call-id="${callId}"]`) });

async function api(
  method: "GET" | "POST" | "PATCH" | "DELETE",
  path: string,
  data?: unknown,
): Promise<unknown> {
  return pageApi(page, server.url, method, path, data);
}

/** The first request of the assistant that carried a call's result, from the fake LLM's log. */
function requestWithResult(callId: string): RecordedRequest | undefined {
  return requests.find(
    (request) =>
      agentOf(request) === "assistant" &&
      messagesOf(request).some((m) => m.role === "tool" && m.tool_call_id === callId),
  );
}

/** The tool result the model was given for a call. */
function toolResultSent(callId: string): string | undefined {
  const result = messagesOf(requestWithResult(callId)).find(
    (m) => m.role === "tool" && m.tool_call_id === callId,
  );
  if (!result) return undefined;
  return typeof result.content === "string" ? result.content : JSON.stringify(result.content);
}

/** Sends with the composer and waits for the message to be listed. */
async function send(message: string): Promise<void> {
  const before = await messages().count();
  await byTest("composer-input").fill(message);
  await byTest("composer-send").click();
  await until(() => messages().count()).toBeGreaterThan(before);
}

/** Queues a turn that asks to push, then the answer after the tool result. */
function scriptPush(callId: string, answer: string): void {
  scripts.add(
    "assistant",
    { text: "Pushing now.", toolCalls: [{ id: callId, name: "execute_command", args: { command: PUSH } }] },
    { text: answer },
  );
}

/** Waits until the answer holding the call is finished, with `words` as its last words. */
async function answered(callId: string, words: string): Promise<Locator> {
  const answer = answerOf(callId);
  await until(() => text(answer.getByTestId("message-text").last())).toBe(words);
  await until(() => answer.getByTestId("run-status").count()).toBe(0);
  await until(() => page.getByTestId("run-bubble").count()).toBe(0);
  return answer;
}

/** The page does not scroll sideways. */
async function expectNoSidewaysScroll(target: Page): Promise<void> {
  const [scroll, client] = await target.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll).toBeLessThanOrEqual(client);
}

async function resize(target: Page, size: { width: number; height: number }): Promise<void> {
  await target.setViewportSize(size);
  await animationsSettled(target);
}

/** The pending card at both sizes, scrolled into view. */
async function shots(target: Page, callId: string, name: string): Promise<void> {
  for (const [size, label] of [
    [WIDE, "1440"],
    [PHONE, "390"],
  ] as const) {
    await resize(target, size);
    await pendingCard(callId, target).scrollIntoViewIfNeeded();
    await expectNoSidewaysScroll(target);
    const card = await pendingCard(callId, target).boundingBox();
    expect(card && card.x + card.width).toBeLessThanOrEqual(size.width);
    await screenshot(target, `approvals/${name}-${label}`);
  }
  await resize(target, WIDE);
}

e2eStack(
  {
    before: () => resetArtifacts("approvals"),
    llm: { defaultTurn: scripts.turn, chunkDelayMs: 2 },
    // The group keeps the default queue mode (collect) that this test shows and then changes.
    server: { queueDefaults: true },
  },
  (stack) => {
    ({ server, page, log, browser } = stack);
    requests = stack.llm.requests;
  },
);

describe("approvals in headless Chromium", () => {
  it(
    "asks before git push; Approve runs it and the model gets the result; a member sees no buttons",
    async () => {
      await step("approvals/01-pending", async () => {
        await page.setViewportSize(WIDE);
        await setUpOwner(page, server.url, PASSWORD);
        await byTest("home-page").waitFor();
        const mia = (await api("POST", "/api/users", {
          username: "mia",
          password: MEMBER_PASSWORD,
          role: "member",
        })) as { id: string };
        const channel = (await api("POST", "/api/channels", {
          kind: "group",
          name: "Deploys",
          leaderAgentId: "assistant",
          agentIds: ["assistant"],
          userIds: [mia.id],
        })) as ChannelRecord;
        channelId = channel.id;
        await page.goto(`${server.url}/c/${channelId}`);
        await byTest("composer-input").waitFor();

        scriptPush("call_push_1", "I tried to push main.");
        await send("please push main");
        // A group collects a burst of messages before answering; the message says so meanwhile.
        await page.locator('[data-testid="queued-label"][data-mode="collect"]').waitFor();
        const card = pendingCard("call_push_1");
        await card.waitFor();
        expect(await page.getByTestId("queued-label").count()).toBe(0);
        expect(await text(card.getByTestId("approval-tool"))).toBe("execute_command");
        expect(await text(card.getByTestId("approval-summary"))).toBe(PUSH);
        expect(await text(card.getByTestId("approval-reason"))).toContain("confirm rule");
        // The owner created the group and asked: they decide.
        for (const id of ["approval-approve", "approval-always", "approval-reject"])
          expect(await card.getByTestId(id).isVisible()).toBe(true);
        const answer = answerOf("call_push_1");
        await until(() => answer.getByTestId("run-status").getAttribute("data-status")).toBe("waiting");
        expect(await text(answer.getByTestId("run-status"))).toBe("waiting for approval");
        expect(await answer.locator(".spinner").count()).toBe(0);
        await until(() => text(byTest("composer-hint"))).toContain("waits for approval");
        // The model was not asked again while the call waits.
        expect(toolResultSent("call_push_1")).toBeUndefined();
        // The run says what it waits on.
        const runId = (await answer.getAttribute("data-run-id")) ?? "";
        const run = (await api("GET", `/api/runs/${runId}`)) as {
          status: string;
          pendingApprovals?: Array<{ callId: string; summary: string }>;
        };
        expect(run.status).toBe("waiting");
        expect(run.pendingApprovals?.map((p) => [p.callId, p.summary])).toEqual([["call_push_1", PUSH]]);
        // A reload shows the same: the card with its buttons, the answer waiting.
        await page.reload();
        await pendingCard("call_push_1").getByTestId("approval-approve").waitFor();
        await until(() => answer.getByTestId("run-status").getAttribute("data-status")).toBe("waiting");
        // A message sent now waits for the decision, and says so.
        await send("and tag it v1");
        const waitingLabel = messages().last().getByTestId("queued-label");
        await until(() => waitingLabel.getAttribute("data-mode")).toBe("waiting");
        expect(await text(waitingLabel)).toBe("waits for approval");
      });
      await shots(page, "call_push_1", "01-pending-owner");

      await step("approvals/02-member-sees-no-buttons", async () => {
        memberContext = await browser.newContext({ viewport: WIDE });
        member = await memberContext.newPage();
        member.setDefaultTimeout(10_000);
        await member.goto(`${server.url}/c/${channelId}`);
        await member.getByTestId("login-form").waitFor();
        await member.getByTestId("login-username").fill("mia");
        await member.getByTestId("login-password").fill(MEMBER_PASSWORD);
        await member.getByTestId("login-submit").click();
        const card = pendingCard("call_push_1", member);
        await card.waitFor();
        expect(await text(card.getByTestId("approval-summary"))).toBe(PUSH);
        expect(await card.locator("button").count()).toBe(0);
        // A member who cannot list accounts still reads the asker's name, from the card itself.
        expect(await text(card.getByTestId("approval-waiting"))).toBe("⏳ Waiting for owner's approval");
        // Nor may the member answer through the API.
        const me = await member.request.get(`${server.url}/api/auth/me`);
        memberCsrf = ((await me.json()) as { csrfToken: string }).csrfToken;
        const runId = (await answerOf("call_push_1", member).getAttribute("data-run-id")) ?? "";
        const refused = await member.request.post(`${server.url}/api/runs/${runId}/approvals/call_push_1`, {
          headers: { "x-csrf-token": memberCsrf },
          data: { decision: "approve" },
        });
        expect(refused.status()).toBe(403);
      });
      await shots(member, "call_push_1", "02-pending-member");

      await step("approvals/03-approved", async () => {
        await pendingCard("call_push_1").getByTestId("approval-approve").click();
        const answer = await answered("call_push_1", "I tried to push main.");
        // The run went on (the message that waited is its to read: see the next test).
        expect(await page.getByTestId("queued-label").count()).toBe(0);
        expect(await pendingCard("call_push_1").count()).toBe(0);
        const outcome = answer.getByTestId("approval-outcome");
        expect(await outcome.getAttribute("data-state")).toBe("approved");
        expect(await text(outcome)).toBe("✓ Approved by you");
        // The command ran (it fails here: no repository, no remote) and the model got its result.
        const sent = toolResultSent("call_push_1") ?? "";
        expect(sent).not.toBe("");
        expect(sent).not.toMatch(/declined|needs approval/);
        const tool = answer.locator('[data-testid="tool-card"][data-tool="execute_command"]');
        await tool.locator("summary").click();
        expect((await text(tool.getByTestId("tool-output"))).length).toBeGreaterThan(0);
        // The member saw it decided, live.
        await until(() =>
          answers(member).last().getByTestId("approval-outcome").getAttribute("data-state"),
        ).toBe("approved");
        expect(await pendingCard("call_push_1", member).count()).toBe(0);
      });
    },
    TEST_TIMEOUT_MS,
  );

  it("the run that waited reads the message sent while it waited, with the tool's result", () => {
    const resumed = requestWithResult("call_push_1");
    expect(resumed).toBeDefined();
    expect(JSON.stringify(messagesOf(resumed))).toContain("and tag it v1");
  });

  it(
    "Reject with a reason: the model reads the reason as the tool's result",
    async () => {
      await step("approvals/04-rejected", async () => {
        scriptPush("call_push_2", "Understood, I will not push.");
        await send("push main again");
        const card = pendingCard("call_push_2");
        await card.waitFor();
        await card.getByTestId("approval-reject").click();
        await card.getByTestId("approval-reject-reason").fill("Not on a Friday");
        await screenshot(page, "approvals/04-reject-reason-1440");
        await card.getByTestId("approval-reject-confirm").click();
        const answer = await answered("call_push_2", "Understood, I will not push.");
        const outcome = answer.getByTestId("approval-outcome");
        expect(await outcome.getAttribute("data-state")).toBe("rejected");
        expect(await text(outcome)).toBe("✕ Rejected by you: Not on a Friday");
        expect(toolResultSent("call_push_2")).toContain("Not on a Friday");
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "Always: the next such call in the chat runs without a card; the grant is listed and revoked in the settings",
    async () => {
      await step("approvals/05-always", async () => {
        scriptPush("call_push_3", "Pushed, and I may from now on.");
        await send("push main, and you may always");
        await pendingCard("call_push_3").getByTestId("approval-always").click();
        const answer = await answered("call_push_3", "Pushed, and I may from now on.");
        expect(await text(answer.getByTestId("approval-outcome"))).toBe(
          "✓ Always allowed in this chat — approved by you",
        );
        expect(toolResultSent("call_push_3")).not.toMatch(/declined/);
        const grants = (await api("GET", `/api/channels/${channelId}/approvals`)) as ApprovalGrant[];
        expect(grants.map((g) => [g.agentId, g.tool])).toEqual([["assistant", "execute_command"]]);

        scriptPush("call_push_4", "Pushed again without asking.");
        await send("push main once more");
        const again = await answered("call_push_4", "Pushed again without asking.");
        expect(await again.getByTestId("approval-card").count()).toBe(0);
        expect(await again.locator('[data-testid="tool-card"][data-tool="execute_command"]').count()).toBe(1);
        const sent = toolResultSent("call_push_4") ?? "";
        expect(sent).not.toBe("");
        expect(sent).not.toMatch(/declined|needs approval/);
      });

      await step("approvals/06-settings", async () => {
        await byTest("channel-settings-link").click();
        await byTest("channel-settings-page").waitFor();
        const grant = page.locator('[data-testid="approval-grant"]');
        await grant.waitFor();
        expect(await grant.getAttribute("data-tool")).toBe("execute_command");
        expect(await text(grant)).toContain("may run execute_command");
        // A group collects messages sent while an agent works, unless told otherwise.
        expect(await byTest("queue-mode-select").inputValue()).toBe("collect");
        await byTest("queue-mode-select").selectOption("followup");
        await until(
          async () => ((await api("GET", `/api/channels/${channelId}`)) as ChannelRecord).queueMode,
        ).toBe("followup");
        expect(await text(byTest("queue-mode-explanation"))).toContain("finishes undisturbed");
        await byTest("approval-grants").scrollIntoViewIfNeeded();
        await screenshot(page, "approvals/06-settings-1440");
        await resize(page, PHONE);
        await byTest("approval-grants").scrollIntoViewIfNeeded();
        await expectNoSidewaysScroll(page);
        await screenshot(page, "approvals/06-settings-390");
        await resize(page, WIDE);
        await grant.getByTestId("approval-grant-revoke").click();
        await byTest("approval-grants-empty").waitFor();
        expect(await api("GET", `/api/channels/${channelId}/approvals`)).toEqual([]);
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "saves an agent's ask-first list from the agent editor",
    async () => {
      await step("approvals/07-ask-first", async () => {
        await page.goto(`${server.url}/agents/coder`);
        // The editor shows the agent once the list has loaded (filling earlier would be reset).
        await until(() => byTest("agent-name").inputValue()).toBe("Coder");
        await byTest("agent-ask-first").fill("calculator,\ngithub_*");
        await byTest("agent-save").click();
        await until(async () => ((await api("GET", "/api/agents/coder")) as AgentRecord).askFirst).toEqual([
          "calculator",
          "github_*",
        ]);
        await page.reload();
        await until(() => byTest("agent-ask-first").inputValue()).toBe("calculator, github_*");
        // Cleared, it is saved empty.
        await byTest("agent-ask-first").fill("");
        await byTest("agent-save").click();
        await until(async () => ((await api("GET", "/api/agents/coder")) as AgentRecord).askFirst).toEqual(
          [],
        );
      });
    },
    TEST_TIMEOUT_MS,
  );

  it("logged no page error or CSP violation", async () => {
    await memberContext?.close();
    expect(log.uncaught()).toEqual([]);
    expect(log.cspViolations()).toEqual([]);
  });
});
