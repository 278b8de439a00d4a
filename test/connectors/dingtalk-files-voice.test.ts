/**
 * DingTalk pictures and files reach the agent as attachments (downloaded through the robot's
 * `messageFiles/download` URL), and voice messages as the text DingTalk recognised in them.
 */
import { describe, expect, it } from "vitest";
import { buildDingTalkCallback, FakeDingTalk } from "../../src/testing/fake-dingtalk.js";
import { pngImage } from "../support/attachment-files.js";
import { onCleanup, startConnector, startConnectorServer } from "./harness.js";

async function setup() {
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
  const post = async (message: Parameters<typeof buildDingTalkCallback>[1]) => {
    const res = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      ...buildDingTalkCallback(dingtalk.clientSecret, message),
    });
    expect(res.status).toBe(200);
  };
  return { server, dingtalk, created, post };
}

describe("DingTalk pictures, files and voice", () => {
  it("takes a voice message as DingTalk's recognition text", async () => {
    const { server, dingtalk, created, post } = await setup();
    await post(
      dingtalk.robotMessage({
        conversationId: "cid-voice",
        text: "",
        senderStaffId: "staff-v",
        kind: {
          msgtype: "audio",
          content: { duration: 3, downloadCode: "dc-x", recognition: "帮我查一下天气" },
        },
      }),
    );
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer");
    const stored = await server.channelMessages(created.id, "cid-voice");
    expect(stored.find((m) => m.author.type === "user")?.text).toBe("🎤 帮我查一下天气");
    expect(JSON.stringify(server.llm.requests.at(-1)?.body)).toContain("帮我查一下天气");
  });

  it("gives a picture to the agent as an image, downloaded by its downloadCode", async () => {
    const { server, dingtalk, created, post } = await setup();
    const image = pngImage(6, 4);
    const code = dingtalk.addFile(image, "image/png");
    await post(
      dingtalk.robotMessage({
        conversationId: "cid-pic",
        text: "",
        senderStaffId: "staff-p",
        kind: { msgtype: "picture", content: { downloadCode: code } },
      }),
    );
    await dingtalk.waitUntil(() => dingtalk.messages.length === 1, "the answer");
    expect(dingtalk.downloads).toEqual([`/files/${code}`]);
    const stored = (await server.channelMessages(created.id, "cid-pic")).find(
      (m) => m.author.type === "user",
    );
    expect(stored?.text).toMatch(/^📎 picture-/);
    expect(stored?.parts.some((p) => p.type === "attachment")).toBe(true);
    // The model was sent the image itself.
    const body = JSON.stringify(server.llm.requests.at(-1)?.body);
    expect(body).toContain(`data:image/png;base64,${image.toString("base64").slice(0, 40)}`);
  });
});
