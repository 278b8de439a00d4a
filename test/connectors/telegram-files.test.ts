/**
 * Photos and documents sent to a Telegram bot reach the agent's model as attachments (downloaded
 * through `getFile` from the fake Bot API); files over the limits or of other kinds are refused in the
 * chat while the caption still goes through; the bot token never reaches the log.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_FILE_TRIES, UNSUPPORTED_TEXT } from "../../src/connectors/inbound-pipeline.js";
import { FakeTelegram } from "../../src/testing/fake-telegram.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { type ConnectorServer, onCleanup, startConnector, startConnectorServer } from "./harness.js";

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

async function telegramBot(server: ConnectorServer): Promise<{ telegram: FakeTelegram; id: string }> {
  const telegram = await FakeTelegram.start();
  onCleanup(() => telegram.close());
  const created = await server.createConnector({
    type: "telegram",
    name: "Photo bot",
    agentId: "assistant",
    settings: { mode: "polling", baseUrl: telegram.url, pollTimeoutSec: 1, streaming: false },
    secrets: { botToken: telegram.token },
  });
  await startConnector(server, created.id);
  return { telegram, id: created.id };
}

describe("Telegram files", () => {
  it("sends the largest size of a photo to the model as an image, with the caption as the text", async () => {
    const server = await startConnectorServer({ model: "openai:gpt-4o" });
    const { telegram, id } = await telegramBot(server);
    const png = pngImage(32, 24);
    telegram.userFile({ chatId: 51, userId: 61, photo: png, caption: "What colour is this?" });

    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer");
    const parts = lastUserParts(server);
    expect(parts.find((p) => p.type === "text")?.text).toContain("What colour is this?");
    const images = parts.filter((p) => p.type === "image_url");
    expect(images.map((p) => p.image_url?.url)).toEqual([`data:image/png;base64,${png.toString("base64")}`]);
    // Only the largest size was fetched.
    expect(telegram.calls.filter((c) => c.method === "getFile")).toHaveLength(1);
    expect(telegram.downloads).toHaveLength(1);

    const [message] = await server.channelMessages(id, "51");
    expect(message?.text).toBe("What colour is this?");
    expect(message?.parts).toContainEqual(
      expect.objectContaining({ type: "attachment", kind: "image", mimeType: "image/png" }),
    );
    expect(JSON.stringify(server.log.lines)).not.toContain(telegram.token);
  });

  it("honours context.keepImagesTurns in the server's runs: an older photo becomes a placeholder naming it", async () => {
    const server = await startConnectorServer({
      model: "openai:gpt-4o",
      config: { context: { keepImagesTurns: 1 } },
    });
    const { telegram } = await telegramBot(server);
    telegram.userFile({ chatId: 55, userId: 65, photo: pngImage(10, 10), caption: "first" });
    await telegram.waitUntil(() => telegram.sent.length === 1, "the first answer");
    telegram.userFile({ chatId: 55, userId: 65, photo: pngImage(20, 10, [1, 2, 3]), caption: "second" });
    await telegram.waitUntil(() => telegram.sent.length === 2, "the second answer");
    const body = server.llm.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const users = body.messages.filter((m) => m.role === "user").map((m) => JSON.stringify(m.content));
    expect(users.at(-2)).toMatch(/\[image photo-[0-9a-f]+\.jpg left out: older than the last turns\]/);
    expect(users.at(-2)).not.toContain("image_url");
    expect(users.at(-1)).toContain("image_url");
  });

  it("sends a PDF document as a file part to a model that reads PDFs, and as its extracted text to a model not known to read PDFs", async () => {
    const server = await startConnectorServer({ model: "openai:gpt-4o" });
    const { telegram } = await telegramBot(server);
    const pdf = pdfDocument("Lease ends in March");
    telegram.userFile({
      chatId: 52,
      userId: 62,
      document: { name: "lease.pdf", data: pdf, mimeType: "application/pdf" },
    });
    await telegram.waitUntil(() => telegram.sent.length === 1, "the answer");
    const parts = lastUserParts(server);
    const file = parts.find((p) => p.type === "file");
    expect(file?.file).toMatchObject({
      filename: "lease.pdf",
      file_data: `data:application/pdf;base64,${pdf.toString("base64")}`,
    });
    // No caption: the message is posted under the file's name.
    expect(parts.find((p) => p.type === "text")?.text).toContain("📎 lease.pdf");

    const textOnly = await startConnectorServer({ model: "openai:gpt-3.5-turbo" });
    const second = await telegramBot(textOnly);
    second.telegram.userFile({
      chatId: 53,
      userId: 63,
      caption: "summarise",
      document: { name: "lease.pdf", data: pdf, mimeType: "application/pdf" },
    });
    await second.telegram.waitUntil(() => second.telegram.sent.length === 1, "the answer");
    const sent = JSON.stringify(lastUserParts(textOnly));
    expect(sent).toContain("Lease ends in March");
    expect(sent).not.toContain(pdf.toString("base64"));
  });

  it("leaves out a file the platform keeps failing to hand out, after a few tries, so later messages are not held up", async () => {
    const server = await startConnectorServer({ model: "openai:gpt-4o" });
    const { telegram, id } = await telegramBot(server);
    telegram.failDownloads = true;
    telegram.userFile({ chatId: 57, userId: 67, photo: pngImage(8, 8), caption: "Is this blurry?" });
    telegram.userMessage({ chatId: 57, userId: 67, text: "And a question after it" });

    await telegram.waitUntil(
      () => telegram.sent.some((m) => m.text.includes("could not be downloaded")),
      "the file left out",
    );
    // Each try was a real download attempt; after the last one the caption went through without it.
    expect(telegram.failedDownloads).toBe(MAX_FILE_TRIES);
    expect(telegram.sent.find((m) => m.text.startsWith("⚠️"))?.text).toMatch(
      new RegExp(`did not take photo-[0-9a-f]+\\.jpg: .*after ${MAX_FILE_TRIES} tries`),
    );
    await expect
      .poll(async () => (await server.channelMessages(id, "57")).map((m) => m.text), { timeout: 10_000 })
      .toEqual(expect.arrayContaining(["Is this blurry?", "And a question after it"]));
    expect(telegram.sent.map((m) => m.text).join("\n")).not.toContain(telegram.token);
  });

  it("answers a voice message or a sticker with what Dimsum reads, and posts nothing for it", async () => {
    const server = await startConnectorServer({ model: "openai:gpt-4o" });
    const { telegram, id } = await telegramBot(server);
    const from = { id: 68, is_bot: false, first_name: "Tess" };
    const chat = { id: 58, type: "private", first_name: "Tess" };
    telegram.push({
      update_id: 9001,
      message: { message_id: 901, from, chat, voice: { file_id: "v1", duration: 3 } },
    });
    telegram.push({
      update_id: 9002,
      message: { message_id: 902, from, chat, sticker: { file_id: "s1" }, caption: "this one" },
    });
    await telegram.waitUntil(
      () => telegram.sent.filter((m) => m.text.startsWith("⚠️")).length === 2,
      "two notes",
    );
    const notes = telegram.sent.filter((m) => m.text.startsWith("⚠️")).map((m) => m.text);
    expect(notes[0]).toBe(`⚠️ Dimsum did not take a voice message: ${UNSUPPORTED_TEXT}`);
    expect(notes[1]).toContain("did not take a sticker");
    // The voice message posted nothing; the sticker's caption went through as a message.
    await telegram.waitUntil(() => telegram.sent.length === 3, "the answer to the caption");
    expect((await server.channelMessages(id, "58")).map((m) => m.text)).toEqual([
      "this one",
      expect.any(String),
    ]);
  });

  it("refuses an oversized photo and a file of another kind in the chat, and still takes the caption", async () => {
    const server = await startConnectorServer({
      model: "openai:gpt-4o",
      config: { attachments: { maxImageMB: 1, maxPdfMB: 2, maxTextMB: 1 } },
    });
    const { telegram, id } = await telegramBot(server);
    // A PNG signature followed by 1.5 MB: under the largest limit (so it is read), over the image limit.
    const big = Buffer.concat([pngImage(8, 8), randomBytes(1.5 * 1024 * 1024)]);
    telegram.userFile({ chatId: 54, userId: 64, photo: big, caption: "Look at this" });

    await telegram.waitUntil(() => telegram.sent.length === 2, "the refusal and the answer");
    const refusal = telegram.sent.find((m) => m.text.startsWith("⚠️"));
    expect(refusal?.text).toMatch(
      /did not take photo-[0-9a-f]+\.jpg: .* is 1\.5 MB; an image may be at most 1 MB/,
    );
    expect(refusal?.text).toContain("Send a smaller file.");
    const parts = lastUserParts(server);
    expect(parts.find((p) => p.type === "text")?.text).toContain("Look at this");
    expect(parts.some((p) => p.type === "image_url")).toBe(false);

    // Telegram says a document is 3 MB: refused without downloading it.
    const downloads = telegram.downloads.length;
    telegram.userFile({
      chatId: 54,
      userId: 64,
      claimedSize: 3 * 1024 * 1024,
      document: { name: "huge.pdf", data: pdfDocument("x"), mimeType: "application/pdf" },
    });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.text.includes("huge.pdf")), "the refusal");
    expect(telegram.sent.find((m) => m.text.includes("huge.pdf"))?.text).toContain(
      "huge.pdf is too large; Dimsum takes images up to 1 MB, PDFs up to 2 MB and text files up to 1 MB",
    );
    expect(telegram.downloads.length).toBe(downloads);

    // A kind Dimsum does not take (a zip archive) is refused with what it does take.
    const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0]), randomBytes(64)]);
    telegram.userFile({
      chatId: 54,
      userId: 64,
      document: { name: "archive.zip", data: zip, mimeType: "application/zip" },
    });
    await telegram.waitUntil(() => telegram.sent.some((m) => m.text.includes("archive.zip")), "the refusal");
    expect(telegram.sent.find((m) => m.text.includes("archive.zip"))?.text).toContain(
      "archive.zip is not a file Dimsum can attach; attach PNG, JPEG, WebP or GIF images, PDFs",
    );
    // Neither refused file became a message: only the caption and the agent's answer are in the chat.
    const messages = await server.channelMessages(id, "54");
    expect(messages.map((m) => m.text)).toEqual(["Look at this", "Hello from the assistant."]);
    expect(server.db.prepare("SELECT count(*) AS n FROM attachments").get()).toEqual({ n: 0 });
  });
});
