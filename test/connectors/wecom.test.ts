/** WeCom round trips against the fake server API, with callbacks signed and encrypted as WeCom does. */
import { decrypt, encrypt } from "@wecom/crypto";
import { describe, expect, it } from "vitest";
import { openWecomCiphertext } from "../../src/connectors/wecom/wecom-crypto.js";
import { parseWecomXml } from "../../src/connectors/wecom/wecom-xml.js";
import {
  buildWecomText,
  buildWecomUrlVerification,
  FakeWecom,
  randomEncodingAESKey,
} from "../../src/testing/fake-wecom.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const TOKEN = "FakeCallbackToken01";

async function setup() {
  const server = await startConnectorServer();
  const wecom = await FakeWecom.start();
  onCleanup(() => wecom.close());
  const keys = { token: TOKEN, encodingAESKey: randomEncodingAESKey(), corpId: wecom.corpId };
  const created = await server.createConnector({
    type: "wecom",
    name: "WeCom app",
    agentId: "assistant",
    settings: { corpId: wecom.corpId, appAgentId: String(wecom.agentId), baseUrl: wecom.url },
    secrets: { token: TOKEN, encodingAESKey: keys.encodingAESKey, corpSecret: wecom.corpSecret },
  });
  await startConnector(server, created.id);
  const url = (query: Record<string, string>) =>
    `${server.url}${created.inboundPath}?${new URLSearchParams(query)}`;
  const post = (request: { query: Record<string, string>; body: string }) =>
    fetch(url(request.query), {
      method: "POST",
      headers: { "content-type": "text/xml" },
      body: request.body,
    });
  const text = (from: string, content: string, msgId?: string) =>
    buildWecomText(keys, { from, text: content, agentId: wecom.agentId, ...(msgId ? { msgId } : {}) });
  return { server, wecom, keys, created, url, post, text };
}

describe("WeCom connector", () => {
  it("decrypts what @wecom/crypto encrypts only with the right key and corp id", async () => {
    const key = randomEncodingAESKey();
    const sealed = encrypt(key, "<xml><Content><![CDATA[hi & bye]]></Content></xml>", "wwcorp");
    expect(decrypt(key, sealed).id).toBe("wwcorp");
    const ok = await openWecomCiphertext({
      token: "t",
      encodingAESKey: key,
      corpId: "wwcorp",
      ...(await signed("t", sealed)),
      ciphertext: sealed,
    });
    expect(ok).toEqual({ plain: "<xml><Content><![CDATA[hi & bye]]></Content></xml>" });
    expect(parseWecomXml("plain" in ok ? ok.plain : "")).toEqual({ Content: "hi & bye" });
    const otherCorp = await openWecomCiphertext({
      token: "t",
      encodingAESKey: key,
      corpId: "wwother",
      ...(await signed("t", sealed)),
      ciphertext: sealed,
    });
    expect(otherCorp).toMatchObject({ refused: expect.stringContaining("Corp ID") });
    const otherKey = await openWecomCiphertext({
      token: "t",
      encodingAESKey: randomEncodingAESKey(),
      corpId: "wwcorp",
      ...(await signed("t", sealed)),
      ciphertext: sealed,
    });
    expect("refused" in otherKey).toBe(true);
  });

  it("answers the URL verification with the decrypted echostr, and refuses a bad signature", async () => {
    const { server, keys, url } = await setup();
    const query = buildWecomUrlVerification(keys, "echo-4711");
    const ok = await fetch(url(query));
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("echo-4711");
    const forged = await fetch(url({ ...query, msg_signature: "0".repeat(40) }));
    expect(forged.status).toBe(401);
    const otherKey = buildWecomUrlVerification({ ...keys, encodingAESKey: randomEncodingAESKey() }, "x");
    expect((await fetch(url(otherKey))).status).toBe(401);
    expect(server.counts().inbound).toBe(0);
  });

  it("answers an encrypted text message through message/send after one gettoken", async () => {
    const { server, wecom, created, post, text } = await setup();
    const res = await post(text("zhangsan", "Hello app"));
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("");
    await wecom.waitUntil(() => wecom.messages.length === 1, "the answer");
    expect(wecom.messages[0]).toEqual({
      touser: "zhangsan",
      msgtype: "markdown",
      agentid: wecom.agentId,
      content: "Hello from the assistant.",
    });
    expect((await post(text("zhangsan", "and again"))).status).toBe(200);
    await wecom.waitUntil(() => wecom.messages.length === 2, "the second answer");
    // One token (fetched at start) for both answers.
    expect(wecom.tokens.length).toBe(1);
    expect((await server.channelMessages(created.id, "zhangsan"))[0]?.text).toBe("Hello app");
  });

  it("answers a retried MsgId once", async () => {
    const { server, wecom, created, post, text } = await setup();
    const first = text("lisi", "only once", "7000000000000000001");
    const retried = text("lisi", "only once", "7000000000000000001");
    expect((await post(first)).status).toBe(200);
    expect((await post(retried)).status).toBe(200);
    expect((await post(first)).status).toBe(200);
    await wecom.waitUntil(() => wecom.messages.length === 1, "one answer");
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    const fromUser = (await server.channelMessages(created.id, "lisi")).filter(
      (m) => m.author.type === "user",
    );
    expect(fromUser.length).toBe(1);
    expect(wecom.messages.length).toBe(1);
  });

  it("refuses a bad signature, a wrong key and plain XML before storing anything", async () => {
    const { server, wecom, keys, post, text } = await setup();
    const before = server.counts();
    const genuine = text("wangwu", "forged?");
    expect(
      (await post({ ...genuine, query: { ...genuine.query, msg_signature: "f".repeat(40) } })).status,
    ).toBe(401);
    const wrongKey = buildWecomText(
      { ...keys, encodingAESKey: randomEncodingAESKey() },
      { from: "wangwu", text: "x", agentId: wecom.agentId },
    );
    expect((await post(wrongKey)).status).toBe(401);
    const plain = { query: genuine.query, body: "<xml><Content><![CDATA[hi]]></Content></xml>" };
    expect((await post(plain)).status).toBe(400);
    expect(server.counts()).toEqual(before);
    const refusals = server.log.lines.filter((l) => l.includes("refused an inbound request"));
    expect(refusals.length).toBe(3);
    expect(refusals[0]).toContain("msg_signature does not match");
    expect(wecom.messages).toEqual([]);
  });

  it("splits a long answer at WeCom's 2,048-byte limit and gets a new token when it expired", async () => {
    const { server, wecom, post, text } = await setup();
    const long = `${"这是一段很长的回答。".repeat(150)}`;
    server.llm.enqueue({ text: long });
    wecom.expireTokens();
    expect((await post(text("zhaoliu", "tell me a lot"))).status).toBe(200);
    await wecom.waitUntil(() => wecom.messages.length >= 3, "the parts");
    expect(wecom.messages.every((m) => Buffer.byteLength(m.content) <= 2048)).toBe(true);
    expect(wecom.messages.map((m) => m.content).join("")).toBe(long);
    expect(wecom.tokens.length).toBe(2);
  });
});

async function signed(token: string, ciphertext: string) {
  const { getSignature } = await import("@wecom/crypto");
  const timestamp = "1700000000";
  const nonce = "12345";
  return { signature: getSignature(token, timestamp, nonce, ciphertext), timestamp, nonce };
}
