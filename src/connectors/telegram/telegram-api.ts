/**
 * The Telegram Bot API calls the connector uses: `POST <base>/bot<token>/<method>` with a JSON body,
 * answered `{ok: true, result}` or `{ok: false, error_code, description, parameters?: {retry_after}}`.
 * Files people send are fetched with `getFile` (→ `file_path`) and `GET <base>/file/bot<token>/<file_path>`.
 * The token is part of the URL, so errors name the host and method, never the URL.
 */
import { downloadFile } from "../file-download.js";
import { bodyExcerpt, requestJson, retryableStatus } from "../http-json.js";
import { DeliveryError } from "../types.js";

export const TELEGRAM_API = "https://api.telegram.org";

interface TelegramReply {
  ok?: boolean;
  result?: unknown;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

/** A refused Bot API call, with Telegram's error code (e.g. 401 bad token, 409 webhook conflict). */
export class TelegramError extends DeliveryError {
  readonly code: number;

  constructor(method: string, code: number, description: string, retryAfterSec?: number) {
    super(`Telegram ${method} failed (${code}): ${description}`, {
      retryable: retryableStatus(code),
      ...(retryAfterSec !== undefined ? { retryAfterMs: retryAfterSec * 1000 } : {}),
    });
    this.name = "TelegramError";
    this.code = code;
  }
}

export interface TelegramUser {
  id: number;
  is_bot?: boolean;
  first_name?: string;
  last_name?: string;
  username?: string;
}

/** A formatting span of a message's text (offsets in UTF-16 code units). */
export interface TextEntity {
  type: "bold";
  offset: number;
  length: number;
}

export interface TelegramChat {
  id: number;
  type: string;
  title?: string;
  username?: string;
  first_name?: string;
  last_name?: string;
}

/** One size of a photo (Telegram sends several, the largest last). */
export interface TelegramPhotoSize {
  file_id: string;
  file_unique_id: string;
  width: number;
  height: number;
  file_size?: number;
}

/** A general file ("document"). */
export interface TelegramDocument {
  file_id: string;
  file_unique_id: string;
  file_name?: string;
  mime_type?: string;
  file_size?: number;
}

export interface TelegramMessage {
  message_id: number;
  from?: TelegramUser;
  chat: TelegramChat;
  date?: number;
  text?: string;
  /** The text sent with a photo or document. */
  caption?: string;
  photo?: TelegramPhotoSize[];
  document?: TelegramDocument;
  /** Kinds Dimsum does not read; only their presence matters. */
  voice?: unknown;
  audio?: unknown;
  video?: unknown;
  video_note?: unknown;
  sticker?: unknown;
  animation?: unknown;
  location?: unknown;
  contact?: unknown;
  poll?: unknown;
}

/** A press of an inline keyboard button. */
export interface TelegramCallbackQuery {
  id: string;
  from: TelegramUser;
  /** The message with the button (absent for inline-mode messages). */
  message?: TelegramMessage;
  chat_instance?: string;
  data?: string;
}

export interface TelegramUpdate {
  update_id: number;
  message?: TelegramMessage;
  callback_query?: TelegramCallbackQuery;
}

/** An inline keyboard: rows of buttons that send `callback_data` back as a callback query. */
export interface InlineKeyboard {
  inline_keyboard: Array<Array<{ text: string; callback_data: string }>>;
}

/** A client for one bot. */
export class TelegramApi {
  readonly #base: string;
  readonly #token: string;

  constructor(baseUrl: string, token: string) {
    this.#base = baseUrl.replace(/\/+$/, "");
    this.#token = token;
  }

  /** Calls a method; resolves with `result`, throws TelegramError or a retryable DeliveryError. */
  async call<T>(
    method: string,
    params: Record<string, unknown> | FormData,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<T> {
    const response = await requestJson(`${this.#base}/bot${this.#token}/${method}`, {
      body: params,
      ...options,
    });
    const reply = (
      typeof response.body === "object" && response.body !== null ? response.body : {}
    ) as TelegramReply;
    if (response.status === 200 && reply.ok === true) return reply.result as T;
    const code = typeof reply.error_code === "number" ? reply.error_code : response.status;
    const description = reply.description ?? `HTTP ${response.status}: ${bodyExcerpt(response.body)}`;
    throw new TelegramError(method, code, description, reply.parameters?.retry_after);
  }

  /**
   * Sends a file: an image as a photo, anything else as a document, with a caption (and its bold
   * entities); resolves with its message id.
   */
  async sendFile(
    chatId: string,
    file: { name: string; mimeType: string; kind: string; data: Buffer },
    caption: { text: string; entities?: TextEntity[] } | undefined,
    signal?: AbortSignal,
  ): Promise<string> {
    const photo = file.kind === "image";
    const form = new FormData();
    form.set("chat_id", chatId);
    form.set(
      photo ? "photo" : "document",
      new Blob([new Uint8Array(file.data)], { type: file.mimeType }),
      file.name,
    );
    if (caption && caption.text !== "") {
      form.set("caption", caption.text);
      if (caption.entities) form.set("caption_entities", JSON.stringify(caption.entities));
    }
    const sent = await this.call<TelegramMessage>(
      photo ? "sendPhoto" : "sendDocument",
      form,
      // An upload takes longer than a text message.
      { timeoutMs: 120_000, ...(signal ? { signal } : {}) },
    );
    return String(sent.message_id);
  }

  /** Sends a text message (with an inline keyboard); resolves with its message id. */
  async sendMessage(
    chatId: string,
    text: string,
    signal?: AbortSignal,
    replyMarkup?: InlineKeyboard,
    entities?: TextEntity[],
  ): Promise<string> {
    const sent = await this.call<TelegramMessage>(
      "sendMessage",
      {
        chat_id: chatId,
        text,
        ...(replyMarkup ? { reply_markup: replyMarkup } : {}),
        ...(entities ? { entities } : {}),
      },
      signal ? { signal } : {},
    );
    return String(sent.message_id);
  }

  /**
   * Replaces a message's text; an unchanged text counts as done. Its inline keyboard becomes
   * `replyMarkup` (an empty keyboard removes the buttons).
   */
  async editMessageText(
    chatId: string,
    messageId: string,
    text: string,
    signal?: AbortSignal,
    replyMarkup?: InlineKeyboard,
    entities?: TextEntity[],
  ): Promise<void> {
    try {
      await this.call(
        "editMessageText",
        {
          chat_id: chatId,
          message_id: Number(messageId),
          text,
          ...(replyMarkup ? { reply_markup: replyMarkup } : {}),
          ...(entities ? { entities } : {}),
        },
        signal ? { signal } : {},
      );
    } catch (err) {
      if (err instanceof TelegramError && err.code === 400 && /not modified/i.test(err.message)) return;
      throw err;
    }
  }

  /**
   * Downloads a file people sent (at most `maxBytes`): `getFile` says where it is, then it is fetched
   * from the file URL, which holds the token, so errors never show it.
   */
  async downloadFile(fileId: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
    const file = await this.call<{ file_path?: string }>("getFile", { file_id: fileId }, { signal });
    if (!file.file_path) throw new TelegramError("getFile", 400, "Telegram gave no file_path for the file");
    const path = file.file_path.split("/").map(encodeURIComponent).join("/");
    return downloadFile(`${this.#base}/file/bot${this.#token}/${path}`, {
      what: "Telegram file download",
      maxBytes,
      signal,
    });
  }

  /** Answers a callback query (stops the button's spinner), with a short notice for the presser. */
  async answerCallbackQuery(id: string, text: string, showAlert = false): Promise<void> {
    await this.call("answerCallbackQuery", {
      callback_query_id: id,
      ...(text ? { text: text.slice(0, 200) } : {}),
      ...(showAlert ? { show_alert: true } : {}),
    });
  }
}
