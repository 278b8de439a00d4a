/**
 * Files in the web composer (issue 26), in real headless Chromium against a real server, SQLite file
 * and the scripted fake LLM: files come by the paperclip, a drop and a paste, each uploads at once
 * into the tray (image thumbnails, file chips, a refusal beside its file), an image for a model that
 * cannot read images is warned about, a preview is removed before sending, the model gets the images
 * in the OpenAI wire form, and the history shows thumbnails and a PDF chip live and after a reload,
 * served to the chat's readers only. Screenshots at 1440×900 and 390×844, nothing scrolls sideways.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import type { ChannelRecord } from "../../src/team/types.js";
import type { FakeLlmServer } from "../../src/testing/fake-llm-server.js";
import { call, type Session, withUsers } from "../server/helpers.js";
import { pdfDocument, pngImage } from "../support/attachment-files.js";
import { AgentScripts } from "../team/harness.js";
import {
  animationsSettled,
  flow,
  type PageLog,
  resetArtifacts,
  screenshot,
  sidewaysOverflow,
} from "./browser.js";
import type { E2eServer } from "./e2e-server.js";
import { e2eStack } from "./stack.js";

const TIMEOUT_MS = 90_000;
const WIDE = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };
const scripts = new AgentScripts();
let page: Page;
let log: PageLog;
let server: E2eServer;
let llm: FakeLlmServer;
let owner: Session;
let member: Session;
let chat: ChannelRecord;

const photo = pngImage(160, 100, [40, 110, 200]);
const pasted = pngImage(120, 120, [230, 150, 30]);
const dropped = pngImage(90, 60, [60, 160, 80]);
const lease = pdfDocument("The lease runs until March.");

const byTest = (id: string) => page.getByTestId(id);
const item = (name: string) => page.locator(`[data-testid="attachment-item"][data-name="${name}"]`);
const step = (name: string, body: () => Promise<void>) => flow(page, log, server.logLines, name, body);
const until = <T>(read: () => Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

async function api<T>(path: string, body?: unknown, status = body === undefined ? 200 : 201): Promise<T> {
  const res = await call(server.url, path, { session: owner, ...(body === undefined ? {} : { body }) });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${path}: ${res.status} ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

/** Resizes the page and waits for the layout's transitions (the sidebar sliding away) to end. */
async function resize(size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await animationsSettled(page);
}

/** Dispatches `type` (a drag event or a paste) carrying a file built in the page from base64 bytes. */
async function sendFileEvent(
  type: "dragenter" | "drop" | "paste",
  target: string,
  file: { name: string; mime: string; bytes: Buffer },
): Promise<void> {
  await page.evaluate(
    ({ type, target, name, mime, base64 }) => {
      const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
      const data = new DataTransfer();
      data.items.add(new File([bytes], name, { type: mime }));
      const el = document.querySelector(`[data-testid="${target}"]`);
      if (!el) throw new Error(`no ${target}`);
      const event =
        type === "paste"
          ? new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true })
          : new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true });
      el.dispatchEvent(event);
    },
    { type, target, name: file.name, mime: file.mime, base64: file.bytes.toString("base64") },
  );
}

/** The image parts of the newest user message the fake LLM received (OpenAI wire form). */
function sentImageUrls(): string[] {
  const last = llm.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
  const user = last.messages.filter((m) => m.role === "user").at(-1)?.content;
  if (!Array.isArray(user)) return [];
  return (user as Array<{ type: string; image_url?: { url: string } }>).flatMap((p) =>
    p.type === "image_url" && p.image_url ? [p.image_url.url] : [],
  );
}

e2eStack(
  { before: () => resetArtifacts("attachments"), llm: { defaultTurn: scripts.turn } },
  async (stack) => {
    ({ page, log, server, llm } = stack);
    const users = await withUsers(server.url, ["member"]);
    owner = users.owner;
    member = users.users.member!;
    // deepseek-chat is catalogued as reading text only; its requests still go to the fake LLM.
    await api("/api/agents", { id: "texty", name: "Texty", emoji: "📝", model: "openai:deepseek-chat" });
    chat = await api<ChannelRecord>("/api/channels", {
      kind: "group",
      name: "Paperwork",
      leaderAgentId: "assistant",
      agentIds: ["assistant", "texty"],
      userIds: [],
    });
    await page.setViewportSize(WIDE);
    await page.goto(server.url);
    await byTest("login-username").fill("alice");
    await byTest("login-password").fill("owner-password-1");
    await byTest("login-submit").click();
    await byTest("home-page").waitFor();
  },
);

describe("files in the web composer", () => {
  it(
    "attaches by button, drop and paste; refuses beside the file; warns for a text-only model; sends images the model gets",
    async () => {
      await step("attachments/01-tray", async () => {
        await page.goto(`${server.url}/c/${chat.id}`);
        await page.locator(`[data-testid="chat-page"][data-channel-id="${chat.id}"]`).waitFor();
        // The paperclip is a labelled button reached by Tab from the composer's neighbourhood.
        const clip = byTest("composer-attach");
        expect(await clip.getAttribute("aria-label")).toBe("Attach files");
        await clip.focus();
        expect(await page.evaluate(() => document.activeElement?.getAttribute("data-testid"))).toBe(
          "composer-attach",
        );

        // By the button (its file input): an image, a PDF and a file Dimsum does not take.
        await byTest("composer-file-input").setInputFiles([
          { name: "photo.png", mimeType: "image/png", buffer: photo },
          { name: "lease.pdf", mimeType: "application/pdf", buffer: lease },
          { name: "tool.bin", mimeType: "application/octet-stream", buffer: Buffer.from([0, 1, 2, 0, 255]) },
        ]);
        await until(() => item("photo.png").getAttribute("data-status")).toBe("ready");
        await until(() => item("lease.pdf").getAttribute("data-status")).toBe("ready");
        expect(await item("photo.png").locator("img").getAttribute("alt")).toBe("photo.png");
        expect(await item("lease.pdf").textContent()).toContain("PDF ·");
        // The refusal stands beside its file, in the server's words.
        await until(() => item("tool.bin").getAttribute("data-status")).toBe("error");
        expect(await item("tool.bin").getByTestId("attachment-error").textContent()).toContain(
          "tool.bin is not a file Dimsum can attach (attach PNG, JPEG, WebP or GIF images, PDFs, or text files",
        );
        // A refused file stops sending until it is removed.
        await byTest("composer-input").fill("@assistant what are these?");
        expect(await byTest("composer-send").isDisabled()).toBe(true);
        expect(await byTest("attach-note").textContent()).toContain(
          "Remove the files that cannot be attached",
        );

        // By dragging: the drop target shows while files are over the page, then the drop adds the file.
        await sendFileEvent("dragenter", "composer-input", {
          name: "dropped.png",
          mime: "image/png",
          bytes: dropped,
        });
        await byTest("composer-drop").waitFor();
        await screenshot(page, "attachments/01a-drop-target-1440");
        await sendFileEvent("drop", "composer-input", {
          name: "dropped.png",
          mime: "image/png",
          bytes: dropped,
        });
        await until(() => byTest("composer-drop").count()).toBe(0);
        await until(() => item("dropped.png").getAttribute("data-status")).toBe("ready");

        // By pasting an image from the clipboard.
        await sendFileEvent("paste", "composer-input", {
          name: "pasted.png",
          mime: "image/png",
          bytes: pasted,
        });
        await until(() => item("pasted.png").getAttribute("data-status")).toBe("ready");
        expect(await byTest("composer-input").inputValue()).toBe("@assistant what are these?");

        // An image for an agent whose model reads no images: warned at once, naming why.
        expect(await byTest("attach-image-warning").count()).toBe(0);
        await byTest("composer-input").fill("@texty what are these?");
        const warning = byTest("attach-image-warning");
        await warning.waitFor();
        expect(await warning.textContent()).toContain(
          "Texty's model (openai:deepseek-chat) cannot read images",
        );
        await screenshot(page, "attachments/01b-composer-1440");
        await resize(PHONE);
        await screenshot(page, "attachments/01c-composer-390");
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await resize(WIDE);
        await byTest("composer-input").fill("@assistant what are these?");
        await until(() => warning.count()).toBe(0);
      });
    },
    TIMEOUT_MS,
  );

  it(
    "removes a preview, sends the rest, and shows thumbnails and a PDF chip that survive a reload, served to readers only",
    async () => {
      await step("attachments/02-history", async () => {
        await item("tool.bin").getByTestId("attachment-remove").click();
        await item("dropped.png").getByTestId("attachment-remove").click();
        await until(() => byTest("attachment-item").count()).toBe(3);
        expect(await byTest("attach-note").count()).toBe(0);
        llm.reset();
        scripts.add("assistant", { text: "A blue photo, an orange square and a lease." });
        await byTest("composer-send").click();
        await page.getByText("A blue photo, an orange square and a lease.").waitFor();
        await until(() => byTest("attachment-tray").count()).toBe(0);

        // The model got both images as OpenAI image_url data parts, in the order attached.
        expect(sentImageUrls()).toEqual([
          `data:image/png;base64,${photo.toString("base64")}`,
          `data:image/png;base64,${pasted.toString("base64")}`,
        ]);

        const mine = page.locator('[data-testid="message"]').filter({ has: byTest("message-attachments") });
        const checkHistory = async () => {
          await mine.first().waitFor();
          const images = mine.getByTestId("message-image");
          expect(await images.count()).toBe(2);
          const img = images.first().locator("img");
          expect(await img.getAttribute("alt")).toBe("photo.png");
          expect(await img.getAttribute("loading")).toBe("lazy");
          await until(() => img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBe(160);
          const chip = mine.getByTestId("message-file");
          expect(await chip.textContent()).toContain("lease.pdf");
          expect(await chip.getAttribute("target")).toBe("_blank");
          return (await chip.getAttribute("href")) ?? "";
        };
        const pdfHref = await checkHistory();
        await page.reload();
        const imageHref = (await (async () => {
          await checkHistory();
          return mine.getByTestId("message-image").first().getAttribute("href");
        })()) as string;
        expect(imageHref).toMatch(new RegExp(`^/api/channels/${chat.id}/attachments/[0-9a-f]{64}$`));

        // The reader's session gets the files; a member who is not in the chat gets 404.
        const own = await page.request.get(`${server.url}${pdfHref}`);
        expect(own.status()).toBe(200);
        expect(own.headers()["content-type"]).toBe("application/pdf");
        for (const href of [imageHref, pdfHref]) {
          const outsider = await call(server.url, href, { session: member });
          expect(outsider.status).toBe(404);
        }

        await mine.first().scrollIntoViewIfNeeded();
        await screenshot(page, "attachments/02a-history-1440");
        await resize(PHONE);
        await mine.first().scrollIntoViewIfNeeded();
        await screenshot(page, "attachments/02b-history-390");
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await resize(WIDE);

        expect(log.cspViolations()).toEqual([]);
        expect(log.uncaught()).toEqual([]);
      });
    },
    TIMEOUT_MS,
  );

  it(
    "the home page's composer holds files until the new chat exists, then sends them with the first message",
    async () => {
      await step("attachments/03-home", async () => {
        await page.goto(server.url);
        await byTest("home-page").waitFor();
        await byTest("home-composer-file-input").setInputFiles([
          { name: "whiteboard.png", mimeType: "image/png", buffer: photo },
          { name: "notes.bin", mimeType: "application/octet-stream", buffer: Buffer.from([0, 1, 2, 0, 255]) },
        ]);
        await until(() => item("whiteboard.png").getAttribute("data-status")).toBe("ready");
        await until(() => item("notes.bin").getAttribute("data-status")).toBe("error");
        await byTest("home-composer-input").fill("What does the whiteboard say?");
        // A refused file stops the chat from starting until it is removed.
        expect(await byTest("home-composer-send").isDisabled()).toBe(true);
        await screenshot(page, "attachments/03a-home-1440");
        await resize(PHONE);
        await screenshot(page, "attachments/03b-home-390");
        expect(await sidewaysOverflow(page)).toBeLessThanOrEqual(0);
        await resize(WIDE);
        await item("notes.bin").getByTestId("attachment-remove").click();
        llm.reset();
        scripts.add("assistant", { text: "It says: ship on Friday." });
        await byTest("home-composer-send").click();
        await page.getByText("It says: ship on Friday.").waitFor();
        // The answer's request carried the image (the chat's title request after it does not).
        const answered = llm.requests.find((r) =>
          JSON.stringify(r.body).includes("What does the whiteboard say?"),
        );
        expect(JSON.stringify(answered?.body)).toContain(`data:image/png;base64,${photo.toString("base64")}`);
        const mine = page.locator('[data-testid="message"]').filter({ has: byTest("message-attachments") });
        expect(await mine.getByTestId("message-image").count()).toBe(1);
        expect(log.uncaught()).toEqual([]);
      });
    },
    TIMEOUT_MS,
  );
});
