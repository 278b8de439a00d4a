/**
 * Streamed answers updated in place: on Feishu (with `streaming`) and on DingTalk (Stream mode with a
 * card template) an answer is shown as it is written in ONE card, updated in place and finally
 * holding the whole answer; no second message is posted for it.
 */
import { describe, expect, it } from "vitest";
import { FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { buildFeishuEvent, FakeFeishu } from "../../src/testing/fake-feishu.js";
import { onCleanup, startConnector, startConnectorServer } from "./harness.js";

const ANSWER = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the streamed answer.`).join("\n");

describe("streamed answers in one card", () => {
  it("Feishu: a card created at the first words, patched into the whole answer", async () => {
    const server = await startConnectorServer({ chunkDelayMs: 20, chunkSize: 40 });
    server.llm.enqueue({ text: ANSWER });
    const feishu = await FakeFeishu.start();
    onCleanup(() => feishu.close());
    const keys = { encryptKey: "fake-encrypt-key-abc", verificationToken: "fake-verification-token" };
    const created = await server.createConnector({
      type: "feishu",
      name: "Lark bot",
      agentId: "assistant",
      settings: { appId: feishu.appId, baseUrl: feishu.url, mode: "webhook", streaming: true },
      secrets: { appSecret: feishu.appSecret, ...keys },
    });
    await startConnector(server, created.id);
    const event = buildFeishuEvent({ ...keys, chatId: "oc_p2p", openId: "ou_1", text: "Write it" });
    const res = await fetch(`${server.url}${created.inboundPath}`, { method: "POST", ...event });
    expect(res.status).toBe(200);

    await feishu.waitUntil(() => feishu.messages[0]?.text === ANSWER, "the whole answer in the card");
    expect(feishu.messages).toHaveLength(1);
    expect(feishu.messages[0]?.msgType).toBe("interactive");
    const updates = feishu.cardUpdates.filter((u) => u.messageId === feishu.messages[0]?.messageId);
    expect(updates.length).toBeGreaterThanOrEqual(1);
  });

  it("DingTalk: a card from the template created at the first words, updated into the whole answer", async () => {
    const server = await startConnectorServer({ chunkDelayMs: 20, chunkSize: 40 });
    server.llm.enqueue({ text: ANSWER });
    const dingtalk = await FakeDingTalk.start();
    onCleanup(() => dingtalk.close());
    const created = await server.createConnector({
      type: "dingtalk",
      name: "DingTalk bot",
      agentId: "assistant",
      settings: {
        clientId: dingtalk.clientId,
        baseUrl: dingtalk.url,
        mode: "stream",
        cardTemplateId: "dimsum-card.schema",
      },
      secrets: { clientSecret: dingtalk.clientSecret },
    });
    await startConnector(server, created.id);
    await dingtalk.waitUntil(() => dingtalk.openStreams > 0, "the Stream connection");
    dingtalk.pushRobotMessage(
      dingtalk.robotMessage({ conversationId: "cid-1", text: "Write it", senderStaffId: "staff-1" }),
    );

    await dingtalk.waitUntil(() => dingtalk.messages[0]?.text === ANSWER, "the whole answer in the card");
    expect(dingtalk.messages).toHaveLength(1);
    const card = dingtalk.messages[0];
    expect(card?.via).toBe("card");
    // A one-to-one chat: the card goes to the person's chat with the robot.
    expect(card?.target).toBe("staff-1");
    const updates = dingtalk.cardUpdates.filter((u) => u.outTrackId === card?.outTrackId);
    expect(updates.length).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(card?.params?.buttons ?? "")).toEqual([]);
  });
});
