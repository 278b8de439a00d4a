/**
 * The Telegram connector (Bot API). `mode: "polling"` long-polls `getUpdates` (offset kept across
 * restarts); `mode: "webhook"` registers `<publicUrl>/api/connectors/<id>/inbound` with `setWebhook`
 * and a secret token that every inbound POST must carry in `X-Telegram-Bot-Api-Secret-Token`.
 * Text, photos (the largest size) and documents are taken, a caption as the text (voice, video,
 * stickers and the like are answered with what Dimsum reads); files are
 * downloaded by the inbound pipeline through `getFile`. Answers are sent as plain text (at most 4096 characters each) and streamed by editing a preview.
 * A tool call waiting for approval is asked with an inline keyboard (Approve / Always / Reject) whose
 * `callback_data` holds only a ticket token; presses arrive as `callback_query` updates (polled or
 * posted), are answered with `answerCallbackQuery`, and the prompt is edited to show the decision.
 */
import { randomBytes } from "node:crypto";
import * as z from "zod";
import { approvalButtons, approvalText, decodeButtonData, encodeButtonData } from "../approval-buttons.js";
import { FLOW_BUTTONS, flowCardText } from "../flow-cards.js";
import { httpUrl, messageOf, parseWith, retryUntilDone } from "../kind-helpers.js";
import { constantTimeEqual } from "../signatures.js";
import { speakerPlain } from "../speaker-label.js";
import { truncateText } from "../split-text.js";
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
import {
  type InlineKeyboard,
  TELEGRAM_API,
  TelegramApi,
  type TelegramCallbackQuery,
  TelegramError,
  type TelegramMessage,
  type TelegramPhotoSize,
  type TelegramUpdate,
  type TelegramUser,
} from "./telegram-api.js";

export const TELEGRAM_SECRET_HEADER = "x-telegram-bot-api-secret-token";
const OFFSET_KEY = "telegram.offset";
const ALLOWED_UPDATES = ["message", "callback_query"];
const LIMIT = { max: 4096, unit: "utf16" } as const;
const NO_BUTTONS: InlineKeyboard = { inline_keyboard: [] };

const settingsSchema = z
  .object({
    mode: z.enum(["polling", "webhook"]).default("polling"),
    baseUrl: httpUrl.default(TELEGRAM_API),
    /** This server's public base URL (webhook mode), e.g. https://dimsum.example.com */
    publicUrl: httpUrl.optional(),
    /** Seconds each getUpdates call waits for news. */
    pollTimeoutSec: z.number().int().min(0).max(50).default(25),
    /** Stream answers by editing a preview message. */
    streaming: z.boolean().default(true),
  })
  .strict()
  .refine((s) => s.mode !== "webhook" || s.publicUrl !== undefined, {
    message: "webhook mode needs publicUrl, the address Telegram can reach this server at",
    path: ["publicUrl"],
  });

/** How a Telegram user is named in Dimsum: their username, else their name. */
function nameOf(from: TelegramUser): string | undefined {
  const person = [from.first_name, from.last_name].filter(Boolean).join(" ") || undefined;
  return from.username ?? person;
}

/** The platform-neutral press of a callback query; undefined for data that is not a prompt's button. */
export function pressOfQuery(query: TelegramCallbackQuery): ApprovalPress | undefined {
  const decoded = decodeButtonData(query.data);
  if (!decoded || query.from.is_bot) return undefined;
  const name = nameOf(query.from);
  return {
    ...decoded,
    ...(query.message ? { chatId: String(query.message.chat.id) } : {}),
    user: { id: String(query.from.id), ...(name ? { name } : {}) },
  };
}

/** The inline keyboard of a waiting prompt: one row, Approve / Always / Reject. */
export function approvalKeyboard(prompt: ApprovalPrompt): InlineKeyboard {
  return {
    inline_keyboard: [
      approvalButtons(prompt).map((b) => ({
        text: b.label,
        callback_data: encodeButtonData(prompt.token, b.choice),
      })),
    ],
  };
}

/** The inline keyboard of a flow card: its buttons in one row (none once the flow ended). */
export function flowKeyboard(card: FlowCard): InlineKeyboard {
  return {
    inline_keyboard:
      card.buttons.length === 0
        ? []
        : [
            card.buttons.map((choice) => ({
              text: FLOW_BUTTONS[choice],
              callback_data: encodeButtonData(card.token, choice),
            })),
          ],
  };
}

/**
 * The files of a message: the largest size of a photo, or a document. Without `api` they are listed
 * but cannot be downloaded (tests of the parsing).
 */
export function filesOfMessage(message: TelegramMessage, api?: TelegramApi): InboundFile[] {
  const download = (fileId: string) => (maxBytes: number, signal: AbortSignal) => {
    if (!api) throw new Error("no Telegram client to download the file with");
    return api.downloadFile(fileId, maxBytes, signal);
  };
  const files: InboundFile[] = [];
  const largest = (message.photo ?? []).reduce<TelegramPhotoSize | undefined>(
    (best, size) => (!best || size.width * size.height > best.width * best.height ? size : best),
    undefined,
  );
  if (largest) {
    // Telegram re-encodes photos as JPEG and sends no name.
    files.push({
      name: `photo-${largest.file_unique_id}.jpg`,
      ...(largest.file_size !== undefined ? { size: largest.file_size } : {}),
      download: download(largest.file_id),
    });
  }
  const document = message.document;
  if (document) {
    files.push({
      name: document.file_name || `file-${document.file_unique_id}`,
      ...(document.file_size !== undefined ? { size: document.file_size } : {}),
      download: download(document.file_id),
    });
  }
  return files;
}

/** What a message may carry that Dimsum does not read, as the chat is told of it. */
const UNSUPPORTED: ReadonlyArray<[keyof TelegramMessage, string]> = [
  ["voice", "a voice message"],
  ["audio", "an audio file"],
  ["video", "a video"],
  ["video_note", "a video message"],
  ["animation", "an animation"],
  ["sticker", "a sticker"],
  ["location", "a location"],
  ["contact", "a contact"],
  ["poll", "a poll"],
];

/** The platform-neutral message of an update; undefined for updates the connector ignores. */
export function inboundOfUpdate(update: TelegramUpdate, api?: TelegramApi): InboundMessage | undefined {
  const message = update.message;
  if (!message?.from || message.from.is_bot) return undefined;
  const text = message.text ?? message.caption ?? "";
  const files = filesOfMessage(message, api);
  const unsupported = UNSUPPORTED.filter(([key]) => message[key] !== undefined).map(([, what]) => what);
  if (text === "" && files.length === 0 && unsupported.length === 0) return undefined;
  const from = message.from;
  const person = [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username;
  const chatName =
    message.chat.title ??
    ([message.chat.first_name, message.chat.last_name].filter(Boolean).join(" ") || message.chat.username);
  return {
    dedupeKey: `update:${update.update_id}`,
    chat: {
      id: String(message.chat.id),
      ...(chatName ? { name: chatName } : {}),
      ...(message.chat.type !== "private" ? { group: true } : {}),
    },
    user: { id: String(from.id), ...((from.username ?? person) ? { name: from.username ?? person } : {}) },
    text,
    ...(files.length > 0 ? { files } : {}),
    ...(unsupported.length > 0 ? { unsupported } : {}),
  };
}

class TelegramDriver implements ConnectorDriver {
  readonly #context: DriverContext;
  readonly #api: TelegramApi;
  readonly #mode: "polling" | "webhook";
  readonly #abort = new AbortController();
  #background: Promise<void> | undefined;

  constructor(context: DriverContext) {
    this.#context = context;
    this.#api = new TelegramApi(String(context.settings.baseUrl), context.secrets.botToken ?? "");
    this.#mode = context.settings.mode === "webhook" ? "webhook" : "polling";
  }

  readonly preview = {
    send: (chatId: string, text: string) => this.#api.sendMessage(chatId, text),
    edit: (chatId: string, messageId: string, text: string) =>
      this.#api.editMessageText(chatId, messageId, text),
  };

  readonly approvals = {
    update: (chatId: string, messageId: string, prompt: ApprovalPrompt, signal?: AbortSignal) =>
      this.#api.editMessageText(
        chatId,
        messageId,
        truncateText(approvalText(prompt), LIMIT),
        signal,
        NO_BUTTONS,
      ),
  };

  readonly flowCards = {
    update: (chatId: string, messageId: string, card: FlowCard, signal?: AbortSignal) =>
      this.#api.editMessageText(
        chatId,
        messageId,
        truncateText(flowCardText(card), LIMIT),
        signal,
        flowKeyboard(card),
      ),
  };

  /** Tells the presser what came of a press and shows a settled prompt without its buttons. */
  async #acknowledge(query: TelegramCallbackQuery, result: ApprovalPressResult): Promise<void> {
    await this.#api.answerCallbackQuery(query.id, result.notice, !result.ok);
    if (result.prompt && query.message) {
      await this.approvals.update(
        String(query.message.chat.id),
        String(query.message.message_id),
        result.prompt,
      );
    }
  }

  /** Handles a polled callback query; a failure to acknowledge is only logged. */
  async #onQuery(query: TelegramCallbackQuery): Promise<void> {
    const press = pressOfQuery(query);
    try {
      if (!press) {
        await this.#api.answerCallbackQuery(query.id, "");
        return;
      }
      await this.#acknowledge(query, await this.#context.press(press));
    } catch (err) {
      this.#context.log.warn(`Telegram: could not acknowledge a button press: ${messageOf(err)}`);
    }
  }

  async start(): Promise<void> {
    // A refused token fails the start; an unreachable Telegram only delays the work to the background.
    await this.#once(() => this.#api.call("getMe", {}));
    const signal = this.#abort.signal;
    if (this.#mode === "webhook") {
      const registered = await this.#once(() => this.#setWebhook(signal));
      if (!registered) {
        this.#background = retryUntilDone(this.#context, signal, "setWebhook", () =>
          this.#setWebhook(signal),
        );
      }
      return;
    }
    const cleared = await this.#once(() => this.#deleteWebhook(signal));
    this.#background = (
      cleared
        ? Promise.resolve()
        : retryUntilDone(this.#context, signal, "deleteWebhook", () => this.#deleteWebhook(signal))
    ).then(() => this.#poll(signal));
  }

  /** Tries a call once: true when it worked, false after a passing failure (reported), throws otherwise. */
  async #once(call: () => Promise<unknown>): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (err) {
      if (err instanceof TelegramError && !err.retryable) throw err;
      this.#context.report(messageOf(err));
      return false;
    }
  }

  async stop(final: boolean): Promise<void> {
    this.#abort.abort();
    await this.#background;
    await this.#context.lease?.release().catch(() => undefined);
    // Unregistered, Telegram keeps updates for the next start instead of failing to deliver them.
    if (final && this.#mode === "webhook") await this.#deleteWebhook().catch(() => undefined);
  }

  async #setWebhook(signal: AbortSignal): Promise<void> {
    const { settings, secrets, connector } = this.#context;
    await this.#api.call(
      "setWebhook",
      {
        url: `${String(settings.publicUrl)}/api/connectors/${encodeURIComponent(connector.id)}/inbound`,
        secret_token: secrets.webhookSecret,
        allowed_updates: ALLOWED_UPDATES,
      },
      { signal },
    );
  }

  async #deleteWebhook(signal?: AbortSignal): Promise<void> {
    await this.#api.call("deleteWebhook", { drop_pending_updates: false }, signal ? { signal } : {});
  }

  async #poll(signal: AbortSignal): Promise<void> {
    const timeout = Number(this.#context.settings.pollTimeoutSec ?? 25);
    const { state, lease } = this.#context;
    while (!signal.aborted) {
      // Telegram serves getUpdates to one caller at a time: poll only while holding the lease.
      let held = lease === undefined;
      if (lease) {
        await retryUntilDone(this.#context, signal, "taking the poll lease", async () => {
          held = await lease.hold(signal);
        });
      }
      if (!held) continue;
      await retryUntilDone(this.#context, signal, "getUpdates", async () => {
        const offset = Number((await state.get(OFFSET_KEY)) ?? 0);
        let updates: TelegramUpdate[];
        try {
          updates = await this.#api.call<TelegramUpdate[]>(
            "getUpdates",
            { offset, timeout, allowed_updates: ALLOWED_UPDATES },
            { signal, timeoutMs: (timeout + 15) * 1000 },
          );
        } catch (err) {
          // Someone set a webhook meanwhile: polling needs it gone.
          if (err instanceof TelegramError && err.code === 409) await this.#deleteWebhook(signal);
          throw err;
        }
        for (const update of updates) {
          const message = inboundOfUpdate(update, this.#api);
          // The offset moves only past updates that were stored, so nothing is skipped on failure.
          if (message) await this.#context.receive([message]);
          // A press is decided (or refused) before the offset moves past it.
          if (update.callback_query) await this.#onQuery(update.callback_query);
          // Fenced by the lease: once another instance took over, this one stops moving the offset.
          if (!(await state.set(OFFSET_KEY, String(update.update_id + 1), lease?.token))) return;
        }
      });
    }
  }

  async inbound(request: InboundRequest): Promise<InboundOutcome> {
    if (this.#mode !== "webhook") {
      return {
        kind: "rejected",
        status: 403,
        reason: "this Telegram connector polls; it takes no webhook calls",
      };
    }
    const sent = request.headers[TELEGRAM_SECRET_HEADER] ?? "";
    if (!constantTimeEqual(sent, this.#context.secrets.webhookSecret ?? "")) {
      return { kind: "rejected", status: 401, reason: `wrong or missing ${TELEGRAM_SECRET_HEADER} header` };
    }
    let update: TelegramUpdate;
    try {
      update = JSON.parse(request.body) as TelegramUpdate;
      if (typeof update.update_id !== "number") throw new Error("no update_id");
    } catch {
      return { kind: "rejected", status: 400, reason: "the body is not a Telegram Update" };
    }
    const query = update.callback_query;
    if (query) {
      const press = pressOfQuery(query);
      if (press) {
        return {
          kind: "press",
          press,
          reply: async (result) => {
            await this.#acknowledge(query, result);
            return {};
          },
        };
      }
      // Not a prompt's button: only stop its spinner.
      await this.#api.answerCallbackQuery(query.id, "").catch(() => undefined);
    }
    const message = inboundOfUpdate(update, this.#api);
    return { kind: "messages", messages: message ? [message] : [], body: {} };
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined> {
    if (message.flow) {
      const text = truncateText(flowCardText(message.flow), LIMIT);
      return this.#api.sendMessage(message.chatId, text, signal, flowKeyboard(message.flow));
    }
    if (message.approval) {
      const text = truncateText(approvalText(message.approval), LIMIT);
      return this.#api.sendMessage(message.chatId, text, signal, approvalKeyboard(message.approval));
    }
    const { text, entities } = speakerPlain(message.speaker, message.text);
    if (message.editMessageId !== undefined) {
      await this.#api.editMessageText(
        message.chatId,
        message.editMessageId,
        text,
        signal,
        undefined,
        entities,
      );
      return message.editMessageId;
    }
    return this.#api.sendMessage(message.chatId, text, signal, undefined, entities);
  }

  async sendFile(
    message: OutboundMessage,
    file: OutboundFile,
    signal?: AbortSignal,
  ): Promise<string | undefined> {
    // A photo's caption is at most 1,024 characters: the speaker's label and the file's name fit.
    const caption = message.speaker ? speakerPlain(message.speaker, file.name) : undefined;
    return this.#api.sendFile(message.chatId, file, caption, signal);
  }

  async test(): Promise<string> {
    const me = await this.#api.call<{ username?: string; first_name?: string }>("getMe", {});
    return `connected as @${me.username ?? me.first_name ?? "?"}`;
  }
}

/** The Telegram kind. */
export const telegramKind: ConnectorKind = {
  type: "telegram",
  label: "Telegram",
  secrets: [
    {
      name: "botToken",
      label: "Bot token",
      required: true,
      pattern: /^\d+:[\w-]{20,}$/,
      rule: "a bot token like 123456:ABC-DEF… from @BotFather",
    },
    {
      name: "webhookSecret",
      label: "Webhook secret token",
      required: true,
      pattern: /^[A-Za-z0-9_-]{1,256}$/,
      rule: "1-256 of A-Z a-z 0-9 _ -",
    },
  ],
  parseSettings: (settings) =>
    parseWith(settingsSchema, settings, "Telegram", {
      mode: "Receive by",
      baseUrl: "Bot API URL",
      publicUrl: "Public URL of this server",
      pollTimeoutSec: "Poll timeout",
    }),
  generateSecrets: () => ({ webhookSecret: randomBytes(24).toString("base64url") }),
  limit: () => LIMIT,
  streams: (settings) => settings.streaming !== false,
  approvals: true,
  create: (context) => new TelegramDriver(context),
};
