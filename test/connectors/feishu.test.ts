/** Feishu/Lark round trips against the fake Open API, with signed and encrypted events. */
import { describe, expect, it } from "vitest";
import { decryptLarkEvent, encryptLarkEvent } from "../../src/connectors/feishu/feishu-crypto.js";
import { buildFeishuChallenge, buildFeishuEvent, FakeFeishu } from "../../src/testing/fake-feishu.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const ENCRYPT_KEY = "fake-encrypt-key-abc";
const TOKEN = "fake-verification-token";

async function setup() {
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
  const send = (request: { headers: Record<string, string>; body: string }) =>
    fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
  const event = (options: {
    chatId: string;
    openId: string;
    text: string;
    eventId?: string;
    chatType?: "p2p" | "group";
  }) => buildFeishuEvent({ encryptKey: ENCRYPT_KEY, verificationToken: TOKEN, ...options });
  return { server, feishu, created, send, event };
}

describe("Feishu/Lark connector", () => {
  it('decrypts the documented example (key "test key" → "hello world")', () => {
    expect(decryptLarkEvent("test key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=")).toBe("hello world");
    expect(decryptLarkEvent("other key", "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk=")).not.toBe(
      "hello world",
    );
    expect(decryptLarkEvent("k", encryptLarkEvent("k", '{"a":1}'))).toBe('{"a":1}');
  });

  it("answers the url_verification challenge only with the right key and token", async () => {
    const { server, send } = await setup();
    const ok = await send(
      buildFeishuChallenge({ encryptKey: ENCRYPT_KEY, verificationToken: TOKEN, challenge: "ch-123" }),
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: "ch-123" });
    const wrongToken = await send(
      buildFeishuChallenge({ encryptKey: ENCRYPT_KEY, verificationToken: "nope", challenge: "x" }),
    );
    expect(wrongToken.status).toBe(401);
    const wrongKey = await send(
      buildFeishuChallenge({ encryptKey: "another-key", verificationToken: TOKEN, challenge: "x" }),
    );
    expect(wrongKey.status).toBe(401);
    expect(server.counts().inbound).toBe(0);
  });

  it("replies in the chat through the messages API with a cached tenant token", async () => {
    const { server, feishu, created, send, event } = await setup();
    expect((await send(event({ chatId: "oc_chat1", openId: "ou_person1", text: "Hello bot" }))).status).toBe(
      200,
    );
    await feishu.waitUntil(() => feishu.messages.length === 1, "the reply");
    expect(feishu.messages[0]).toMatchObject({ chatId: "oc_chat1", text: "Hello from the assistant." });

    // In a group the bot's @mention placeholder is removed from the text.
    expect(
      (await send(event({ chatId: "oc_group", openId: "ou_person1", text: "and you?", chatType: "group" })))
        .status,
    ).toBe(200);
    await feishu.waitUntil(() => feishu.messages.length === 2, "the second reply");
    expect(feishu.tokens.length).toBe(1);
    const group = await server.channelMessages(created.id, "oc_group");
    expect(group[0]?.text).toBe("and you?");
    // The same person is one guest user in both chats.
    expect(group[0]?.author.id).toBe((await server.channelMessages(created.id, "oc_chat1"))[0]?.author.id);
  });

  it("rejects a bad signature and unencrypted events, logging them and storing nothing", async () => {
    const { server, feishu, send, event } = await setup();
    const before = server.counts();
    const genuine = event({ chatId: "oc_x", openId: "ou_x", text: "forged?" });
    const forged = { ...genuine, headers: { ...genuine.headers, "x-lark-signature": "0".repeat(64) } };
    expect((await send(forged)).status).toBe(401);
    const tampered = { headers: genuine.headers, body: genuine.body.replace(/"}$/, 'A"}') };
    expect((await send(tampered)).status).toBe(401);
    const unsigned = { headers: { "content-type": "application/json" }, body: genuine.body };
    expect((await send(unsigned)).status).toBe(401);
    const plain = {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ schema: "2.0", header: { token: TOKEN } }),
    };
    expect((await send(plain)).status).toBe(400);
    const wrongToken = buildFeishuEvent({
      encryptKey: ENCRYPT_KEY,
      verificationToken: "other",
      chatId: "oc_x",
      openId: "ou_x",
      text: "x",
    });
    expect((await send(wrongToken)).status).toBe(401);

    expect(server.counts()).toEqual(before);
    const refusals = server.log.lines.filter((l) => l.includes("refused an inbound request"));
    expect(refusals.length).toBe(5);
    expect(refusals[0]).toContain("X-Lark-Signature");
    expect(feishu.messages).toEqual([]);
  });

  it("ignores a redelivered event_id", async () => {
    const { server, feishu, created, send, event } = await setup();
    const first = event({ chatId: "oc_dup", openId: "ou_dup", text: "only once", eventId: "ev-0001" });
    const again = event({ chatId: "oc_dup", openId: "ou_dup", text: "only once", eventId: "ev-0001" });
    expect((await send(first)).status).toBe(200);
    expect((await send(again)).status).toBe(200);
    await feishu.waitUntil(() => feishu.messages.length === 1, "one reply");
    const users = (await server.channelMessages(created.id, "oc_dup")).filter(
      (m) => m.author.type === "user",
    );
    expect(users.length).toBe(1);
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    expect(feishu.messages.length).toBe(1);
  });

  it("retries through an outage and an expired token, delivering each reply once", async () => {
    const { server, feishu, created, send, event } = await setup();
    await feishu.outage("502");
    expect((await send(event({ chatId: "oc_out", openId: "ou_out", text: "still there?" }))).status).toBe(
      200,
    );
    await feishu.waitUntil(() => feishu.outageHits >= 3, "failed attempts");
    expect((await server.connectors.outbox(created.id))[0]?.lastError).toContain("HTTP 502");
    // A stopped connector keeps its undelivered reply and sends it when started again.
    await server.api(`/api/connectors/${created.id}/stop`, { method: "POST" });
    await feishu.outage("none");
    expect((await server.connectors.get(server.ownerActor, created.id)).status).toMatchObject({
      state: "stopped",
      pending: 1,
    });
    await startConnector(server, created.id);
    await feishu.waitUntil(() => feishu.messages.length === 1, "the reply after recovery");

    const tokensBefore = feishu.tokens.length;
    feishu.expireTokens();
    expect((await send(event({ chatId: "oc_out", openId: "ou_out", text: "and now?" }))).status).toBe(200);
    await feishu.waitUntil(() => feishu.messages.length === 2, "the reply with a new token");
    expect(feishu.tokens.length).toBe(tokensBefore + 1);
    // Each reply carries a stable uuid, so a retried send is never shown twice.
    expect(new Set(feishu.messages.map((m) => m.uuid)).size).toBe(2);
  });
});
