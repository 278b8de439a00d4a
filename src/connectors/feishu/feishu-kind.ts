/**
 * The Feishu/Lark connector. `mode: "long-connection"` (the default for new connectors) receives
 * events over the SDK's long connection (feishu-long-connection.ts): no public address needed, one
 * instance holds the connection at a time. `mode: "webhook"`: the app's event subscription ("send
 * events to the developer's server") points at `/api/connectors/<id>/inbound`. An Encrypt Key is
 * then required: every event must be
 * encrypted and signed (`X-Lark-Signature`), and carry the app's Verification Token; the unsigned
 * `url_verification` handshake is answered only when it decrypts with the key and carries the token.
 * Messages (`im.message.receive_v1`) of type text, image, file and post (rich text with images) are
 * taken; images and files are downloaded with the SDK's message-resource API by the inbound pipeline.
 * Answers go back as text messages to the chat.
 * A tool call waiting for approval is asked with an interactive card (Approve / Always / Reject
 * buttons whose `value` holds only a ticket token). Presses arrive as `card.action.trigger` callbacks
 * (configure the same request URL under "Callback configuration"), verified like events, and are
 * answered with a toast and the card updated to show the decision. A flow's progress is one card
 * updated in place (PATCH) with its Pause / Resume / Skip / Retry buttons; with `streaming`, an
 * answer is streamed into a card updated at most once a second, which then holds the whole answer.
 */
import * as z from "zod";
import {
  approvalButtons,
  approvalTitle,
  decisionLine,
  decodeButtonData,
  encodeButtonData,
} from "../approval-buttons.js";
import { FLOW_BUTTONS } from "../flow-cards.js";
import { holdOpened } from "../held-connection.js";
import { httpUrl, parseWith, tokenAtStart } from "../kind-helpers.js";
import { constantTimeEqual } from "../signatures.js";
import { speakerCard } from "../speaker-label.js";
import type {
  ApprovalPress,
  ApprovalPressResult,
  ApprovalPrompt,
  ConnectorDriver,
  ConnectorKind,
  DriverContext,
  FlowCard,
  InboundFile,
  InboundMessage,
  InboundOutcome,
  InboundRequest,
  OutboundFile,
  OutboundMessage,
} from "../types.js";
import { FEISHU_API, FeishuApi } from "./feishu-api.js";
import { decryptLarkEvent, LARK_SIGNATURE_HEADER, verifyLarkSignature } from "./feishu-crypto.js";
import { FeishuResources } from "./feishu-resource.js";

/** How the SDK's long connection requires an App ID to look. */
const LONG_CONNECTION_APP_ID = /^cli_[0-9a-fA-F]{16}$/;

const settingsSchema = z
  .object({
    appId: z.string().trim().min(1).max(100),
    /** Stored connectors from before the long connection have no mode: they used the webhook. */
    mode: z.enum(["long-connection", "webhook"]).default("webhook"),
    /** https://open.feishu.cn (Feishu) or https://open.larksuite.com (Lark). */
    baseUrl: httpUrl.default(FEISHU_API),
    /** Stream answers into a card updated in place (PATCH), then the whole answer into the same card. */
    streaming: z.boolean().default(false),
  })
  .strict()
  .refine((s) => s.mode !== "long-connection" || LONG_CONNECTION_APP_ID.test(s.appId), {
    message: "the long connection needs the App ID as the console shows it: cli_ and 16 hex digits",
    path: ["appId"],
  });

const webhookMode = (settings: Record<string, unknown>) => settings.mode === "webhook";

interface FeishuUserId {
  open_id?: string;
  user_id?: string;
  union_id?: string;
}

interface FeishuEvent {
  schema?: string;
  type?: string;
  token?: string;
  challenge?: string;
  header?: { event_id?: string; event_type?: string; token?: string };
  event?: {
    sender?: { sender_id?: FeishuUserId; sender_type?: string };
    /** Who pressed (card.action.trigger). */
    operator?: FeishuUserId;
    action?: { tag?: string; value?: unknown };
    context?: { open_message_id?: string; open_chat_id?: string };
    message?: {
      message_id?: string;
      chat_id?: string;
      chat_type?: string;
      message_type?: string;
      content?: string;
    };
  };
}

/** Text without the `@_user_N` placeholders of mentions (the bot's own). */
function withoutMentions(text: string): string {
  return text.replace(/@_user_\d+/g, "").trim();
}

/** A resource of a message: an image (`image_key`) or a file (`file_key`). */
interface FeishuResource {
  key: string;
  type: "image" | "file";
  name: string;
}

/** One element of a rich-text (`post`) paragraph. */
interface PostElement {
  tag?: unknown;
  text?: unknown;
  href?: unknown;
  image_key?: unknown;
}

/** Parses a message's JSON content; an object, or undefined. */
function contentOf(content: string | undefined): Record<string, unknown> | undefined {
  try {
    const parsed = JSON.parse(content ?? "") as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function imageName(key: string): string {
  return `image-${key.slice(-10)}`;
}

/**
 * The text and resources of a message: `text`, `image`, `file`, and `post` rich text (its title, text,
 * links and images, paragraph by paragraph). Other types give nothing.
 */
export function partsOfMessage(
  type: string | undefined,
  content: string | undefined,
): { text: string; resources: FeishuResource[] } {
  const parsed = contentOf(content);
  const none = { text: "", resources: [] };
  if (!parsed) return none;
  const str = (value: unknown) => (typeof value === "string" ? value : "");
  if (type === "text") return { text: withoutMentions(str(parsed.text)), resources: [] };
  if (type === "image") {
    const key = str(parsed.image_key);
    return key ? { text: "", resources: [{ key, type: "image", name: imageName(key) }] } : none;
  }
  if (type === "file") {
    const key = str(parsed.file_key);
    const name = str(parsed.file_name) || `file-${key.slice(-10)}`;
    return key ? { text: "", resources: [{ key, type: "file", name }] } : none;
  }
  if (type !== "post") return none;
  const lines: string[] = [];
  const resources: FeishuResource[] = [];
  if (str(parsed.title)) lines.push(str(parsed.title));
  const paragraphs = Array.isArray(parsed.content) ? (parsed.content as unknown[]) : [];
  for (const paragraph of paragraphs) {
    if (!Array.isArray(paragraph)) continue;
    let line = "";
    for (const element of paragraph as PostElement[]) {
      if (element.tag === "text") line += str(element.text);
      else if (element.tag === "a")
        line += str(element.href) ? `${str(element.text)} (${str(element.href)})` : str(element.text);
      else if (element.tag === "img" && str(element.image_key)) {
        const key = str(element.image_key);
        resources.push({ key, type: "image", name: imageName(key) });
      }
    }
    if (line.trim() !== "") lines.push(line);
  }
  return { text: withoutMentions(lines.join("\n")), resources };
}

/** Downloads a message's resource (the driver's `FeishuResources`). */
export type FeishuDownload = (
  messageId: string,
  key: string,
  type: "image" | "file",
  maxBytes: number,
  signal: AbortSignal,
) => Promise<Buffer>;

/**
 * The platform-neutral message of a decrypted v2 event; undefined for events the connector ignores.
 * Without `download` its files are listed but cannot be fetched (tests of the parsing).
 */
export function inboundOfEvent(event: FeishuEvent, download?: FeishuDownload): InboundMessage | undefined {
  if (event.header?.event_type !== "im.message.receive_v1") return undefined;
  const message = event.event?.message;
  const sender = event.event?.sender;
  if (sender?.sender_type !== "user" || !message?.chat_id) return undefined;
  const userId = userIdOf(sender.sender_id);
  const { text, resources } = partsOfMessage(message.message_type, message.content);
  const type = message.message_type ?? "";
  const unsupported = Object.hasOwn(FEISHU_UNSUPPORTED, type) ? FEISHU_UNSUPPORTED[type] : undefined;
  if (!userId || (text === "" && resources.length === 0 && !unsupported)) return undefined;
  const messageId = message.message_id ?? "";
  const files: InboundFile[] = resources.map((resource) => ({
    name: resource.name,
    download: (maxBytes, signal) => {
      if (!download) throw new Error("no Feishu client to download the file with");
      return download(messageId, resource.key, resource.type, maxBytes, signal);
    },
  }));
  return {
    dedupeKey: `event:${event.header.event_id ?? message.message_id ?? ""}`,
    chat: {
      id: message.chat_id,
      ...(message.chat_type === "p2p" ? {} : { name: `group ${message.chat_id}`, group: true }),
    },
    user: { id: userId },
    text,
    ...(files.length > 0 ? { files } : {}),
    ...(unsupported ? { unsupported: [unsupported] } : {}),
  };
}

/** Message types Dimsum does not read, as the chat is told of them. */
const FEISHU_UNSUPPORTED: Readonly<Record<string, string>> = {
  audio: "a voice message",
  media: "a video",
  sticker: "a sticker",
  location: "a location",
  share_chat: "a shared chat",
  share_user: "a shared contact",
};

/** The id a Feishu user is known by (the same for their messages and their presses). */
function userIdOf(id: FeishuUserId | undefined): string | undefined {
  return id?.open_id ?? id?.union_id ?? id?.user_id;
}

/** The platform-neutral press of a `card.action.trigger` callback; undefined for other events and buttons. */
export function pressOfEvent(event: FeishuEvent): ApprovalPress | undefined {
  if (event.header?.event_type !== "card.action.trigger") return undefined;
  const value = event.event?.action?.value;
  const data =
    typeof value === "object" && value !== null ? (value as { dimsum?: unknown }).dimsum : undefined;
  const decoded = decodeButtonData(data);
  const userId = userIdOf(event.event?.operator);
  if (!decoded || !userId) return undefined;
  const chatId = event.event?.context?.open_chat_id;
  return { ...decoded, ...(chatId ? { chatId } : {}), user: { id: userId } };
}

const TEMPLATES = { approved: "green", rejected: "red", expired: "grey" } as const;
const BUTTON_TYPES = { approve: "primary", always: "default", reject: "danger" } as const;

/** An approval prompt as a shared card (JSON 1.0): buttons while it waits, the decision once settled. */
export function approvalCard(prompt: ApprovalPrompt): Record<string, unknown> {
  const text = (content: string) => ({ tag: "div", text: { tag: "plain_text", content } });
  const elements: unknown[] = [text(prompt.summary), text(`Why: ${prompt.reason}`)];
  if (prompt.decision) {
    elements.push({ tag: "hr" }, text(decisionLine(prompt.decision, prompt.tool)));
  } else {
    elements.push({
      tag: "action",
      actions: approvalButtons(prompt).map((b) => ({
        tag: "button",
        text: { tag: "plain_text", content: b.label },
        type: BUTTON_TYPES[b.choice],
        value: { dimsum: encodeButtonData(prompt.token, b.choice) },
      })),
    });
  }
  return {
    // Shared, so an update (and the callback's answer) shows for everyone in the chat.
    config: { wide_screen_mode: true, update_multi: true },
    header: {
      template: prompt.decision ? TEMPLATES[prompt.decision.state] : "orange",
      title: { tag: "plain_text", content: approvalTitle(prompt) },
    },
    elements,
  };
}

const FLOW_TEMPLATES = { running: "blue", paused: "orange", error: "red", ended: "green" } as const;

/** A flow's progress as a shared card (JSON 1.0): the steps, and its buttons while it can take them. */
export function flowCardJson(card: FlowCard): Record<string, unknown> {
  const elements: unknown[] = [{ tag: "div", text: { tag: "plain_text", content: card.lines.join("\n") } }];
  if (card.buttons.length > 0) {
    elements.push({
      tag: "action",
      actions: card.buttons.map((choice) => ({
        tag: "button",
        text: { tag: "plain_text", content: FLOW_BUTTONS[choice] },
        type: choice === "pause" ? "default" : "primary",
        value: { dimsum: encodeButtonData(card.token, choice) },
      })),
    });
  }
  const template = card.ended
    ? FLOW_TEMPLATES.ended
    : card.buttons.includes("resume")
      ? FLOW_TEMPLATES.paused
      : card.buttons.includes("retry")
        ? FLOW_TEMPLATES.error
        : FLOW_TEMPLATES.running;
  return {
    config: { wide_screen_mode: true, update_multi: true },
    header: { template, title: { tag: "plain_text", content: card.title } },
    elements,
  };
}

/** A streamed answer's card (shared, so it can be updated): the text so far as Markdown. */
export function answerCard(text: string): Record<string, unknown> {
  return {
    config: { wide_screen_mode: true, update_multi: true },
    elements: [{ tag: "div", text: { tag: "lark_md", content: text } }],
  };
}

/** The answer to a card callback: a toast for the presser, and the settled card when it changed. */
export function cardActionResponse(result: ApprovalPressResult): Record<string, unknown> {
  return {
    toast: { type: result.ok ? "success" : "error", content: result.notice },
    ...(result.prompt ? { card: { type: "raw", data: approvalCard(result.prompt) } } : {}),
  };
}

class FeishuDriver implements ConnectorDriver {
  readonly #context: DriverContext;
  readonly #api: FeishuApi;
  readonly #resources: FeishuResources;
  readonly #download: FeishuDownload;
  readonly #abort = new AbortController();
  #background: Promise<void> | undefined;

  constructor(context: DriverContext) {
    this.#context = context;
    this.#api = new FeishuApi({
      baseUrl: String(context.settings.baseUrl),
      appId: String(context.settings.appId),
      appSecret: context.secrets.appSecret ?? "",
      now: context.now,
    });
    this.#resources = new FeishuResources({
      baseUrl: String(context.settings.baseUrl),
      appId: String(context.settings.appId),
      appSecret: context.secrets.appSecret ?? "",
      tenantToken: (signal) => this.#api.tenantToken(signal),
      dropToken: () => this.#api.dropToken(),
    });
    this.#download = (messageId, key, type, maxBytes, signal) =>
      this.#resources.download(messageId, key, type, maxBytes, signal);
  }

  async start(): Promise<void> {
    await tokenAtStart(this.#context, () => this.#api.tenantToken());
    if (webhookMode(this.#context.settings)) return;
    const context = this.#context;
    this.#background = holdOpened(context, this.#abort.signal, async () => {
      const { openFeishuLongConnection } = await import("./feishu-long-connection.js");
      return openFeishuLongConnection({
        baseUrl: String(context.settings.baseUrl),
        appId: String(context.settings.appId),
        appSecret: context.secrets.appSecret ?? "",
        ...(context.secrets.encryptKey ? { encryptKey: context.secrets.encryptKey } : {}),
        onMessage: async (event) => {
          const message = inboundOfEvent(event as FeishuEvent, this.#download);
          if (message) await context.receive([message]);
        },
        onCardAction: async (event) => {
          const press = pressOfEvent(event as FeishuEvent);
          return press ? cardActionResponse(await context.press(press)) : {};
        },
        report: context.report,
        log: context.log,
      });
    });
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#background;
  }

  async inbound(request: InboundRequest): Promise<InboundOutcome> {
    if (!webhookMode(this.#context.settings)) {
      return {
        kind: "rejected",
        status: 403,
        reason: "this Feishu connector uses the long connection; it takes no event callbacks",
      };
    }
    const encryptKey = this.#context.secrets.encryptKey ?? "";
    const signed = request.headers[LARK_SIGNATURE_HEADER] !== undefined;
    if (signed && !verifyLarkSignature(request.headers, encryptKey, request.body)) {
      return { kind: "rejected", status: 401, reason: "X-Lark-Signature does not match the body" };
    }
    let outer: { encrypt?: unknown };
    try {
      outer = JSON.parse(request.body) as { encrypt?: unknown };
    } catch {
      return { kind: "rejected", status: 400, reason: "the body is not JSON" };
    }
    if (typeof outer.encrypt !== "string") {
      return {
        kind: "rejected",
        status: 400,
        reason: "expected an encrypted event; set the same Encrypt Key in the Feishu console",
      };
    }
    const plain = decryptLarkEvent(encryptKey, outer.encrypt);
    let event: FeishuEvent;
    try {
      event = JSON.parse(plain ?? "") as FeishuEvent;
    } catch {
      return {
        kind: "rejected",
        status: 401,
        reason: "the event does not decrypt with this connector's Encrypt Key",
      };
    }
    const token = event.header?.token ?? event.token ?? "";
    if (!constantTimeEqual(token, this.#context.secrets.verificationToken ?? "")) {
      return { kind: "rejected", status: 401, reason: "wrong Verification Token in the event" };
    }
    if (event.type === "url_verification") return { kind: "reply", body: { challenge: event.challenge } };
    if (!signed)
      return { kind: "rejected", status: 401, reason: "unsigned event (no X-Lark-Signature header)" };
    if (event.header?.event_type === "card.action.trigger") {
      const press = pressOfEvent(event);
      if (!press) return { kind: "reply", body: {} };
      return { kind: "press", press, reply: async (result) => cardActionResponse(result) };
    }
    const message = inboundOfEvent(event, this.#download);
    return { kind: "messages", messages: message ? [message] : [], body: {} };
  }

  readonly approvals = {
    update: (_chatId: string, messageId: string, prompt: ApprovalPrompt, signal?: AbortSignal) =>
      this.#api.updateCard(messageId, approvalCard(prompt), signal),
  };

  readonly flowCards = {
    update: (_chatId: string, messageId: string, card: FlowCard, signal?: AbortSignal) =>
      this.#api.updateCard(messageId, flowCardJson(card), signal),
  };

  readonly preview = {
    send: (chatId: string, text: string) => this.#api.sendCard(chatId, answerCard(text)),
    edit: (_chatId: string, messageId: string, text: string) =>
      this.#api.updateCard(messageId, answerCard(text)),
  };

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined> {
    if (message.flow) {
      return this.#api.sendCard(message.chatId, flowCardJson(message.flow), message.deliveryId, signal);
    }
    if (message.approval) {
      return this.#api.sendCard(message.chatId, approvalCard(message.approval), message.deliveryId, signal);
    }
    if (message.editMessageId !== undefined) {
      // The streamed preview card becomes the whole answer.
      const card = message.speaker ? speakerCard(message.speaker, message.text) : answerCard(message.text);
      await this.#api.updateCard(message.editMessageId, card, signal);
      return message.editMessageId;
    }
    if (message.speaker) {
      const card = speakerCard(message.speaker, message.text);
      return this.#api.sendCard(message.chatId, card, message.deliveryId, signal);
    }
    return this.#api.sendText(message.chatId, message.text, message.deliveryId, signal);
  }

  async sendFile(
    message: OutboundMessage,
    file: OutboundFile,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    // A file message has no header: in a group the answer's card just above says who speaks.
    return this.#api.sendFile(message.chatId, file, message.deliveryId, signal);
  }

  async test(): Promise<string> {
    await this.#api.tenantToken();
    return `got a tenant access token for app ${String(this.#context.settings.appId)}`;
  }
}

/** The Feishu/Lark kind. */
export const feishuKind: ConnectorKind = {
  type: "feishu",
  label: "Feishu/Lark",
  secrets: [
    { name: "appSecret", label: "App Secret", required: true },
    { name: "encryptKey", label: "Encrypt Key", required: true, requiredWhen: webhookMode },
    { name: "verificationToken", label: "Verification Token", required: true, requiredWhen: webhookMode },
  ],
  parseSettings: (settings) =>
    parseWith(settingsSchema, settings, "Feishu/Lark", {
      appId: "App ID",
      mode: "Receive by",
      baseUrl: "Open API URL",
      streaming: "Stream answers",
    }),
  createDefaults: { mode: "long-connection" },
  // Text messages may be up to 150 KB; 30,000 bytes keeps a message readable and far inside that.
  limit: () => ({ max: 30_000, unit: "utf8" }),
  streams: (settings) => settings.streaming === true,
  approvals: true,
  create: (context) => new FeishuDriver(context),
};
