/**
 * Images, files and rich text with images sent to a Feishu/Lark bot reach the agent's model as
 * attachments, downloaded through the SDK's message-resource API from the fake Open API, in webhook
 * and long-connection mode; a file over the limits is refused in the chat while the text goes through.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UNSUPPORTED_TEXT } from "../../src/connectors/inbound-pipeline.js";
import { buildFeishuEvent, FakeFeishu, feishuMessageEvent } from "../../src/testing/fake-feishu.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { type ConnectorServer, onCleanup, startConnector, startConnectorServer } from "./harness.js";

const ENCRYPT_KEY = "fake-encrypt-key-abc";
const TOKEN = "fake-verification-token";
const LONG_APP_ID = "cli_a1b2c3d4e5f60718";

interface SentPart {
  type: string;
  text?: string;
  image_url?: { url: string };
  file?: { filename?: string; file_data?: string };
}

/** The content parts of the newest user message of the model's last request. */
function lastUserParts(server: ConnectorServer): SentPart[] {
  const body = server.llm.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
  const content = body.messages.filter((m) => m.role === "user").at(-1)?.content;
  return typeof content === "string" ? [{ type: "text", text: content }] : (content as SentPart[]);
}

async function webhookBot(config?: Record<string, unknown>) {
  const server = await startConnectorServer({ model: "openai:gpt-4o", ...(config ? { config } : {}) });
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
  const send = async (
    messageId: string,
    chatId: string,
    message: { type: string; content: Record<string, unknown> },
  ) => {
    const request = buildFeishuEvent({
      encryptKey: ENCRYPT_KEY,
      verificationToken: TOKEN,
      chatId,
      openId: "ou_sender",
      text: "",
      messageId,
      message,
    });
    const res = await fetch(`${server.url}${created.inboundPath}`, {
      method: "POST",
      headers: request.headers,
      body: request.body,
    });
    await res.arrayBuffer();
    return res.status;
  };
  return { server, feishu, created, send };
}

describe("Feishu/Lark files", () => {
  it("sends an image message, a PDF file and rich text with an image to the model (webhook mode)", async () => {
    const { server, feishu, created, send } = await webhookBot();
    const png = pngImage(16, 16);
    feishu.addResource("om_img1", "img_v3_0001", { data: png, contentType: "image/png", type: "image" });
    expect(await send("om_img1", "oc_files", { type: "image", content: { image_key: "img_v3_0001" } })).toBe(
      200,
    );
    await feishu.waitUntil(() => feishu.messages.length === 1, "the first answer");
    let parts = lastUserParts(server);
    expect(parts.filter((p) => p.type === "image_url").map((p) => p.image_url?.url)).toEqual([
      `data:image/png;base64,${png.toString("base64")}`,
    ]);
    expect(feishu.downloads).toEqual(["om_img1/img_v3_0001"]);

    const pdf = pdfDocument("Invoice 42 is due");
    feishu.addResource("om_pdf1", "file_v3_0002", {
      data: pdf,
      contentType: "application/pdf",
      type: "file",
    });
    await send("om_pdf1", "oc_files", {
      type: "file",
      content: { file_key: "file_v3_0002", file_name: "invoice.pdf" },
    });
    await feishu.waitUntil(() => feishu.messages.length === 2, "the second answer");
    parts = lastUserParts(server);
    expect(parts.find((p) => p.type === "file")?.file).toMatchObject({
      filename: "invoice.pdf",
      file_data: `data:application/pdf;base64,${pdf.toString("base64")}`,
    });

    const chart = pngImage(40, 20, [20, 120, 220]);
    feishu.addResource("om_post1", "img_v3_0003", { data: chart, contentType: "image/png", type: "image" });
    await send("om_post1", "oc_files", {
      type: "post",
      content: {
        title: "Weekly chart",
        content: [
          [
            { tag: "text", text: "Sales went " },
            { tag: "a", text: "up", href: "https://example.com/sales" },
          ],
          [{ tag: "img", image_key: "img_v3_0003" }],
        ],
      },
    });
    await feishu.waitUntil(() => feishu.messages.length === 3, "the third answer");
    parts = lastUserParts(server);
    const text = parts.find((p) => p.type === "text")?.text ?? "";
    expect(text).toContain("Weekly chart");
    expect(text).toContain("Sales went up (https://example.com/sales)");
    expect(parts.filter((p) => p.type === "image_url").map((p) => p.image_url?.url)).toEqual([
      `data:image/png;base64,${chart.toString("base64")}`,
    ]);
    const messages = await server.channelMessages(created.id, "oc_files");
    expect(messages.filter((m) => m.author.type === "user").map((m) => m.text)).toEqual([
      expect.stringMatching(/^📎 image-/),
      "📎 invoice.pdf",
      "Weekly chart\nSales went up (https://example.com/sales)",
    ]);
    expect(JSON.stringify(server.log.lines)).not.toContain(feishu.appSecret);
  });

  it("refuses an oversized image of a rich-text message in the chat and still sends its text", async () => {
    const { server, feishu, send } = await webhookBot({
      attachments: { maxImageMB: 1, maxPdfMB: 1, maxTextMB: 1 },
    });
    // Over every limit: the download stops once it passes the largest (1 MB).
    const big = Buffer.concat([pngImage(8, 8), randomBytes(2 * 1024 * 1024)]);
    feishu.addResource("om_big", "img_v3_big", { data: big, contentType: "image/png", type: "image" });
    await send("om_big", "oc_big", {
      type: "post",
      content: {
        title: "",
        content: [[{ tag: "text", text: "Can you read this?" }], [{ tag: "img", image_key: "img_v3_big" }]],
      },
    });
    await feishu.waitUntil(() => feishu.messages.length === 2, "the refusal and the answer");
    const refusal = feishu.messages.find((m) => m.text.startsWith("⚠️"));
    expect(refusal?.text).toContain(
      "did not take image-img_v3_big: image-img_v3_big is too large; Dimsum takes images up to 1 MB",
    );
    const parts = lastUserParts(server);
    expect(parts.find((p) => p.type === "text")?.text).toContain("Can you read this?");
    expect(parts.some((p) => p.type === "image_url")).toBe(false);
  });

  it("answers a voice message with what Dimsum reads, and posts nothing for it", async () => {
    const { server, feishu, send } = await webhookBot();
    expect(
      await send("om_voice", "oc_voice", {
        type: "audio",
        content: { file_key: "file_v3_a", duration: 2000 },
      }),
    ).toBe(200);
    await feishu.waitUntil(() => feishu.messages.length === 1, "the note");
    expect(feishu.messages[0]?.text).toBe(`⚠️ Dimsum did not take a voice message: ${UNSUPPORTED_TEXT}`);
    expect(server.llm.requests).toHaveLength(0);
  });

  it("downloads an image message that arrives over the long connection", async () => {
    const server = await startConnectorServer({ model: "openai:gpt-4o" });
    const feishu = await FakeFeishu.start(LONG_APP_ID);
    onCleanup(() => feishu.close());
    const long = await feishu.longConnection();
    const created = await server.createConnector({
      type: "feishu",
      name: "Lark bot",
      agentId: "assistant",
      settings: { appId: LONG_APP_ID, baseUrl: feishu.url },
      secrets: { appSecret: feishu.appSecret },
    });
    await startConnector(server, created.id);
    await feishu.waitUntil(() => long.open === 1 && long.pings >= 1, "the long connection");
    const png = pngImage(12, 12, [10, 200, 10]);
    feishu.addResource("om_long1", "img_v3_long", { data: png, contentType: "image/png", type: "image" });
    const pushed = long.push(
      feishuMessageEvent({
        verificationToken: "",
        chatId: "oc_long",
        openId: "ou_long",
        text: "",
        messageId: "om_long1",
        message: { type: "image", content: { image_key: "img_v3_long" } },
      }),
    );
    await feishu.waitUntil(() => long.answers.get(pushed) === 200, "the SDK's acknowledgement");
    await feishu.waitUntil(() => feishu.messages.length === 1, "the answer");
    expect(lastUserParts(server).find((p) => p.type === "image_url")?.image_url?.url).toBe(
      `data:image/png;base64,${png.toString("base64")}`,
    );
    expect(feishu.downloads).toEqual(["om_long1/img_v3_long"]);
  });
});
