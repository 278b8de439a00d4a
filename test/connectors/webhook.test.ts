/** The generic webhook connector: signed JSON in, signed JSON out, against a local receiver. */
import { describe, expect, it } from "vitest";
import { signBody } from "../../src/connectors/signatures.js";
import { FakeWebhookReceiver } from "../../src/testing/fake-webhook-receiver.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const SECRET = "shared-webhook-secret-0123456789";

async function setup(settings: Record<string, unknown> = {}) {
  const server = await startConnectorServer();
  const receiver = await FakeWebhookReceiver.start(SECRET);
  onCleanup(() => receiver.close());
  const created = await server.createConnector({
    type: "webhook",
    name: "Bridge",
    agentId: "assistant",
    settings: { outboundUrl: receiver.url, ...settings },
    secrets: { secret: SECRET },
  });
  await startConnector(server, created.id);
  const post = (payload: unknown, options: { secret?: string; now?: number } = {}) => {
    const signed = FakeWebhookReceiver.signed(options.secret ?? SECRET, payload, options.now);
    return fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: signed.headers,
      body: signed.body,
    });
  };
  return { server, receiver, created, post };
}

describe("generic webhook connector", () => {
  it("posts the agent's answer, signed, to the outbound URL", async () => {
    const { server, receiver, created, post } = await setup();
    const res = await post({ id: "m-1", chatId: "room-9", userId: "u-1", userName: "Ada", text: "Hello?" });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });

    await receiver.waitUntil(() => receiver.received.length === 1, "the answer");
    const [delivery] = receiver.received;
    expect(delivery?.verified).toBe(true);
    expect(delivery?.body).toMatchObject({
      type: "message",
      connectorId: created.id,
      chatId: "room-9",
      text: "Hello from the assistant.",
      part: 1,
      parts: 1,
    });
    expect(typeof delivery?.body.runId).toBe("string");
    const messages = await server.channelMessages(created.id, "room-9");
    expect(messages.map((m) => m.text)).toEqual(["Hello?", "Hello from the assistant."]);
  });

  it("rejects a bad signature, a wrong secret and a stale timestamp, logging them and storing nothing", async () => {
    const { server, receiver, created, post } = await setup();
    const before = server.counts();
    const payload = { id: "m-2", chatId: "c", userId: "u", text: "let me in" };

    expect((await post(payload, { secret: "not-the-shared-secret-000" })).status).toBe(401);
    const stale = Date.now() - 10 * 60 * 1000;
    expect((await post(payload, { now: stale })).status).toBe(401);
    // A body changed after signing.
    const signed = FakeWebhookReceiver.signed(SECRET, payload);
    const tampered = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: signed.headers,
      body: signed.body.replace("let me in", "give me all"),
    });
    expect(tampered.status).toBe(401);
    const unsigned = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(payload),
    });
    expect(unsigned.status).toBe(401);
    expect((await unsigned.json()) as unknown).toMatchObject({ error: { code: "unauthenticated" } });

    expect(server.counts()).toEqual(before);
    const refusals = server.log.lines.filter((l) => l.includes("refused an inbound request"));
    expect(refusals.length).toBe(4);
    expect(refusals.join("\n")).toContain("signature mismatch");
    expect(refusals.join("\n")).toContain("5-minute window");
    expect((await server.connectors.get(server.ownerActor, created.id)).status.rejected).toBe(4);
    expect(receiver.received).toEqual([]);
  });

  it("ignores a repeated message id and a replayed request", async () => {
    const { server, receiver, created, post } = await setup();
    expect((await post({ id: "dup-1", chatId: "c1", userId: "u1", text: "once" })).status).toBe(200);
    expect((await post({ id: "dup-1", chatId: "c1", userId: "u1", text: "once" })).status).toBe(200);
    // Answered before the next message (which would otherwise steer the answer in progress).
    await receiver.waitUntil(() => receiver.received.length === 1, "the first answer");
    // Without an id, the very same signed request sent twice is one message.
    const signed = FakeWebhookReceiver.signed(SECRET, { chatId: "c1", userId: "u1", text: "no id" });
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${server.url}${created.inboundPath}`, {
        method: "POST",
        headers: signed.headers,
        body: signed.body,
      });
      expect(res.status).toBe(200);
    }
    await receiver.waitUntil(() => receiver.received.length === 2, "two answers");
    const texts = (await server.channelMessages(created.id, "c1"))
      .filter((m) => m.author.type === "user")
      .map((m) => m.text);
    expect(texts).toEqual(["once", "no id"]);
  });

  it("splits answers at maxChars and keeps the parts in order through an outage", async () => {
    const { server, receiver, created, post } = await setup({ maxChars: 100 });
    const answer = Array.from({ length: 6 }, (_, i) => `Paragraph ${i + 1} ${"x".repeat(60)}.`).join("\n\n");
    server.llm.enqueue({ text: answer });
    await receiver.outage("502");
    expect((await post({ id: "long", chatId: "c2", userId: "u2", text: "long please" })).status).toBe(200);
    await receiver.waitUntil(() => receiver.outageHits >= 3, "failed attempts");
    expect((await server.connectors.outbox(created.id)).length).toBe(6);

    await receiver.outage("none");
    await receiver.waitUntil(() => receiver.received.length === 6, "every part");
    expect(receiver.received.map((r) => r.body.part)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(receiver.received.map((r) => r.body.text).join("\n\n")).toBe(answer);
    expect(receiver.received.every((r) => r.verified && r.body.parts === 6)).toBe(true);
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
  });

  it("sets aside a reply the receiver refuses for good, and answers 503 while stopped", async () => {
    const { server, created, post } = await setup();
    // Point the replies at a URL that answers 401 (our own API without a session): no retry helps.
    const patched = await server.api(`/api/connectors/${created.id}`, {
      method: "PATCH",
      body: { settings: { outboundUrl: `${server.url}/api/not-a-route` } },
    });
    expect(((await patched.json()) as { status: { state: string } }).status.state).toBe("running");
    expect((await post({ chatId: "c3", userId: "u3", text: "hi" })).status).toBe(200);
    await eventually(
      async () => (await server.connectors.outbox(created.id))[0]?.status === "failed",
      "a failed reply",
    );
    expect((await server.connectors.outbox(created.id))[0]?.lastError).toContain("HTTP 401");
    expect((await server.connectors.get(server.ownerActor, created.id)).status.failed).toBe(1);

    await server.api(`/api/connectors/${created.id}/stop`, { method: "POST" });
    const before = server.counts();
    expect((await post({ chatId: "c3", userId: "u3", text: "anyone?" })).status).toBe(503);
    expect(server.counts()).toEqual(before);
  });

  it("signs with HMAC-SHA256 over the timestamp and the raw body", () => {
    // Known answer from `printf '1700000000.{}' | openssl dgst -sha256 -hmac secret`.
    expect(signBody("secret", "1700000000", "{}")).toBe(
      "sha256=b8569b78799ff9e3cbff0fc2d63a33a2b57f3282abd07c37ae5e8e7d79a5f163",
    );
  });
});
