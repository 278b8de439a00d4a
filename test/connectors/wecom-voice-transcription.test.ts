/**
 * WeCom voice messages without WeCom's `Recognition`: the audio is downloaded from the (fake) WeCom
 * media API and transcribed by the configured OpenAI-compatible endpoint (a fake on loopback), the
 * transcript reaching the agent; without an endpoint the chat is told the voice was not read.
 */
import { describe, expect, it } from "vitest";
import { startFakeTranscriptionServer } from "../../src/testing/fake-transcription-server.js";
import { buildWecomVoice, FakeWecom, randomEncodingAESKey } from "../../src/testing/fake-wecom.js";
import { type ConnectorServerOptions, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const STT_KEY = "sk-stt-secret-key-0123456789";
const AUDIO = Buffer.concat([
  Buffer.from("#!AMR\n"),
  Buffer.from([0x3c, 0x91, 0x17, 0x16, 0xbe, 0x66, 0x78, 0x00]),
]);

async function setup(options: ConnectorServerOptions = {}) {
  const server = await startConnectorServer(options);
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

describe("WeCom voice through a speech-to-text endpoint", () => {
  it("transcribes a voice message without Recognition and hands the transcript to the agent", async () => {
    const stt = await startFakeTranscriptionServer({ apiKey: STT_KEY, transcript: " 下午三点提醒我开会 " });
    onCleanup(() => stt.close());
    const { server, wecom, keys, created, post } = await setup({
      env: {
        DIMSUM_STT_BASE_URL: stt.url,
        DIMSUM_STT_API_KEY: STT_KEY,
        DIMSUM_STT_MODEL: "whisper-large-v3",
      },
    });
    const mediaId = wecom.addMedia(AUDIO);
    await post(buildWecomVoice(keys, { from: "wangwu", agentId: wecom.agentId, mediaId, msgId: "7001" }));
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "wangwu"), "the answer");

    expect(wecom.mediaDownloads).toEqual([mediaId]);
    expect(stt.requests).toHaveLength(1);
    const [request] = stt.requests;
    expect(request).toMatchObject({
      path: "/v1/audio/transcriptions",
      authorization: `Bearer ${STT_KEY}`,
      model: "whisper-large-v3",
      responseFormat: "json",
      fileName: "voice-7001.amr",
    });
    expect(request?.file?.equals(AUDIO)).toBe(true);

    const stored = await server.channelMessages(created.id, "wangwu");
    expect(stored.find((m) => m.author.type === "user")?.text).toBe("🎤 下午三点提醒我开会");
    const asked = JSON.stringify(server.llm.requests.at(-1)?.body);
    expect(asked).toContain("下午三点提醒我开会");
    expect(wecom.messages.find((m) => m.touser === "wangwu")?.content).toContain("Hello from the assistant.");
    expect(wecom.messages.some((m) => m.content.includes("did not take"))).toBe(false);
    // The key never reaches the log.
    expect(server.log.lines.join("\n")).not.toContain(STT_KEY);
  });

  it("says in the chat why a transcription failed, without the key, and runs nothing", async () => {
    const stt = await startFakeTranscriptionServer({ apiKey: "another-key" });
    onCleanup(() => stt.close());
    const { server, wecom, keys, created, post } = await setup({
      env: { DIMSUM_STT_BASE_URL: stt.url, DIMSUM_STT_API_KEY: STT_KEY },
    });
    await post(
      buildWecomVoice(keys, { from: "zhaoliu", agentId: wecom.agentId, mediaId: wecom.addMedia(AUDIO) }),
    );
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "zhaoliu"), "the notice");
    const notice = wecom.messages.find((m) => m.touser === "zhaoliu")?.content ?? "";
    expect(notice).toContain("could not transcribe the voice message");
    expect(notice).toContain("HTTP 401");
    expect(notice).toContain("DIMSUM_STT_API_KEY");
    expect(notice).not.toContain(STT_KEY);
    expect(stt.requests[0]?.model).toBe("whisper-1");
    expect(server.llm.requests).toHaveLength(0);
    const stored = await server.channelMessages(created.id, "zhaoliu");
    expect(stored.filter((m) => m.author.type === "user")).toEqual([]);
  });

  it("without an endpoint, says the voice message was not read and downloads nothing", async () => {
    const { server, wecom, keys, post } = await setup();
    await post(
      buildWecomVoice(keys, { from: "zhaoliu", agentId: wecom.agentId, mediaId: wecom.addMedia(AUDIO) }),
    );
    await wecom.waitUntil(() => wecom.messages.some((m) => m.touser === "zhaoliu"), "the notice");
    expect(wecom.messages.find((m) => m.touser === "zhaoliu")?.content).toContain(
      "did not take a voice message",
    );
    expect(wecom.mediaDownloads).toEqual([]);
    expect(server.llm.requests).toHaveLength(0);
  });
});
