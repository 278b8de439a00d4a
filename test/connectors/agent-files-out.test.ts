/**
 * A file an agent produces goes back to the messenger as a file: the agent writes a report in its
 * workspace and shares it with `share_file`; the answer's text arrives as usual, then the file as
 * Telegram's `sendDocument` (an image as `sendPhoto`), labelled with the agent in a bound group, and
 * as a Feishu file message (uploaded to `/im/v1/files`; an image to `/im/v1/images`). The file is in
 * the web chat's answer too, as an attachment. WeCom uploads it as temporary media and sends a file
 * message; DingTalk (whose robot sends no files here) gets a line naming the file.
 */
import { describe, expect, it } from "vitest";
import { buildDingTalkCallback, FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { buildFeishuEvent, FakeFeishu } from "../../src/testing/fake-feishu.js";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { buildWecomText, FakeWecom, randomEncodingAESKey } from "../../src/testing/fake-wecom.js";
import { pngImage } from "../support/attachment-files.js";
import { eventually, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const REPORT = "# Weekly report\n\nAll builds green.\n";

async function telegramSetup() {
  const server = await startConnectorServer();
  const telegram = await FakeTelegram.start();
  onCleanup(() => telegram.close());
  const created = await server.createConnector({
    type: "telegram",
    name: "Tg bot",
    agentId: "assistant",
    settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
    secrets: { botToken: telegram.token },
  });
  await startConnector(server, created.id);
  return { server, telegram, created };
}

describe("files agents share, sent to the messenger", () => {
  it("Telegram: a shared report arrives as a document after the answer, and is in the web answer", async () => {
    const { server, telegram, created } = await telegramSetup();
    server.llm.enqueue(
      { toolCalls: [{ name: "write_file", args: { path: "report.md", content: REPORT } }] },
      { toolCalls: [{ name: "share_file", args: { path: "report.md" } }] },
      { text: "Here is the weekly report." },
    );
    telegram.userMessage({ chatId: 44, userId: 44, text: "send me the weekly report", username: "ana" });
    await telegram.waitUntil(() => telegram.sentFiles.length === 1, "the document");
    const [file] = telegram.sentFiles;
    expect(file).toMatchObject({ chatId: "44", method: "sendDocument", name: "report.md" });
    expect(file?.data.toString("utf8")).toBe(REPORT);
    // The answer's text went first.
    const answer = telegram.sent.find((m) => m.text.includes("Here is the weekly report."));
    expect(answer).toBeDefined();
    expect(answer?.messageId).toBeLessThan(file?.messageId ?? 0);
    const stored = (await server.channelMessages(created.id, "44")).find((m) => m.author.type === "agent");
    expect(stored?.parts).toContainEqual(
      expect.objectContaining({
        type: "attachment",
        name: "report.md",
        mimeType: expect.stringMatching(/^text\//),
      }),
    );
    await eventually(
      async () => (await server.connectors.outbox(created.id)).length === 0,
      "an empty outbox",
    );
  });

  it("Telegram: an image goes as a photo, labelled with the agent in a bound group", async () => {
    const { server, telegram, created } = await telegramSetup();
    const group = await server.team.createChannel(server.ownerActor, {
      kind: "group",
      name: "Charts",
      leaderAgentId: "assistant",
      agentIds: ["assistant", "coder"],
      userIds: [server.owner.userId],
    });
    await server.team.updateChannel(server.ownerActor, group.id, { queueMode: "followup" });
    telegram.userMessage({ chatId: -5005, userId: 45, text: "hi", username: "bo", chatTitle: "Charts" });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.chatId === "-5005"), "the first answer");
    const bound = await server.api(`/api/connectors/${created.id}/chats/-5005`, {
      method: "PATCH",
      body: { mode: "group", channelId: group.id },
    });
    expect(bound.status).toBe(200);

    const chart = pngImage(8, 6).toString("base64");
    server.llm.enqueue(
      {
        toolCalls: [
          {
            name: "execute_command",
            args: { command: `echo ${chart} | base64 -d > chart.png` },
          },
        ],
      },
      { toolCalls: [{ name: "share_file", args: { path: "chart.png", name: "sales chart.png" } }] },
      { text: "The chart." },
    );
    telegram.userMessage({
      chatId: -5005,
      userId: 45,
      text: "draw the chart",
      username: "bo",
      chatTitle: "Charts",
    });
    await telegram.waitUntil(() => telegram.sentFiles.length === 1, "the photo");
    const [photo] = telegram.sentFiles;
    expect(photo).toMatchObject({ chatId: "-5005", method: "sendPhoto", name: "sales chart.png" });
    expect(photo?.data.equals(pngImage(8, 6))).toBe(true);
    expect(photo?.bold?.[0]).toMatch(/Assistant/);
  });

  it("Feishu: a shared PDF is uploaded and sent as a file message, a chart as an image message", async () => {
    const server = await startConnectorServer();
    const feishu = await FakeFeishu.start();
    onCleanup(() => feishu.close());
    const keys = { encryptKey: "fake-encrypt-key-abc", verificationToken: "fake-verification-token" };
    const created = await server.createConnector({
      type: "feishu",
      name: "Lark bot",
      agentId: "assistant",
      settings: { appId: feishu.appId, baseUrl: feishu.url, mode: "webhook" },
      secrets: { appSecret: feishu.appSecret, ...keys },
    });
    await startConnector(server, created.id);
    const say = async (text: string) => {
      const event = buildFeishuEvent({
        ...keys,
        chatId: "oc_files",
        openId: "ou_files",
        text,
        chatType: "p2p",
      });
      const res = await fetch(`${server.url}${created.inboundPath}`, {
        method: "POST",
        headers: event.headers,
        body: event.body,
      });
      expect(res.status).toBe(200);
    };
    const pdf = Buffer.from("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n");
    server.llm.enqueue(
      {
        toolCalls: [
          {
            name: "execute_command",
            args: { command: `echo ${pdf.toString("base64")} | base64 -d > q3.pdf` },
          },
        ],
      },
      { toolCalls: [{ name: "share_file", args: { path: "q3.pdf" } }] },
      { text: "The Q3 summary is attached." },
    );
    await say("the Q3 summary please");
    await feishu.waitUntil(() => feishu.messages.some((m) => m.msgType === "file"), "the file message");
    const sent = feishu.messages.filter((m) => m.chatId === "oc_files");
    const answerAt = sent.findIndex((m) => m.text.includes("The Q3 summary is attached."));
    const fileAt = sent.findIndex((m) => m.msgType === "file");
    expect(answerAt).toBeGreaterThanOrEqual(0);
    expect(fileAt).toBeGreaterThan(answerAt);
    expect(sent[fileAt]?.upload).toMatchObject({ kind: "file", name: "q3.pdf", fileType: "pdf" });
    expect(sent[fileAt]?.upload?.data.equals(pdf)).toBe(true);

    server.llm.enqueue(
      {
        toolCalls: [
          {
            name: "execute_command",
            args: { command: `echo ${pngImage(4, 4).toString("base64")} | base64 -d > chart.png` },
          },
        ],
      },
      { toolCalls: [{ name: "share_file", args: { path: "chart.png" } }] },
      { text: "Chart." },
    );
    await say("and a chart");
    await feishu.waitUntil(() => feishu.messages.some((m) => m.msgType === "image"), "the image message");
    const image = feishu.messages.find((m) => m.msgType === "image");
    expect(image?.upload).toMatchObject({ kind: "image", name: "chart.png" });
    expect(image?.upload?.data.equals(pngImage(4, 4))).toBe(true);
  });

  it("WeCom: a shared report is uploaded as temporary media and sent as a file message", async () => {
    const server = await startConnectorServer();
    const wecom = await FakeWecom.start();
    onCleanup(() => wecom.close());
    const keys = {
      token: "FakeCallbackToken01",
      encodingAESKey: randomEncodingAESKey(),
      corpId: wecom.corpId,
    };
    const created = await server.createConnector({
      type: "wecom",
      name: "WeCom app",
      agentId: "assistant",
      settings: { corpId: wecom.corpId, appAgentId: String(wecom.agentId), baseUrl: wecom.url },
      secrets: { token: keys.token, encodingAESKey: keys.encodingAESKey, corpSecret: wecom.corpSecret },
    });
    await startConnector(server, created.id);
    server.llm.enqueue(
      { toolCalls: [{ name: "write_file", args: { path: "report.md", content: REPORT } }] },
      { toolCalls: [{ name: "share_file", args: { path: "report.md" } }] },
      { text: "Report attached." },
    );
    const request = buildWecomText(keys, { from: "wangwu", text: "the report", agentId: wecom.agentId });
    const res = await fetch(`${server.url}${created.inboundPath}?${new URLSearchParams(request.query)}`, {
      method: "POST",
      headers: { "content-type": "text/xml" },
      body: request.body,
    });
    expect(res.status).toBe(200);
    await wecom.waitUntil(() => wecom.messages.some((m) => m.msgtype === "file"), "the file message");
    const sent = wecom.messages.filter((m) => m.touser === "wangwu");
    expect(sent.map((m) => m.msgtype)).toEqual(["markdown", "file"]);
    expect(sent[1]?.upload).toMatchObject({ type: "file", name: "report.md" });
    expect(sent[1]?.upload?.data.toString("utf8")).toBe(REPORT);
  });

  it("DingTalk: the chat gets a line naming the file", async () => {
    const server = await startConnectorServer();
    const dingtalk = await FakeDingTalk.start();
    onCleanup(() => dingtalk.close());
    const created = await server.createConnector({
      type: "dingtalk",
      name: "DingTalk bot",
      agentId: "assistant",
      settings: { clientId: dingtalk.clientId, baseUrl: dingtalk.url, mode: "webhook" },
      secrets: { clientSecret: dingtalk.clientSecret },
    });
    await startConnector(server, created.id);
    server.llm.enqueue(
      { toolCalls: [{ name: "write_file", args: { path: "report.md", content: REPORT } }] },
      { toolCalls: [{ name: "share_file", args: { path: "report.md" } }] },
      { text: "Report attached." },
    );
    const message = dingtalk.robotMessage({
      conversationId: "cid-files",
      text: "the report",
      senderStaffId: "s1",
    });
    const res = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      ...buildDingTalkCallback(dingtalk.clientSecret, message),
    });
    expect(res.status).toBe(200);
    await dingtalk.waitUntil(() => dingtalk.messages.length === 2, "the answer and the file's line");
    expect(dingtalk.messages[0]?.text).toContain("Report attached.");
    expect(dingtalk.messages[1]?.text).toContain("📎 report.md (open the chat in Dimsum to download it)");
  });
});
