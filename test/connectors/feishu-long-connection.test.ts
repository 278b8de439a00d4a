/**
 * Feishu/Lark long connection: the official SDK's own WSClient against a local server speaking its
 * protocol (endpoint discovery over HTTP, protobuf frames over WebSocket), pointed there by `baseUrl`.
 */
import { describe, expect, it } from "vitest";
import { buildFeishuEvent, FakeFeishu, feishuMessageEvent } from "../../src/testing/fake-feishu.js";
import { decodeLarkFrame, encodeLarkFrame } from "../../src/testing/fake-lark-ws.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const APP_ID = "cli_a1b2c3d4e5f60718";

async function setup(appSecret?: string) {
  const server = await startConnectorServer();
  const feishu = await FakeFeishu.start(APP_ID);
  onCleanup(() => feishu.close());
  const long = await feishu.longConnection();
  const created = await server.createConnector({
    type: "feishu",
    name: "Lark bot",
    agentId: "assistant",
    settings: { appId: APP_ID, baseUrl: feishu.url },
    secrets: { appSecret: appSecret ?? feishu.appSecret },
  });
  return { server, feishu, long, created };
}

describe("Feishu/Lark long connection", () => {
  it("encodes frames the way the SDK's protobuf decoder reads them", () => {
    const frame = {
      seqId: 300,
      logId: 2,
      service: 1,
      method: 1,
      headers: [{ key: "type", value: "event" }],
      payload: Buffer.from('{"a":"中"}'),
    };
    expect(decodeLarkFrame(encodeLarkFrame(frame))).toEqual(frame);
  });

  it("is the default for a new connector, needs no Encrypt Key, and answers over the Open API", async () => {
    const { server, feishu, long, created } = await setup();
    expect(created.settings.mode).toBe("long-connection");
    await startConnector(server, created.id);
    await feishu.waitUntil(() => long.open === 1 && long.pings >= 1, "the long connection");
    const event = feishuMessageEvent({
      verificationToken: "",
      chatId: "oc_long",
      openId: "ou_long",
      text: "hi there",
    });
    const id = long.push(event);
    await feishu.waitUntil(() => long.answers.get(id) === 200, "the SDK's acknowledgement");
    await feishu.waitUntil(() => feishu.messages.length === 1, "the answer");
    expect(feishu.messages[0]).toMatchObject({ chatId: "oc_long", text: "Hello from the assistant." });
    expect((await server.channelMessages(created.id, "oc_long"))[0]?.text).toBe("hi there");

    // The same event delivered again (Feishu retries unacknowledged ones) is taken once.
    long.push(event);
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    const fromUser = (await server.channelMessages(created.id, "oc_long")).filter(
      (m) => m.author.type === "user",
    );
    expect(fromUser.length).toBe(1);

    // The event callback URL is closed in this mode.
    const posted = buildFeishuEvent({
      encryptKey: "k",
      verificationToken: "t",
      chatId: "oc_x",
      openId: "ou_x",
      text: "x",
    });
    const res = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: posted.headers,
      body: posted.body,
    });
    expect(res.status).toBe(403);

    // Dropped, the SDK reconnects by itself.
    long.dropAll();
    await feishu.waitUntil(
      () => long.connections === 2 && long.open === 1 && long.pings >= 2,
      "the reconnection",
      20_000,
    );
    const again = long.push(
      feishuMessageEvent({ verificationToken: "", chatId: "oc_long", openId: "ou_long", text: "back?" }),
    );
    await feishu.waitUntil(() => long.answers.get(again) === 200, "the second acknowledgement");
    await feishu.waitUntil(() => feishu.messages.length === 2, "the second answer");

    await server.api(`/api/connectors/${created.id}/stop`, { method: "POST" });
    await feishu.waitUntil(() => long.open === 0, "the closed connection");
  });

  it("shows failing with Feishu's words when the long connection is refused, and refuses a wrong secret at start", async () => {
    const { server, feishu, created } = await setup();
    feishu.refuseLongConnection({ code: 1000040350, msg: "the app has not enabled the long connection" });
    await startConnector(server, created.id);
    await eventually(
      async () => (await server.connectors.get(server.ownerActor, created.id)).status.state === "failing",
      "the failing state",
    );
    const view = await server.connectors.get(server.ownerActor, created.id);
    expect(view.status.error).toContain("the app has not enabled the long connection");

    const wrong = await setup("wrong-secret");
    const res = await wrong.server.api(`/api/connectors/${wrong.created.id}/start`, { method: "POST" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("app secret invalid");
  });
});
