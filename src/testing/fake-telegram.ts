/**
 * A fake Telegram Bot API on 127.0.0.1, built from the documented request and response shapes:
 * `POST /bot<token>/<method>` answering `{ok: true, result}` or `{ok: false, error_code, description}`.
 * It queues updates for `getUpdates` (long polling with offset and timeout), records `sendMessage` and
 * `editMessageText` (with their inline keyboards), presses inline buttons as `callback_query`
 * updates and records `answerCallbackQuery`, keeps the `setWebhook` registration (and can deliver
 * updates to it with the secret token header, as Telegram does), and can be switched to fail with 502
 * or refuse connections. People can send photos and documents (`userFile`); the bot fetches them with
 * `getFile` and `GET /file/bot<token>/<file_path>`, and every download is recorded.
 */
import { createHash } from "node:crypto";
import { FakePlatform, startFake } from "./fake-platform.js";
import { type FakePlatformServer, type FakeReply, fileReply, reply } from "./fake-platform-server.js";

export interface FakeInlineButton {
  text: string;
  callback_data?: string;
}

export interface FakeTelegramMessage {
  chatId: string;
  messageId: number;
  text: string;
  /** The inline keyboard's rows, while the message has one. */
  buttons?: FakeInlineButton[][];
  /** The bold spans of the text (from `entities`), e.g. the speaker's name in a group. */
  bold?: string[];
}

/** The texts of the bold entities of a message (offsets in UTF-16 units); a bad entity is an error. */
function boldOf(text: string, entities: unknown): string[] | string | undefined {
  if (entities === undefined) return undefined;
  if (!Array.isArray(entities)) return "Bad Request: can't parse entities: not an array";
  const out: string[] = [];
  for (const entity of entities as Array<{ type?: unknown; offset?: unknown; length?: unknown }>) {
    const { offset, length } = entity;
    if (
      typeof offset !== "number" ||
      typeof length !== "number" ||
      offset < 0 ||
      offset + length > text.length
    ) {
      return "Bad Request: can't parse entities: entity beyond the end of the text";
    }
    if (entity.type === "bold") out.push(text.slice(offset, offset + length));
  }
  return out;
}

/** A file the bot sent (`sendDocument` or `sendPhoto`). */
export interface FakeTelegramFile {
  chatId: string;
  messageId: number;
  method: "sendDocument" | "sendPhoto";
  name: string;
  data: Buffer;
  caption?: string;
  /** The bold spans of the caption (the speaker). */
  bold?: string[];
}

/** An `answerCallbackQuery` call. */
export interface FakeCallbackAnswer {
  queryId: string;
  text: string | undefined;
  showAlert: boolean;
}

export interface FakeTelegramCall {
  method: string;
  body: Record<string, unknown>;
}

interface Update {
  update_id: number;
  message?: Record<string, unknown>;
  callback_query?: Record<string, unknown>;
}

interface Poller {
  offset: number;
  respond: (updates: Update[]) => void;
}

const BOT = { id: 777000111, is_bot: true, first_name: "Dimsum Test Bot", username: "dimsum_test_bot" };

/** The fake Bot API of one bot. */
export class FakeTelegram extends FakePlatform {
  readonly token: string;
  /** Files the bot sent, in order. */
  readonly sentFiles: FakeTelegramFile[] = [];
  /** Every call, in order (`getUpdates` too). */
  readonly calls: FakeTelegramCall[] = [];
  /** Messages the bot sent, with their current text (edits applied). */
  readonly sent: FakeTelegramMessage[] = [];
  /** Every `editMessageText` that changed a message. */
  readonly edits: FakeTelegramMessage[] = [];
  /** Every `answerCallbackQuery`, in order. */
  readonly callbackAnswers: FakeCallbackAnswer[] = [];
  /** Callback queries handed out and not answered yet. */
  readonly #openQueries = new Set<string>();
  #nextQueryId = 1;
  /** File paths downloaded through `/file/bot<token>/…`, in order. */
  readonly downloads: string[] = [];
  /** File downloads answered 502 (the Bot API's file server failing while the rest works). */
  failDownloads = false;
  /** Downloads answered 502 so far. */
  failedDownloads = 0;
  readonly #files = new Map<string, { path: string; data: Buffer; contentType: string }>();
  webhook: { url: string; secretToken: string | undefined } | undefined;
  #updates: Update[] = [];
  #nextUpdateId = 1000;
  #nextMessageId = 1;
  #pollers: Poller[] = [];

  private constructor(token: string, server: FakePlatformServer) {
    super(server);
    this.token = token;
  }

  /** Starts the fake for a bot token (the default is a well-formed dummy). */
  static async start(token = "123456789:AAFakeTokenForTestsOnly_abcdefghij"): Promise<FakeTelegram> {
    return startFake((server) => new FakeTelegram(token, server), {
      handle: (fake, req, body, closed) => fake.handle(req.url ?? "", body, closed),
      upload: (fake, req, bytes) => fake.upload(req.url ?? "", req.headers["content-type"] ?? "", bytes),
    });
  }

  /** Queues a text message from a person, as an update; returns the update. */
  userMessage(options: {
    chatId: number;
    userId: number;
    text: string;
    firstName?: string;
    username?: string;
    chatTitle?: string;
  }): Update {
    const from = {
      id: options.userId,
      is_bot: false,
      first_name: options.firstName ?? "Tess",
      ...(options.username ? { username: options.username } : {}),
    };
    const chat = options.chatTitle
      ? { id: options.chatId, type: "group", title: options.chatTitle }
      : { id: options.chatId, type: "private", first_name: from.first_name };
    const update: Update = {
      update_id: this.#nextUpdateId++,
      message: {
        message_id: this.#nextMessageId++,
        from,
        chat,
        date: Math.floor(Date.now() / 1000),
        text: options.text,
      },
    };
    this.push(update);
    return update;
  }

  /**
   * Queues a message with a photo (sent in three sizes, the given bytes as the largest) or a document,
   * and a caption; returns the update. `claimedSize` overrides the `file_size` Telegram reports.
   */
  userFile(options: {
    chatId: number;
    userId: number;
    caption?: string;
    photo?: Buffer;
    document?: { name: string; data: Buffer; mimeType: string };
    claimedSize?: number;
    firstName?: string;
  }): Update {
    const from = { id: options.userId, is_bot: false, first_name: options.firstName ?? "Tess" };
    const message: Record<string, unknown> = {
      message_id: this.#nextMessageId++,
      from,
      chat: { id: options.chatId, type: "private", first_name: from.first_name },
      date: Math.floor(Date.now() / 1000),
      ...(options.caption !== undefined ? { caption: options.caption } : {}),
    };
    if (options.photo) {
      const small = this.#addFile(Buffer.from("small-thumbnail"), "image/jpeg", "photos");
      const medium = this.#addFile(Buffer.from("medium-thumbnail"), "image/jpeg", "photos");
      const large = this.#addFile(options.photo, "image/jpeg", "photos");
      message.photo = [
        { ...small, width: 90, height: 60, file_size: 15 },
        { ...medium, width: 320, height: 213, file_size: 16 },
        { ...large, width: 1280, height: 853, file_size: options.claimedSize ?? options.photo.length },
      ];
    }
    if (options.document) {
      const file = this.#addFile(options.document.data, options.document.mimeType, "documents");
      message.document = {
        ...file,
        file_name: options.document.name,
        mime_type: options.document.mimeType,
        file_size: options.claimedSize ?? options.document.data.length,
      };
    }
    const update: Update = { update_id: this.#nextUpdateId++, message };
    this.push(update);
    return update;
  }

  #addFile(data: Buffer, contentType: string, folder: string): { file_id: string; file_unique_id: string } {
    const unique = createHash("sha256").update(data).digest("hex").slice(0, 16);
    const fileId = `AgAC${unique}${this.#files.size}`;
    this.#files.set(fileId, { path: `${folder}/file_${this.#files.size}.bin`, data, contentType });
    return { file_id: fileId, file_unique_id: unique };
  }

  /**
   * Presses an inline button of a message the bot sent, as a person: queues the `callback_query`
   * update (for polling) and returns it (for `deliverWebhook`). The button is found by its label
   * (a part of it, e.g. "Approve"), or `data` is sent as is (a forged press).
   */
  pressButton(options: {
    message: FakeTelegramMessage;
    button?: string;
    data?: string;
    userId: number;
    firstName?: string;
    username?: string;
  }): Update {
    let data = options.data;
    if (data === undefined) {
      const wanted = options.button ?? "";
      const button = (options.message.buttons ?? []).flat().find((b) => b.text.includes(wanted));
      if (!button?.callback_data) throw new Error(`the message has no button "${wanted}"`);
      data = button.callback_data;
    }
    const from = {
      id: options.userId,
      is_bot: false,
      first_name: options.firstName ?? "Tess",
      ...(options.username ? { username: options.username } : {}),
    };
    const chatId = Number(options.message.chatId);
    const queryId = String(this.#nextQueryId++ * 1_000_003);
    this.#openQueries.add(queryId);
    const update: Update = {
      update_id: this.#nextUpdateId++,
      callback_query: {
        id: queryId,
        from,
        chat_instance: `ci${chatId}`,
        data,
        message: {
          message_id: options.message.messageId,
          from: BOT,
          chat: chatId > 0 ? { id: chatId, type: "private" } : { id: chatId, type: "group", title: "Group" },
          date: Math.floor(Date.now() / 1000),
          text: options.message.text,
          ...(options.message.buttons ? { reply_markup: { inline_keyboard: options.message.buttons } } : {}),
        },
      },
    };
    this.push(update);
    return update;
  }

  /** The message the bot sent with this id. */
  message(messageId: number): FakeTelegramMessage | undefined {
    return this.sent.find((m) => m.messageId === messageId);
  }

  /** Queues an update (also a repeated one, to test de-duplication). */
  push(update: Update): void {
    this.#updates.push(update);
    this.#answerPollers();
  }

  /**
   * POSTs an update to the registered webhook the way Telegram does (with the registered secret
   * token, another one, or none for `null`); resolves with the HTTP status.
   */
  async deliverWebhook(update: Update, options: { secretToken?: string | null } = {}): Promise<number> {
    if (!this.webhook) throw new Error("no webhook is set");
    const secretToken = options.secretToken === undefined ? this.webhook.secretToken : options.secretToken;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (typeof secretToken === "string") headers["x-telegram-bot-api-secret-token"] = secretToken;
    const res = await fetch(this.webhook.url, { method: "POST", headers, body: JSON.stringify(update) });
    await res.arrayBuffer();
    return res.status;
  }

  override async close(): Promise<void> {
    for (const poller of this.#pollers.splice(0)) poller.respond([]);
    await super.close();
  }

  #answerPollers(): void {
    this.#pollers = this.#pollers.filter((poller) => {
      const ready = this.#pending(poller.offset);
      if (ready.length === 0) return true;
      poller.respond(ready);
      return false;
    });
  }

  /** Confirms updates below `offset` (dropping them) and returns the rest. */
  #pending(offset: number): Update[] {
    if (offset > 0) this.#updates = this.#updates.filter((u) => u.update_id >= offset);
    return [...this.#updates];
  }

  /** Answers `sendDocument` and `sendPhoto` as multipart uploads (the only file sends modelled). */
  async upload(url: string, contentType: string, bytes: Buffer): Promise<FakeReply> {
    const match = /^\/bot([^/]+)\/(sendDocument|sendPhoto)$/.exec(url.split("?")[0] ?? "");
    if (!match) return reply(404, { ok: false, error_code: 404, description: "Not Found: method not found" });
    if (match[1] !== this.token)
      return reply(401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = match[2] as "sendDocument" | "sendPhoto";
    const form = await new Response(new Uint8Array(bytes), {
      headers: { "content-type": contentType },
    }).formData();
    const file = form.get(method === "sendPhoto" ? "photo" : "document");
    if (!(file instanceof Blob))
      return bad(`there is no ${method === "sendPhoto" ? "photo" : "document"} in the request`);
    const chatId = String(form.get("chat_id") ?? "");
    if (chatId === "") return bad("chat_id is empty");
    const caption = typeof form.get("caption") === "string" ? String(form.get("caption")) : undefined;
    const entities = form.get("caption_entities");
    const bold =
      caption !== undefined && typeof entities === "string"
        ? boldOf(caption, JSON.parse(entities))
        : undefined;
    if (typeof bold === "string") return bad(bold);
    const sent: FakeTelegramFile = {
      chatId,
      messageId: this.#nextMessageId++,
      method,
      name: file instanceof File ? file.name : "file",
      data: Buffer.from(await file.arrayBuffer()),
      ...(caption !== undefined ? { caption } : {}),
      ...(bold && bold.length > 0 ? { bold } : {}),
    };
    this.calls.push({ method, body: { chat_id: chatId, name: sent.name } });
    this.sentFiles.push(sent);
    return ok({
      message_id: sent.messageId,
      chat: { id: Number(chatId) },
      date: Math.floor(Date.now() / 1000),
    });
  }

  /** Answers one Bot API request. */
  handle(url: string, raw: string, closed: AbortSignal): FakeReply | Promise<FakeReply> {
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url.split("?")[0] ?? "");
    if (download) return this.#download(download[1] ?? "", decodeURIComponent(download[2] ?? ""));
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url.split("?")[0] ?? "");
    if (!match) return reply(404, { ok: false, error_code: 404, description: "Not Found" });
    if (match[1] !== this.token)
      return reply(401, { ok: false, error_code: 401, description: "Unauthorized" });
    const method = match[2] ?? "";
    let body: Record<string, unknown> = {};
    try {
      body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return bad("invalid JSON");
    }
    this.calls.push({ method, body });
    switch (method) {
      case "getMe":
        return ok(BOT);
      case "setWebhook":
        this.webhook = {
          url: String(body.url),
          secretToken: typeof body.secret_token === "string" ? body.secret_token : undefined,
        };
        return ok(true);
      case "deleteWebhook":
        this.webhook = undefined;
        return ok(true);
      case "getUpdates":
        return this.#getUpdates(body, closed);
      case "sendMessage":
        return this.#sendMessage(body);
      case "editMessageText":
        return this.#editMessageText(body);
      case "editMessageReplyMarkup":
        return this.#editMessageReplyMarkup(body);
      case "answerCallbackQuery":
        return this.#answerCallbackQuery(body);
      case "getFile":
        return this.#getFile(body);
      default:
        return reply(404, { ok: false, error_code: 404, description: "Not Found: method not found" });
    }
  }

  #getFile(body: Record<string, unknown>): FakeReply {
    const fileId = String(body.file_id ?? "");
    const file = this.#files.get(fileId);
    if (!file) return bad("invalid file_id");
    // Bots may download files up to 20 MB.
    if (file.data.length > 20 * 1024 * 1024) return bad("file is too big");
    return ok({ file_id: fileId, file_size: file.data.length, file_path: file.path });
  }

  #download(token: string, path: string): FakeReply {
    if (token !== this.token) return reply(401, { ok: false, error_code: 401, description: "Unauthorized" });
    const file = [...this.#files.values()].find((f) => f.path === path);
    if (!file) return reply(404, { ok: false, error_code: 404, description: "Not Found" });
    if (this.failDownloads) {
      this.failedDownloads++;
      return reply(502, { ok: false, error_code: 502, description: "Bad Gateway" });
    }
    this.downloads.push(path);
    return fileReply(file.data, file.contentType);
  }

  #getUpdates(body: Record<string, unknown>, closed: AbortSignal): FakeReply | Promise<FakeReply> {
    if (this.webhook) {
      return reply(409, {
        ok: false,
        error_code: 409,
        description:
          "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first",
      });
    }
    const offset = typeof body.offset === "number" ? body.offset : 0;
    const timeout = typeof body.timeout === "number" ? body.timeout : 0;
    const ready = this.#pending(offset);
    if (ready.length > 0 || timeout === 0) return ok(ready);
    // Long polling: answer when an update arrives, the timeout passes, or the client leaves.
    return new Promise((resolve) => {
      const poller: Poller = {
        offset,
        respond: (updates) => {
          clearTimeout(timer);
          closed.removeEventListener("abort", leave);
          this.#pollers = this.#pollers.filter((p) => p !== poller);
          resolve(ok(updates));
        },
      };
      const timer = setTimeout(() => poller.respond([]), timeout * 1000);
      const leave = () => poller.respond([]);
      closed.addEventListener("abort", leave, { once: true });
      this.#pollers.push(poller);
    });
  }

  #sendMessage(body: Record<string, unknown>): FakeReply {
    const text = typeof body.text === "string" ? body.text : "";
    if (text.trim() === "") return bad("message text is empty");
    if (text.length > 4096) return bad("message is too long");
    const buttons = keyboardOf(body.reply_markup);
    if (typeof buttons === "string") return bad(buttons);
    const bold = boldOf(text, body.entities);
    if (typeof bold === "string") return bad(bold);
    const message: FakeTelegramMessage = {
      chatId: String(body.chat_id),
      messageId: this.#nextMessageId++,
      text,
      ...(buttons && buttons.length > 0 ? { buttons } : {}),
      ...(bold && bold.length > 0 ? { bold } : {}),
    };
    this.sent.push(message);
    return ok({
      message_id: message.messageId,
      chat: { id: Number(body.chat_id) },
      date: Math.floor(Date.now() / 1000),
      text,
      from: BOT,
    });
  }

  #editMessageText(body: Record<string, unknown>): FakeReply {
    const text = typeof body.text === "string" ? body.text : "";
    const message = this.sent.find(
      (m) => m.chatId === String(body.chat_id) && m.messageId === Number(body.message_id),
    );
    if (!message) return bad("message to edit not found");
    if (text.trim() === "") return bad("message text is empty");
    if (text.length > 4096) return bad("MESSAGE_TOO_LONG");
    // Without reply_markup the inline keyboard is removed, as Telegram does.
    const buttons = keyboardOf(body.reply_markup);
    if (typeof buttons === "string") return bad(buttons);
    const next = buttons && buttons.length > 0 ? buttons : undefined;
    if (text === message.text && JSON.stringify(next) === JSON.stringify(message.buttons)) {
      return bad(
        "message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
      );
    }
    const bold = boldOf(text, body.entities);
    if (typeof bold === "string") return bad(bold);
    message.text = text;
    if (next) message.buttons = next;
    else delete message.buttons;
    if (bold && bold.length > 0) message.bold = bold;
    else delete message.bold;
    this.edits.push(structuredClone(message));
    return ok({ message_id: message.messageId, chat: { id: Number(body.chat_id) }, text });
  }

  #editMessageReplyMarkup(body: Record<string, unknown>): FakeReply {
    const message = this.sent.find(
      (m) => m.chatId === String(body.chat_id) && m.messageId === Number(body.message_id),
    );
    if (!message) return bad("message to edit not found");
    const buttons = keyboardOf(body.reply_markup);
    if (typeof buttons === "string") return bad(buttons);
    const next = buttons && buttons.length > 0 ? buttons : undefined;
    if (JSON.stringify(next) === JSON.stringify(message.buttons)) return bad("message is not modified");
    if (next) message.buttons = next;
    else delete message.buttons;
    this.edits.push(structuredClone(message));
    return ok({ message_id: message.messageId, chat: { id: Number(body.chat_id) }, text: message.text });
  }

  #answerCallbackQuery(body: Record<string, unknown>): FakeReply {
    const queryId = String(body.callback_query_id ?? "");
    if (!this.#openQueries.delete(queryId)) {
      return bad("query is too old and response timeout expired or query ID is invalid");
    }
    const text = typeof body.text === "string" ? body.text : undefined;
    if (text !== undefined && text.length > 200) return bad("MESSAGE_TOO_LONG");
    this.callbackAnswers.push({ queryId, text, showAlert: body.show_alert === true });
    return ok(true);
  }
}

/** The rows of an inline keyboard; a string says why it is invalid. */
function keyboardOf(markup: unknown): FakeInlineButton[][] | undefined | string {
  if (markup === undefined) return undefined;
  const rows = (markup as { inline_keyboard?: unknown } | null)?.inline_keyboard;
  if (!Array.isArray(rows)) return 'field "inline_keyboard" of the InlineKeyboardMarkup should be an Array';
  const out: FakeInlineButton[][] = [];
  for (const row of rows) {
    if (!Array.isArray(row)) return "inline keyboard row must be an Array";
    const buttons: FakeInlineButton[] = [];
    for (const button of row as Array<{ text?: unknown; callback_data?: unknown }>) {
      if (typeof button.text !== "string" || button.text === "")
        return "inline keyboard button text is empty";
      const data = button.callback_data;
      if (data !== undefined && (typeof data !== "string" || Buffer.byteLength(data) > 64 || data === "")) {
        return "BUTTON_DATA_INVALID";
      }
      buttons.push({ text: button.text, ...(typeof data === "string" ? { callback_data: data } : {}) });
    }
    out.push(buttons);
  }
  return out;
}

function ok(result: unknown): FakeReply {
  return reply(200, { ok: true, result });
}

function bad(description: string): FakeReply {
  return reply(400, { ok: false, error_code: 400, description: `Bad Request: ${description}` });
}
