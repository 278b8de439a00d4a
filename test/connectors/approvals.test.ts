/**
 * Approvals from the external chat, with the real team and the scripted fake LLM: the assistant's
 * `git push origin main` (a default shell confirm rule) waits, and the chat gets a prompt with
 * Approve / Always / Reject buttons (Telegram inline keyboard, Feishu card). A press by the person
 * who asked decides it (the model then reads the result, and the answer reaches the chat); a press by
 * anyone else, or with forged data, is refused and the run keeps waiting. Decisions taken elsewhere
 * and runs that end settle the prompt.
 */
import { describe, expect, it } from "vitest";
import { NOT_OPEN, NOT_YOURS } from "../../src/connectors/approval-buttons.js";
import type { ChannelMessage, TeamRun } from "../../src/team/types.js";
import {
  buildFeishuCardAction,
  buildFeishuEvent,
  cardButtons,
  FakeFeishu,
} from "../../src/testing/fake-feishu.js";
import type { RecordedRequest } from "../../src/testing/fake-llm-types.js";
import { FakeTelegram, type FakeTelegramMessage } from "../../src/testing/fake-telegram.js";
import {
  type ConnectorServer,
  eventually,
  onCleanup,
  startConnector,
  startConnectorServer,
} from "./harness.js";

const PUSH = { toolCalls: [{ name: "execute_command", args: { command: "git push origin main" } }] };

/** The tool results the model was sent, over all requests, in order. */
function toolResults(requests: readonly RecordedRequest[]): string[] {
  const last = requests.at(-1)?.body as { messages?: Array<{ role: string; content: unknown }> } | undefined;
  return (last?.messages ?? [])
    .filter((m) => m.role === "tool")
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

/** The run of a chat that waits for approval. */
async function waitingRun(server: ConnectorServer, connectorId: string, chatId: string): Promise<TeamRun> {
  let found: TeamRun | undefined;
  await eventually(async () => {
    const messages = await server.channelMessages(connectorId, chatId);
    for (const runId of messages.map((m) => m.runId).filter((id): id is string => id !== undefined)) {
      const run = await server.team.getRun(server.ownerActor, runId);
      if (run.status === "waiting") found = run;
    }
    return found !== undefined;
  }, "a run waiting for approval");
  return found as TeamRun;
}

async function statusOf(server: ConnectorServer, runId: string): Promise<TeamRun["status"]> {
  return (await server.team.getRun(server.ownerActor, runId)).status;
}

/** The Dimsum user a chat's first message was posted as. */
async function asker(server: ConnectorServer, connectorId: string, chatId: string): Promise<ChannelMessage> {
  const first = (await server.channelMessages(connectorId, chatId)).find((m) => m.author.type === "user");
  if (!first) throw new Error("no message from a person");
  return first;
}

async function telegramSetup(mode: "polling" | "webhook") {
  const server = await startConnectorServer();
  const telegram = await FakeTelegram.start();
  onCleanup(() => telegram.close());
  const created = await server.createConnector({
    type: "telegram",
    name: "Ops bot",
    agentId: "assistant",
    settings:
      mode === "polling"
        ? { mode, baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false }
        : { mode, baseUrl: telegram.url, publicUrl: server.url, streaming: false },
    secrets: { botToken: telegram.token },
  });
  await startConnector(server, created.id);
  const prompt = async (count = 1): Promise<FakeTelegramMessage> => {
    await telegram.waitUntil(
      () => telegram.sent.filter((m) => m.text.startsWith("🔐")).length >= count,
      "the approval prompt",
    );
    return structuredClone(
      telegram.sent.filter((m) => m.text.startsWith("🔐"))[count - 1] as FakeTelegramMessage,
    );
  };
  return { server, telegram, created, prompt };
}

describe("approvals from Telegram", () => {
  it("asks with three buttons; the asker's Approve runs the call and the answer reaches the chat", async () => {
    const { server, telegram, created, prompt } = await telegramSetup("polling");
    server.llm.enqueue(PUSH, { text: "Pushed to main." });
    telegram.userMessage({ chatId: 501, userId: 51, text: "Push it", username: "tess" });

    const asked = await prompt();
    const run = await waitingRun(server, created.id, "501");
    expect(asked.chatId).toBe("501");
    expect(asked.text).toContain("execute_command");
    expect(asked.text).toContain("git push origin main");
    expect(asked.text).toMatch(/Why: .+/);
    const buttons = (asked.buttons ?? []).flat();
    expect(buttons.map((b) => b.text)).toEqual(["✅ Approve", "♾️ Always", "❌ Reject"]);
    for (const b of buttons) {
      expect(Buffer.byteLength(b.callback_data ?? "")).toBeLessThanOrEqual(64);
      // Only a token: no run or call id travels through the platform.
      expect(b.callback_data).not.toContain(run.id);
      expect(b.callback_data).not.toContain(run.pendingApprovals?.[0]?.callId ?? "?");
    }
    const requestsBefore = server.llm.requests.length;

    telegram.pressButton({ message: asked, button: "Approve", userId: 51, username: "tess" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 1, "the callback answer");
    expect(telegram.callbackAnswers[0]).toMatchObject({ text: "Approved", showAlert: false });
    await telegram.waitUntil(
      () => telegram.sent.some((m) => m.text === "Pushed to main."),
      "the final answer",
    );
    // The prompt shows the decision and who took it, without buttons.
    const settled = telegram.message(asked.messageId);
    expect(settled?.buttons).toBeUndefined();
    expect(settled?.text).toContain("✅ Approved by tess.");
    expect(await statusOf(server, run.id)).toBe("done");
    // The model's next request carries the command's result, not a refusal.
    expect(server.llm.requests.length).toBeGreaterThan(requestsBefore);
    const result = toolResults(server.llm.requests).at(-1) ?? "";
    expect(result).toMatch(/exit code/);
    expect(result).not.toMatch(/declined|needs approval/);
    // The ticket is gone once decided.
    const tickets = server.db
      .prepare("SELECT count(*) AS n FROM connector_state WHERE connector_id = ? AND key LIKE 'approval%'")
      .get(created.id) as { n: number };
    expect(tickets.n).toBe(0);
  });

  it("leaves the streamed text above the prompt, and streams the rest of the answer below it", async () => {
    const server = await startConnectorServer({ chunkDelayMs: 5, chunkSize: 4 });
    const telegram = await FakeTelegram.start();
    onCleanup(() => telegram.close());
    const created = await server.createConnector({
      type: "telegram",
      name: "Streamer",
      agentId: "assistant",
      settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1 },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    server.llm.enqueue({ text: "I will push now.", ...PUSH }, { text: "Pushed, all green." });
    telegram.userMessage({ chatId: 551, userId: 55, text: "Push it", username: "tess" });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.text.startsWith("🔐")), "the prompt");
    const [preview, asked] = telegram.sent;
    expect(preview?.text).toBe("I will push now.");
    expect(asked?.text.startsWith("🔐")).toBe(true);

    telegram.pressButton({ message: asked!, button: "Approve", userId: 55, username: "tess" });
    await telegram.waitUntil(
      () =>
        telegram.sent.some((m) => m.messageId > asked!.messageId && m.text.includes("Pushed, all green.")),
      "the answer below the prompt",
    );
    expect(telegram.message(preview!.messageId)?.text).toBe("I will push now.");
  });

  it("over the webhook: refuses forged data, and Reject gives the model the refusal", async () => {
    const { server, telegram, created, prompt } = await telegramSetup("webhook");
    server.llm.enqueue(PUSH, { text: "OK, not pushing." });
    expect(
      await telegram.deliverWebhook(
        telegram.userMessage({ chatId: 601, userId: 61, text: "Push it", firstName: "Ana" }),
      ),
    ).toBe(200);
    const asked = await prompt();
    const run = await waitingRun(server, created.id, "601");

    // Data that names no ticket (or is not ours at all) decides nothing.
    const forged = telegram.pressButton({ message: asked, data: `dap:a:${"A".repeat(22)}`, userId: 61 });
    expect(await telegram.deliverWebhook(forged)).toBe(200);
    const junk = telegram.pressButton({ message: asked, data: `approve:${run.id}`, userId: 61 });
    expect(await telegram.deliverWebhook(junk)).toBe(200);
    expect(telegram.callbackAnswers.map((a) => a.text)).toEqual([NOT_OPEN, undefined]);
    expect(await statusOf(server, run.id)).toBe("waiting");

    const press = telegram.pressButton({ message: asked, button: "Reject", userId: 61, firstName: "Ana" });
    expect(await telegram.deliverWebhook(press)).toBe(200);
    expect(telegram.callbackAnswers.at(-1)).toMatchObject({ text: "Rejected", showAlert: false });
    await telegram.waitUntil(
      () => telegram.sent.some((m) => m.text === "OK, not pushing."),
      "the final answer",
    );
    expect(toolResults(server.llm.requests).at(-1)).toContain("declined to run execute_command");
    const settled = telegram.message(asked.messageId);
    expect(settled?.buttons).toBeUndefined();
    expect(settled?.text).toContain("❌ Rejected by Ana.");

    // A second press on the settled prompt (a stale client) is told it is closed.
    expect(
      await telegram.deliverWebhook(telegram.pressButton({ message: asked, button: "Approve", userId: 61 })),
    ).toBe(200);
    expect(telegram.callbackAnswers.at(-1)?.text).toBe(NOT_OPEN);
  });

  it("refuses presses by other people of a group chat; the run keeps waiting until the asker decides", async () => {
    const { server, telegram, created, prompt } = await telegramSetup("polling");
    // Bob talks first: he is a member of the chat's channel.
    telegram.userMessage({ chatId: 701, userId: 72, text: "hello", username: "bob", chatTitle: "Ops" });
    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer to bob");
    server.llm.enqueue(PUSH, { text: "Pushed." });
    telegram.userMessage({ chatId: 701, userId: 71, text: "push it", username: "tess", chatTitle: "Ops" });
    const asked = await prompt();
    const run = await waitingRun(server, created.id, "701");
    const users = server.counts().users;

    // A member who did not ask.
    telegram.pressButton({ message: asked, button: "Approve", userId: 72, username: "bob" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 1, "bob's refusal");
    expect(telegram.callbackAnswers[0]).toMatchObject({ text: NOT_YOURS, showAlert: true });
    // Someone who never wrote to the bot (no Dimsum user is made for them).
    telegram.pressButton({ message: asked, button: "Reject", userId: 73, username: "mallory" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 2, "mallory's refusal");
    expect(telegram.callbackAnswers[1]).toMatchObject({ text: NOT_YOURS, showAlert: true });
    expect(server.counts().users).toBe(users);
    expect(await statusOf(server, run.id)).toBe("waiting");
    expect(telegram.message(asked.messageId)?.buttons).toHaveLength(1);

    telegram.pressButton({ message: asked, button: "Always", userId: 71, username: "tess" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 3, "the asker's answer");
    expect(telegram.callbackAnswers[2]?.text).toBe(
      "Approved, also from now on for execute_command in this chat",
    );
    await telegram.waitUntil(() => telegram.sent.some((m) => m.text === "Pushed."), "the final answer");
    expect(telegram.message(asked.messageId)?.text).toContain(
      "✅ Approved by tess, also from now on for execute_command in this chat.",
    );
    const channelId = (await asker(server, created.id, "701")).channelId;
    expect(await server.team.listApprovalGrants(server.ownerActor, channelId)).toEqual([
      expect.objectContaining({ agentId: "assistant", tool: "execute_command" }),
    ]);
  });

  it("refuses a press on a prompt whose ticket expired", async () => {
    const { server, telegram, created, prompt } = await telegramSetup("polling");
    server.llm.enqueue(PUSH, { text: "never" });
    telegram.userMessage({ chatId: 901, userId: 91, text: "Push it", username: "tess" });
    const asked = await prompt();
    const run = await waitingRun(server, created.id, "901");
    const row = server.db
      .prepare("SELECT key, value FROM connector_state WHERE connector_id = ? AND key LIKE 'approval:%'")
      .get(created.id) as { key: string; value: string };
    const expired = { ...(JSON.parse(row.value) as object), expiresAt: Date.now() - 1 };
    server.db
      .prepare("UPDATE connector_state SET value = ? WHERE connector_id = ? AND key = ?")
      .run(JSON.stringify(expired), created.id, row.key);

    telegram.pressButton({ message: asked, button: "Approve", userId: 91, username: "tess" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 1, "the refusal");
    expect(telegram.callbackAnswers[0]).toMatchObject({ text: NOT_OPEN, showAlert: true });
    expect(await statusOf(server, run.id)).toBe("waiting");
  });

  it("settles the prompt when the asker decides in Dimsum, and when a waiting run is stopped", async () => {
    const { server, telegram, created, prompt } = await telegramSetup("polling");
    server.llm.enqueue(PUSH, { text: "Pushed from the web." });
    telegram.userMessage({ chatId: 801, userId: 81, text: "Push it", username: "tess" });
    const asked = await prompt();
    const run = await waitingRun(server, created.id, "801");
    const person = (await asker(server, created.id, "801")).author.id;
    await server.team.answerApproval(
      { userId: person, role: "guest" },
      run.id,
      run.pendingApprovals![0]!.callId,
      {
        decision: "approve",
      },
    );
    await telegram.waitUntil(
      () => telegram.message(asked.messageId)?.buttons === undefined,
      "the settled prompt",
    );
    expect(telegram.message(asked.messageId)?.text).toMatch(/✅ Approved by tg-tess-[0-9a-f]{6}\./);
    await telegram.waitUntil(
      () => telegram.sent.some((m) => m.text === "Pushed from the web."),
      "the answer",
    );
    // The old button now only says the request is closed.
    telegram.pressButton({ message: asked, button: "Reject", userId: 81, username: "tess" });
    await telegram.waitUntil(() => telegram.callbackAnswers.length === 1, "the callback answer");
    expect(telegram.callbackAnswers[0]?.text).toBe(NOT_OPEN);

    server.llm.enqueue(PUSH, { text: "never" });
    telegram.userMessage({ chatId: 801, userId: 81, text: "Push again", username: "tess" });
    const second = await prompt(2);
    const waiting = await waitingRun(server, created.id, "801");
    await server.team.cancelRun(server.ownerActor, waiting.id);
    await telegram.waitUntil(
      () => telegram.message(second.messageId)?.buttons === undefined,
      "the expired prompt",
    );
    expect(telegram.message(second.messageId)?.text).toContain("⌛ No longer waiting for an answer.");
  });
});

describe("approvals from Feishu", () => {
  const ENCRYPT_KEY = "fake-encrypt-key-abc";
  const TOKEN = "fake-verification-token";

  async function feishuSetup() {
    const server = await startConnectorServer();
    const feishu = await FakeFeishu.start();
    onCleanup(() => feishu.close());
    const created = await server.createConnector({
      type: "feishu",
      name: "Lark bot",
      agentId: "assistant",
      settings: { appId: feishu.appId, baseUrl: feishu.url, mode: "webhook" },
      secrets: { appSecret: feishu.appSecret, encryptKey: ENCRYPT_KEY, verificationToken: TOKEN },
    });
    await startConnector(server, created.id);
    const post = (request: { headers: Record<string, string>; body: string }) =>
      fetch(`${server.url}${created.inboundPath}`, {
        method: "POST",
        headers: request.headers,
        body: request.body,
      });
    const say = (chatId: string, openId: string, text: string) =>
      post(buildFeishuEvent({ encryptKey: ENCRYPT_KEY, verificationToken: TOKEN, chatId, openId, text }));
    const press = (options: { chatId: string; openId: string; messageId: string; value: unknown }) =>
      post(buildFeishuCardAction({ encryptKey: ENCRYPT_KEY, verificationToken: TOKEN, ...options }));
    const card = async (count = 1) => {
      await feishu.waitUntil(
        () => feishu.messages.filter((m) => m.msgType === "interactive").length >= count,
        "the approval card",
      );
      return feishu.messages.filter((m) => m.msgType === "interactive")[count - 1]!;
    };
    return { server, feishu, created, post, say, press, card };
  }

  it("asks with a card; a press by someone else is refused, the asker's Approve runs the call", async () => {
    const { server, feishu, created, post, say, press, card } = await feishuSetup();
    server.llm.enqueue(PUSH, { text: "Pushed via Feishu." });
    expect((await say("oc_ops", "ou_tess", "Push it")).status).toBe(200);
    const asked = await card();
    const run = await waitingRun(server, created.id, "oc_ops");
    expect(asked.text).toContain("execute_command");
    expect(asked.text).toContain("git push origin main");
    const buttons = cardButtons(asked.card);
    expect(buttons.map((b) => b.label)).toEqual(["✅ Approve", "♾️ Always", "❌ Reject"]);
    expect(JSON.stringify(buttons.map((b) => b.value))).not.toContain(run.id);
    const approve = buttons[0]!.value;

    // Forged callbacks (bad signature) are refused before anything happens.
    const signed = buildFeishuCardAction({
      encryptKey: "another-key",
      verificationToken: TOKEN,
      chatId: "oc_ops",
      openId: "ou_tess",
      messageId: asked.messageId,
      value: approve,
    });
    expect((await post(signed)).status).toBe(401);

    // Someone else in the chat.
    const other = await press({
      chatId: "oc_ops",
      openId: "ou_mallory",
      messageId: asked.messageId,
      value: approve,
    });
    expect(other.status).toBe(200);
    expect(await other.json()).toEqual({ toast: { type: "error", content: NOT_YOURS } });
    expect(await statusOf(server, run.id)).toBe("waiting");

    const mine = await press({
      chatId: "oc_ops",
      openId: "ou_tess",
      messageId: asked.messageId,
      value: approve,
    });
    expect(mine.status).toBe(200);
    const body = (await mine.json()) as {
      toast: unknown;
      card: { type: string; data: Record<string, unknown> };
    };
    expect(body.toast).toEqual({ type: "success", content: "Approved" });
    expect(body.card.type).toBe("raw");
    expect(cardButtons(body.card.data)).toEqual([]);
    expect(JSON.stringify(body.card.data)).toMatch(/✅ Approved by fs-[0-9a-f]{6}\./);
    await feishu.waitUntil(
      () => feishu.messages.some((m) => m.text === "Pushed via Feishu."),
      "the final answer",
    );
    expect(await statusOf(server, run.id)).toBe("done");
    expect(toolResults(server.llm.requests).at(-1)).toMatch(/exit code/);
  });

  it("updates the card when the asker decides in Dimsum", async () => {
    const { server, feishu, created, say, card } = await feishuSetup();
    server.llm.enqueue(PUSH, { text: "Not pushed." });
    await say("oc_web", "ou_ana", "Push it");
    const asked = await card();
    const run = await waitingRun(server, created.id, "oc_web");
    const person = (await asker(server, created.id, "oc_web")).author.id;
    await server.team.answerApproval(
      { userId: person, role: "guest" },
      run.id,
      run.pendingApprovals![0]!.callId,
      {
        decision: "reject",
        reason: "not today",
      },
    );
    await feishu.waitUntil(() => feishu.cardUpdates.length === 1, "the card update");
    expect(feishu.cardUpdates[0]?.messageId).toBe(asked.messageId);
    expect(cardButtons(feishu.cardUpdates[0]?.card)).toEqual([]);
    expect(feishu.messages.find((m) => m.messageId === asked.messageId)?.text).toMatch(
      /❌ Rejected by fs-[0-9a-f]{6}: not today/,
    );
    await feishu.waitUntil(() => feishu.messages.some((m) => m.text === "Not pushed."), "the final answer");
  });
});
