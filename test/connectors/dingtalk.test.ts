/** DingTalk round trips against the fake platform: the signed HTTP callback and Stream mode. */
import { describe, expect, it } from "vitest";
import { checkDingTalkSign, dingTalkSign } from "../../src/connectors/dingtalk/dingtalk-message.js";
import { buildDingTalkCallback, FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

async function setup(mode: "webhook" | "stream") {
  const server = await startConnectorServer();
  const dingtalk = await FakeDingTalk.start();
  onCleanup(() => dingtalk.close());
  const created = await server.createConnector({
    type: "dingtalk",
    name: "DingTalk bot",
    agentId: "assistant",
    settings: { clientId: dingtalk.clientId, baseUrl: dingtalk.url, mode },
    secrets: { clientSecret: dingtalk.clientSecret },
  });
  await startConnector(server, created.id);
  const post = (request: { headers: Record<string, string>; body: string }) =>
    fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
  return { server, dingtalk, created, post };
}

describe("DingTalk connector", () => {
  it("signs as documented: Base64 HMAC-SHA256 of timestamp\\nsecret, within an hour", () => {
    // Computed independently: printf '1577262236757\nsecret' | openssl dgst -sha256 -hmac secret -binary | base64
    expect(dingTalkSign("1577262236757", "secret")).toBe("TIz5XcFHyeEuCoyc+5d9DoNiRC3txFfOzZU76lmRbYc=");
    const now = 1_700_000_000_000;
    const headers = { timestamp: String(now), sign: dingTalkSign(String(now), "s") };
    expect(checkDingTalkSign(headers, "s", now + 59 * 60_000)).toBeUndefined();
    expect(checkDingTalkSign(headers, "s", now + 61 * 60_000)).toContain("more than an hour");
    expect(checkDingTalkSign(headers, "other", now)).toContain("does not match");
  });

  it("answers a signed callback through the message's sessionWebhook", async () => {
    const { server, dingtalk, created, post } = await setup("webhook");
    const message = dingtalk.robotMessage({
      conversationId: "cid-1",
      text: "Hello robot",
      senderStaffId: "staff-1",
    });
    const res = await post(buildDingTalkCallback(dingtalk.clientSecret, message));
    expect(res.status).toBe(200);
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer");
    expect(dingtalk.messages[0]).toMatchObject({
      via: "session",
      target: new URL(message.sessionWebhook ?? "").searchParams.get("session"),
      text: "Hello from the assistant.",
      title: "Hello from the assistant.",
    });
    const stored = await server.channelMessages(created.id, "cid-1");
    expect(stored[0]?.text).toBe("Hello robot");
    // The same msgId delivered again is taken once.
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, message))).status).toBe(200);
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
    expect(
      (await server.channelMessages(created.id, "cid-1")).filter((m) => m.author.type === "user").length,
    ).toBe(1);
    expect(dingtalk.messages.length).toBe(1);
  });

  it("refuses a bad or old sign and stores nothing", async () => {
    const { server, dingtalk, post } = await setup("webhook");
    const before = server.counts();
    const message = dingtalk.robotMessage({
      conversationId: "cid-x",
      text: "forged?",
      senderStaffId: "staff-x",
    });
    const wrongSecret = buildDingTalkCallback("not-the-secret", message);
    expect((await post(wrongSecret)).status).toBe(401);
    const old = buildDingTalkCallback(dingtalk.clientSecret, message, Date.now() - 2 * 60 * 60 * 1000);
    expect((await post(old)).status).toBe(401);
    const unsigned = { headers: { "content-type": "application/json" }, body: JSON.stringify(message) };
    expect((await post(unsigned)).status).toBe(401);
    expect(server.counts()).toEqual(before);
    const refusals = server.log.lines.filter((l) => l.includes("refused an inbound request"));
    expect(refusals.length).toBe(3);
    expect(refusals[1]).toContain("more than an hour");
    expect(dingtalk.messages).toEqual([]);
  });

  it("falls back to the robot OpenAPI once the session webhook expired, with one cached token", async () => {
    const { dingtalk, post } = await setup("webhook");
    const expired = { sessionTtlMs: -1000 };
    const group = dingtalk.robotMessage({
      conversationId: "cid-g",
      text: "hi all",
      senderStaffId: "s1",
      group: true,
      ...expired,
    });
    const direct = dingtalk.robotMessage({
      conversationId: "cid-d",
      text: "hi you",
      senderStaffId: "s2",
      ...expired,
    });
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, group))).status).toBe(200);
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the group answer");
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, direct))).status).toBe(200);
    await dingtalk.waitUntil(() => dingtalk.messages.length === 2, "the direct answer");
    expect(dingtalk.messages.map((m) => [m.via, m.target])).toEqual([
      ["group", "cid-g"],
      ["user", "s2"],
    ]);
    // One token at start, reused for both sends.
    expect(dingtalk.tokens.length).toBe(1);
  });

  it("shows failing with DingTalk's error text while answers fail, running once they go through", async () => {
    const { server, dingtalk, created, post } = await setup("webhook");
    dingtalk.failSessions({ errcode: 130101, errmsg: "send too fast, exceed 20 times per minute" });
    const message = dingtalk.robotMessage({
      conversationId: "cid-f",
      text: "are you there?",
      senderStaffId: "s3",
    });
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, message))).status).toBe(200);
    await eventually(async () => {
      const view = await server.connectors.get(server.ownerActor, created.id);
      return view.status.state === "failing";
    }, "the failing state");
    const view = await server.connectors.get(server.ownerActor, created.id);
    expect(view.status.error).toContain("send too fast");
    expect(view.status.error).not.toContain("clientSecret");
    expect(view.status.failed).toBe(1);
    dingtalk.failSessions(undefined);
    const next = dingtalk.robotMessage({ conversationId: "cid-f", text: "and now?", senderStaffId: "s3" });
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, next))).status).toBe(200);
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer after recovery");
    await eventually(
      async () => (await server.connectors.get(server.ownerActor, created.id)).status.state === "running",
      "running again",
    );
  });

  it("Stream mode: a robot message over the SDK's own client is answered and acknowledged", async () => {
    const { server, dingtalk, created, post } = await setup("stream");
    await dingtalk.waitUntil(() => dingtalk.openStreams === 1, "the stream connection");
    const message = dingtalk.robotMessage({
      conversationId: "cid-s",
      text: "via stream",
      senderStaffId: "s4",
    });
    const messageId = dingtalk.pushRobotMessage(message);
    await dingtalk.waitUntil(() => dingtalk.acks.includes(messageId), "the acknowledgement");
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer");
    expect(dingtalk.messages[0]).toMatchObject({ via: "session", text: "Hello from the assistant." });
    expect((await server.channelMessages(created.id, "cid-s"))[0]?.text).toBe("via stream");
    // The HTTP callback is closed in Stream mode.
    expect((await post(buildDingTalkCallback(dingtalk.clientSecret, message))).status).toBe(403);

    // Dropped, the SDK reconnects by itself (a new ticket) and keeps taking messages.
    dingtalk.dropStreams();
    await dingtalk.waitUntil(
      () => dingtalk.connections.length === 2 && dingtalk.openStreams === 1,
      "the reconnection",
      15_000,
    );
    const again = dingtalk.robotMessage({
      conversationId: "cid-s",
      text: "still there?",
      senderStaffId: "s4",
    });
    const secondId = dingtalk.pushRobotMessage(again);
    await dingtalk.waitUntil(() => dingtalk.acks.includes(secondId), "the second acknowledgement");
    await dingtalk.waitUntil(() => dingtalk.messages.length === 2, "the second answer");

    // Stopped, the connection closes.
    await server.api(`/api/connectors/${created.id}/stop`, { method: "POST" });
    await dingtalk.waitUntil(() => dingtalk.openStreams === 0, "the closed stream");
  });

  it("refuses to start with a wrong client secret, saying what DingTalk said", async () => {
    const server = await startConnectorServer();
    const dingtalk = await FakeDingTalk.start();
    onCleanup(() => dingtalk.close());
    const created = await server.createConnector({
      type: "dingtalk",
      name: "Wrong",
      agentId: "assistant",
      settings: { clientId: dingtalk.clientId, baseUrl: dingtalk.url },
      secrets: { clientSecret: "wrong-secret" },
    });
    expect(created.settings.mode).toBe("stream");
    const res = await server.api(`/api/connectors/${created.id}/start`, { method: "POST" });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("无效的clientId或者clientSecret");
    const view = await server.connectors.get(server.ownerActor, created.id);
    expect(view.status.state).toBe("error");
  });
});
