/**
 * WeCom pictures reach the agent as images (downloaded from the media API by their MediaId), the
 * kinds an app's callback carries that Dimsum does not read are said so in the chat; a DingTalk voice
 * message without DingTalk's `recognition` is downloaded by its downloadCode and transcribed by the
 * configured speech-to-text endpoint (a fake on loopback).
 */
import { describe, expect, it } from "vitest";
import { buildDingTalkCallback, FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { startFakeTranscriptionServer } from "../../src/testing/fake-transcription-server.js";
import {
  buildWecomCallback,
  buildWecomImage,
  FakeWecom,
  randomEncodingAESKey,
} from "../../src/testing/fake-wecom.js";
import { pngImage } from "../support/attachment-files.js";
import { type ConnectorServerOptions, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const STT_KEY = "sk-stt-secret-key-dingtalk-0123";
const AUDIO = Buffer.concat([Buffer.from("#!AMR\n"), Buffer.from([0x3c, 0x48, 0xf5, 0x1f, 0x96, 0x66])]);

async function wecomSetup() {
  const server = await startConnectorServer();
  const wecom = await FakeWecom.start();
  onCleanup(() => wecom.close());
  const keys = { token: "FakeCallbackToken01", encodingAESKey: randomEncodingAESKey(), corpId: wecom.corpId };
  const created = await server.createConnector({
    type: "wecom",
    name: "WeCom app",
    agentId: "assistant",
    settings: { corpId: wecom.corpId, appAgentId: String(wecom.agentId), baseUrl: wecom.url },
    secrets: { token: keys.token, encodingAESKey: keys.encodingAESKey, corpSecret: wecom.corpSecret },
  });
  await startConnector(server, created.id);
  const post = async (request: { query: Record<string, string>; body: string }) => {
    const res = await fetch(`${server.url}${created.inboundPath}?${new URLSearchParams(request.query)}`, {
      method: "POST",
      headers: { "content-type": "text/xml" },
      body: request.body,
    });
    expect(res.status).toBe(200);
  };
  return { server, wecom, keys, created, post };
}

async function dingTalkSetup(options: ConnectorServerOptions) {
  const server = await startConnectorServer(options);
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
  const post = async (message: Parameters<typeof buildDingTalkCallback>[1]) => {
    const res = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      ...buildDingTalkCallback(dingtalk.clientSecret, message),
    });
    expect(res.status).toBe(200);
  };
  return { server, dingtalk, created, post };
}

describe("WeCom pictures", () => {
  it("gives a picture to the agent as an image, downloaded by its MediaId", async () => {
    const { server, wecom, keys, created, post } = await wecomSetup();
    const image = pngImage(5, 3);
    const mediaId = wecom.addMedia(image, "image/png");
    await post(buildWecomImage(keys, { from: "wangwu", agentId: wecom.agentId, mediaId, msgId: "8001" }));
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "wangwu"), "the answer");

    expect(wecom.mediaDownloads).toEqual([mediaId]);
    const stored = (await server.channelMessages(created.id, "wangwu")).find((m) => m.author.type === "user");
    expect(stored?.text).toMatch(/^📎 picture-8001/);
    expect(stored?.parts.some((p) => p.type === "attachment")).toBe(true);
    const body = JSON.stringify(server.llm.requests.at(-1)?.body);
    expect(body).toContain(`data:image/png;base64,${image.toString("base64").slice(0, 40)}`);
    expect(wecom.messages.find((m) => m.touser === "wangwu")?.content).toContain("Hello from the assistant.");
  });

  it("says a location is not read, and runs nothing", async () => {
    const { server, wecom, keys, post } = await wecomSetup();
    await post(
      buildWecomCallback(keys, {
        ToUserName: keys.corpId,
        FromUserName: "wangwu",
        CreateTime: Math.floor(Date.now() / 1000),
        MsgType: "location",
        Location_X: "23.134521",
        Location_Y: "113.358803",
        Scale: "20",
        Label: "somewhere",
        MsgId: "8002",
        AgentID: wecom.agentId,
      }),
    );
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "wangwu"), "the notice");
    expect(wecom.messages.find((m) => m.touser === "wangwu")?.content).toContain("a location");
    expect(server.llm.requests).toHaveLength(0);
  });
});

describe("DingTalk voice without recognition", () => {
  it("downloads the audio by its downloadCode and hands the transcript to the agent", async () => {
    const stt = await startFakeTranscriptionServer({ apiKey: STT_KEY, transcript: "明天上午十点开周会" });
    onCleanup(() => stt.close());
    const { server, dingtalk, created, post } = await dingTalkSetup({
      env: { DIMSUM_STT_BASE_URL: stt.url, DIMSUM_STT_API_KEY: STT_KEY },
    });
    const code = dingtalk.addFile(AUDIO, "audio/amr");
    await post(
      dingtalk.robotMessage({
        conversationId: "cid-voice-stt",
        text: "",
        senderStaffId: "staff-v",
        msgId: "msg-voice-1",
        kind: { msgtype: "audio", content: { duration: 4, downloadCode: code } },
      }),
    );
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer");

    expect(dingtalk.downloads).toEqual([`/files/${code}`]);
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]).toMatchObject({
      authorization: `Bearer ${STT_KEY}`,
      fileName: "voice-msg-voice-1.amr",
    });
    expect(stt.requests[0]?.file?.equals(AUDIO)).toBe(true);
    const stored = await server.channelMessages(created.id, "cid-voice-stt");
    expect(stored.find((m) => m.author.type === "user")?.text).toBe("🎤 明天上午十点开周会");
    expect(JSON.stringify(server.llm.requests.at(-1)?.body)).toContain("明天上午十点开周会");
    expect(dingtalk.messages[0]?.text).toContain("Hello from the assistant.");
    expect(server.log.lines.join("\n")).not.toContain(STT_KEY);
  });

  it("without an endpoint, says the voice message was not read and downloads nothing", async () => {
    const { server, dingtalk, post } = await dingTalkSetup({});
    const code = dingtalk.addFile(AUDIO, "audio/amr");
    await post(
      dingtalk.robotMessage({
        conversationId: "cid-voice-none",
        text: "",
        senderStaffId: "staff-v",
        kind: { msgtype: "audio", content: { duration: 4, downloadCode: code } },
      }),
    );
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the notice");
    expect(dingtalk.messages[0]?.text).toContain("did not take a voice message");
    expect(dingtalk.downloads).toEqual([]);
    expect(server.llm.requests).toHaveLength(0);
  });
});
