/** Telegram round trips against the fake Bot API: polling, webhook, streaming, splitting, outages. */
import { describe, expect, it } from "vitest";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

async function fakeTelegram(): Promise<FakeTelegram> {
  const fake = await FakeTelegram.start();
  onCleanup(() => fake.close());
  return fake;
}

describe("Telegram connector", () => {
  it("answers a polled message in the chat, as a guest user in a direct channel with the agent", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Support bot",
      agentId: "assistant",
      settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
      secrets: { botToken: telegram.token },
    });
    // Secrets never come back in full.
    expect(JSON.stringify(created)).not.toContain(telegram.token);
    expect(created.secrets.botToken).toEqual({ set: true, preview: "123…ghij" });
    expect(created.secrets.webhookSecret?.set).toBe(true);

    const started = await startConnector(server, created.id);
    expect(started.status.state).toBe("running");
    telegram.userMessage({ chatId: 4242, userId: 99, text: "Hi there", firstName: "Tess", username: "tess" });

    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer");
    expect(telegram.sent[0]).toMatchObject({ chatId: "4242", text: "Hello from the assistant." });

    const messages = await server.channelMessages(created.id, "4242");
    expect(messages.map((m) => [m.author.type, m.text])).toEqual([
      ["user", "Hi there"],
      ["agent", "Hello from the assistant."],
    ]);
    const channel = await server.team.getChannel(server.ownerActor, messages[0]?.channelId ?? "");
    expect(channel.kind).toBe("direct");
    expect(channel.leaderAgentId).toBe("assistant");
    // Only the external person and the agent: the connector's service identity left the channel.
    expect(channel.members.map((m) => m.type).sort()).toEqual(["agent", "user"]);
    const guest = server.db
      .prepare("SELECT username, role FROM users WHERE id = ?")
      .get(messages[0]?.author.id) as {
      username: string;
      role: string;
    };
    expect(guest.role).toBe("guest");
    expect(guest.username).toMatch(/^tg-tess-[0-9a-f]{6}$/);

    // A second message from the same person reuses the user and the channel; the offset moved on.
    telegram.userMessage({ chatId: 4242, userId: 99, text: "Again", firstName: "Tess", username: "tess" });
    await telegram.waitUntil(() => telegram.sent.length === 2, "the second answer");
    expect((await server.channelMessages(created.id, "4242")).length).toBe(4);
    expect(server.counts().channels).toBe(1);
    const offset = server.db
      .prepare("SELECT value FROM connector_state WHERE connector_id = ? AND key = 'telegram.offset'")
      .get(created.id) as { value: string };
    expect(offset.value).toBe("1002");
  });

  it("splits long answers at 4096 characters and streams the first part by editing a preview", async () => {
    const server = await startConnectorServer({ chunkDelayMs: 5, chunkSize: 200 });
    const telegram = await fakeTelegram();
    const paragraph = `${"word ".repeat(199)}end.`;
    const answer = Array.from({ length: 9 }, () => paragraph).join("\n\n");
    server.llm.enqueue({ text: answer });
    const created = await server.createConnector({
      type: "telegram",
      name: "Streamer",
      agentId: "assistant",
      settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1 },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    telegram.userMessage({ chatId: 7, userId: 8, text: "Write a lot" });

    await telegram.waitUntil(
      () => telegram.sent.map((m) => m.text).join("\n\n") === answer,
      "the whole answer, in parts",
    );
    expect(telegram.sent.length).toBe(3);
    for (const part of telegram.sent) expect(part.text.length).toBeLessThanOrEqual(4096);
    // The first message started as a streamed preview and was edited into the first part.
    const edits = telegram.edits.filter((e) => e.messageId === telegram.sent[0]?.messageId);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.at(-1)?.text).toBe(telegram.sent[0]?.text);
    const sends = telegram.calls.filter((c) => c.method === "sendMessage");
    expect(String(sends[0]?.body.text)).toMatch(/…$/);
  });

  it("takes webhook updates with the secret token, rejects a wrong one and ignores duplicates", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Hooked",
      agentId: "assistant",
      settings: { mode: "webhook", baseUrl: telegram.url, publicUrl: server.url, streaming: false },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    expect(telegram.webhook?.url).toBe(`${server.url}/api/connectors/${created.id}/inbound`);
    expect(telegram.webhook?.secretToken).toMatch(/^[A-Za-z0-9_-]{20,}$/);

    // A forged update: refused, logged, and nothing stored.
    const before = server.counts();
    const forged = {
      update_id: 5,
      message: {
        message_id: 1,
        from: { id: 1, first_name: "Eve" },
        chat: { id: 1, type: "private" },
        text: "hi",
      },
    };
    expect(await telegram.deliverWebhook(forged, { secretToken: "not-the-secret" })).toBe(401);
    expect(await telegram.deliverWebhook(forged, { secretToken: null })).toBe(401);
    expect(server.counts()).toEqual(before);
    expect(
      server.log.lines.some((l) => l.includes("refused an inbound request") && l.includes("secret-token")),
    ).toBe(true);
    expect(telegram.sent).toEqual([]);

    const update = telegram.userMessage({ chatId: 31, userId: 32, text: "Via webhook" });
    expect(await telegram.deliverWebhook(update)).toBe(200);
    expect(await telegram.deliverWebhook(update)).toBe(200);
    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer");
    expect(telegram.sent[0]?.text).toBe("Hello from the assistant.");
    const messages = await server.channelMessages(created.id, "31");
    expect(messages.filter((m) => m.author.type === "user").length).toBe(1);

    // Stopping unregisters the webhook, so Telegram keeps updates for the next start.
    await server.api(`/api/connectors/${created.id}/stop`, { method: "POST" });
    expect(telegram.webhook).toBeUndefined();
  });

  it("retries a send through a 502 outage with backoff and delivers once the platform recovers", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Resilient",
      agentId: "assistant",
      settings: { mode: "webhook", baseUrl: telegram.url, publicUrl: server.url, streaming: false },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    await telegram.outage("502");
    const update = telegram.userMessage({ chatId: 55, userId: 56, text: "Are you there?" });
    expect(await telegram.deliverWebhook(update)).toBe(200);

    await telegram.waitUntil(() => telegram.outageHits >= 3, "several failed attempts");
    const [pending] = await server.connectors.outbox(created.id);
    expect(pending?.status).toBe("pending");
    expect(pending?.attempts).toBeGreaterThanOrEqual(2);
    expect(pending?.lastError).toContain("502");
    expect(pending?.nextAttemptAt).toBeGreaterThan(0);

    await telegram.outage("none");
    await telegram.waitUntil(() => telegram.sent.length === 1, "the delivery after recovery");
    expect(telegram.sent[0]?.text).toBe("Hello from the assistant.");
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
  });

  it("keeps undelivered answers across a restart while the platform refuses connections", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Durable",
      agentId: "assistant",
      settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    let answer: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      answer = resolve;
    });
    server.llm.enqueue(async () => {
      await gate;
      return { text: "Hello from the assistant." };
    });
    telegram.userMessage({ chatId: 66, userId: 67, text: "Remember me" });
    await eventually(
      async () => (await server.channelMessages(created.id, "66")).some((m) => m.author.type === "user"),
      "the message to be taken",
    );
    await telegram.outage("refuse");
    answer();
    // The agent answers while Telegram is unreachable: the answer waits in the outbox.
    await eventually(
      async () => (await server.connectors.outbox(created.id)).some((r) => r.attempts >= 1),
      "a failed attempt",
    );
    expect((await server.connectors.outbox(created.id))[0]?.lastError).toContain("connection refused");

    await server.restart();
    expect((await server.connectors.get(server.ownerActor, created.id)).status.pending).toBe(1);
    await telegram.outage("none");
    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer after the restart");
    expect(telegram.sent[0]).toMatchObject({ chatId: "66", text: "Hello from the assistant." });
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    expect(telegram.sent.length).toBe(1);
  });

  it("refuses to start with a token Telegram rejects, and reports why", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Wrong token",
      agentId: "assistant",
      settings: { baseUrl: telegram.url },
      secrets: { botToken: "111111:WrongTokenWrongTokenWrong" },
    });
    const res = await server.api(`/api/connectors/${created.id}/start`, { method: "POST" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("Unauthorized");
    const view = await server.connectors.get(server.ownerActor, created.id);
    expect(view.status.state).toBe("error");
    const test = await server.api(`/api/connectors/${created.id}/test`, { method: "POST" });
    expect(await test.json()).toMatchObject({ ok: false });
  });

  it("shows failing, with what went wrong, while every call fails, and running once they work again", async () => {
    const server = await startConnectorServer();
    const telegram = await fakeTelegram();
    const created = await server.createConnector({
      type: "telegram",
      name: "Flaky",
      agentId: "assistant",
      settings: { baseUrl: telegram.url, pollTimeoutSec: 1 },
      secrets: { botToken: telegram.token },
    });
    await startConnector(server, created.id);
    await telegram.outage("502");
    const stateOf = async () => (await server.connectors.get(server.ownerActor, created.id)).status;
    await eventually(async () => (await stateOf()).state === "failing", "the failing state");
    expect((await stateOf()).error).toContain("502");
    await telegram.outage("none");
    await eventually(async () => (await stateOf()).state === "running", "running again");
    expect((await stateOf()).error).toBeUndefined();
  });
});
