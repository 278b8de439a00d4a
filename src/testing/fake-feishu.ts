/**
 * A fake Feishu/Lark Open API on 127.0.0.1, from the documented shapes: the tenant access token
 * (`POST /open-apis/auth/v3/tenant_access_token/internal`), sending text messages and interactive
 * cards (`POST /open-apis/im/v1/messages?receive_id_type=chat_id`, at most one per `uuid`), updating
 * a shared card (`PATCH /open-apis/im/v1/messages/:message_id`), the images and files of messages
 * (`GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file`, added with
 * `addResource`, every download recorded), an outage switch; and
 * `buildFeishuEvent` / `buildFeishuCardAction`, which sign and encrypt an `im.message.receive_v1`
 * event or a `card.action.trigger` callback the way Feishu sends them to the request URL.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import {
  encryptLarkEvent,
  LARK_NONCE_HEADER,
  LARK_SIGNATURE_HEADER,
  LARK_TIMESTAMP_HEADER,
  larkSignature,
} from "../connectors/feishu/feishu-crypto.js";
import { FakeLarkLongConnection } from "./fake-lark-ws.js";
import { FakePlatform, startFake } from "./fake-platform.js";
import { type FakePlatformServer, type FakeReply, fileReply, reply } from "./fake-platform-server.js";

export interface FakeFeishuMessage {
  messageId: string;
  chatId: string;
  /** The text; for a card, its plain-text contents (title and text blocks, one a line). */
  text: string;
  uuid: string | undefined;
  msgType: "text" | "interactive" | "image" | "file";
  /** The card's current JSON (updates applied). */
  card?: Record<string, unknown>;
  /** An image or file message's upload. */
  upload?: FakeFeishuUpload;
}

/** A file the app uploaded (`POST /open-apis/im/v1/images` or `/files`, multipart). */
export interface FakeFeishuUpload {
  key: string;
  kind: "image" | "file";
  name: string;
  /** `file_type` of a file (pdf, stream, …). */
  fileType?: string;
  data: Buffer;
}

/** A button of a card: its label and callback value. */
export interface FakeCardButton {
  label: string;
  value: unknown;
}

interface CardNode {
  tag?: string;
  text?: { content?: unknown };
  value?: unknown;
  actions?: CardNode[];
  elements?: CardNode[];
}

/** The plain text of a card: its title, then its text blocks, one a line. */
export function cardText(card: Record<string, unknown>): string {
  const header = card.header as { title?: { content?: unknown } } | undefined;
  const lines = typeof header?.title?.content === "string" ? [header.title.content] : [];
  const walk = (nodes: CardNode[] | undefined) => {
    for (const node of nodes ?? []) {
      if (node.tag === "div" && typeof node.text?.content === "string") lines.push(node.text.content);
      walk(node.elements);
    }
  };
  walk(card.elements as CardNode[] | undefined);
  return lines.join("\n");
}

/** The buttons of a card, in order. */
export function cardButtons(card: Record<string, unknown> | undefined): FakeCardButton[] {
  const out: FakeCardButton[] = [];
  const walk = (nodes: CardNode[] | undefined) => {
    for (const node of nodes ?? []) {
      if (node.tag === "button" && typeof node.text?.content === "string") {
        out.push({ label: node.text.content, value: node.value });
      }
      walk(node.actions);
      walk(node.elements);
    }
  };
  walk(card?.elements as CardNode[] | undefined);
  return out;
}

/** The fake Open API of one app. */
export class FakeFeishu extends FakePlatform {
  readonly appId: string;
  readonly appSecret: string;
  /** Messages the app sent (one per uuid). */
  readonly messages: FakeFeishuMessage[] = [];
  /** Images and files the app uploaded, in order. */
  readonly uploads: FakeFeishuUpload[] = [];
  /** Tenant tokens handed out, oldest first. */
  readonly tokens: string[] = [];
  /** Every card update (`PATCH`), in order. */
  readonly cardUpdates: Array<{ messageId: string; card: Record<string, unknown> }> = [];
  /** Resource downloads (`messageId/fileKey`), in order. */
  readonly downloads: string[] = [];
  readonly #resources = new Map<string, { data: Buffer; contentType: string; type: "image" | "file" }>();
  #valid = new Set<string>();
  #next = 1;
  #long: FakeLarkLongConnection | undefined;
  #longRefusal: { code: number; msg: string } | undefined;

  private constructor(appId: string, appSecret: string, server: FakePlatformServer) {
    super(server);
    this.appId = appId;
    this.appSecret = appSecret;
  }

  /** Starts the fake for an app's credentials. */
  static async start(
    appId = "cli_fake_app_0001",
    appSecret = "fake-app-secret-0123456789",
  ): Promise<FakeFeishu> {
    return startFake((server) => new FakeFeishu(appId, appSecret, server), {
      handle: (fake, req, body) => fake.handle(req, body),
      upload: (fake, req, bytes) => fake.upload(req, bytes),
    });
  }

  /** Invalidates every token handed out (as on expiry). */
  expireTokens(): void {
    this.#valid.clear();
  }

  override async close(): Promise<void> {
    await this.#long?.close();
    await super.close();
  }

  /** Makes `/callback/ws/endpoint` refuse with this code (undefined: serve again). */
  refuseLongConnection(refusal: { code: number; msg: string } | undefined): void {
    this.#longRefusal = refusal;
  }

  /** Serves the long connection: `/callback/ws/endpoint` hands out this WebSocket. */
  async longConnection(): Promise<FakeLarkLongConnection> {
    this.#long ??= await FakeLarkLongConnection.start(() => this.server.changed());
    return this.#long;
  }

  /** Makes an image or file of a message downloadable (as a person's upload would). */
  addResource(
    messageId: string,
    fileKey: string,
    resource: { data: Buffer; contentType: string; type: "image" | "file" },
  ): void {
    this.#resources.set(`${messageId}/${fileKey}`, resource);
  }

  #resource(req: IncomingMessage, messageId: string, fileKey: string): FakeReply {
    const refused = this.#unauthorized(req);
    if (refused) return refused;
    const type = new URL(req.url ?? "", this.url).searchParams.get("type");
    const resource = this.#resources.get(`${messageId}/${fileKey}`);
    if (!resource) return reply(400, { code: 234003, msg: "File not in msg." });
    if (type !== resource.type) return reply(400, { code: 234001, msg: "Invalid request param." });
    this.downloads.push(`${messageId}/${fileKey}`);
    return fileReply(resource.data, resource.contentType);
  }

  /** Answers one Open API request. */
  /** Answers an image or file upload (multipart), keeping it for a message that sends it. */
  async upload(req: IncomingMessage, bytes: Buffer): Promise<FakeReply> {
    const path = (req.url ?? "").split("?")[0];
    const kind =
      path === "/open-apis/im/v1/images" ? "image" : path === "/open-apis/im/v1/files" ? "file" : undefined;
    if (!kind || req.method !== "POST") return reply(404, { code: 404, msg: "404 page not found" });
    const refused = this.#unauthorized(req);
    if (refused) return refused;
    const form = await new Response(new Uint8Array(bytes), {
      headers: { "content-type": req.headers["content-type"] ?? "" },
    }).formData();
    const file = form.get(kind);
    const invalid = reply(400, { code: 234001, msg: "Invalid request param." });
    if (!(file instanceof Blob) || file.size === 0) return invalid;
    if (kind === "image" && form.get("image_type") !== "message") return invalid;
    const fileType = kind === "file" ? String(form.get("file_type") ?? "") : undefined;
    if (kind === "file" && (!fileType || typeof form.get("file_name") !== "string")) return invalid;
    const upload: FakeFeishuUpload = {
      key: `${kind === "image" ? "img" : "file"}_v3_${randomBytes(6).toString("hex")}`,
      kind,
      name: kind === "file" ? String(form.get("file_name")) : file instanceof File ? file.name : "image",
      ...(fileType ? { fileType } : {}),
      data: Buffer.from(await file.arrayBuffer()),
    };
    this.uploads.push(upload);
    return reply(200, {
      code: 0,
      msg: "success",
      data: kind === "image" ? { image_key: upload.key } : { file_key: upload.key },
    });
  }

  handle(req: IncomingMessage, raw: string): FakeReply {
    const path = (req.url ?? "").split("?")[0];
    let body: Record<string, unknown> = {};
    try {
      body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return reply(400, { code: 9499, msg: "Bad Request" });
    }
    if (path === "/open-apis/auth/v3/tenant_access_token/internal") {
      if (body.app_id !== this.appId || body.app_secret !== this.appSecret) {
        return reply(400, { code: 10014, msg: "app secret invalid" });
      }
      const token = `t-${randomBytes(12).toString("hex")}`;
      this.tokens.push(token);
      this.#valid.add(token);
      return reply(200, { code: 0, msg: "ok", tenant_access_token: token, expire: 7200 });
    }
    if (path === "/callback/ws/endpoint" && req.method === "POST") {
      if (!this.#long) return reply(404, { code: 404, msg: "long connection not enabled" });
      if (this.#longRefusal) return reply(200, { ...this.#longRefusal, data: {} });
      if (body.AppID !== this.appId || body.AppSecret !== this.appSecret) {
        return reply(200, { code: 10014, msg: "app secret invalid", data: {} });
      }
      return reply(200, {
        code: 0,
        msg: "ok",
        data: {
          URL: this.#long.url,
          ClientConfig: { PingInterval: 120, ReconnectCount: -1, ReconnectInterval: 1, ReconnectNonce: 0 },
        },
      });
    }
    if (path === "/open-apis/im/v1/messages" && req.method === "POST") return this.#send(req, body);
    const resource = /^\/open-apis\/im\/v1\/messages\/([^/]+)\/resources\/([^/]+)$/.exec(path ?? "");
    if (resource && req.method === "GET") {
      return this.#resource(
        req,
        decodeURIComponent(resource[1] ?? ""),
        decodeURIComponent(resource[2] ?? ""),
      );
    }
    const update = /^\/open-apis\/im\/v1\/messages\/([^/]+)$/.exec(path ?? "");
    if (update && req.method === "PATCH")
      return this.#updateCard(req, decodeURIComponent(update[1] ?? ""), body);
    return reply(404, { code: 404, msg: "404 page not found" });
  }

  /** Why the request's access token is refused, if it is. */
  #unauthorized(req: IncomingMessage): FakeReply | undefined {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return reply(400, { code: 99991661, msg: "Missing access token for authorization." });
    if (!this.#valid.has(token))
      return reply(400, { code: 99991663, msg: "Invalid access token for authorization." });
    return undefined;
  }

  #send(req: IncomingMessage, body: Record<string, unknown>): FakeReply {
    const refused = this.#unauthorized(req);
    if (refused) return refused;
    if (!new URL(req.url ?? "", this.url).searchParams.get("receive_id_type")) {
      return reply(400, {
        code: 99992402,
        msg: "field validation failed: receive_id_type is required",
      });
    }
    let content: Record<string, unknown> | undefined;
    try {
      content = JSON.parse(String(body.content)) as Record<string, unknown>;
    } catch {
      content = undefined;
    }
    const invalid = reply(400, { code: 230001, msg: "Your request contains an invalid request parameter." });
    if (typeof body.receive_id !== "string" || !content) return invalid;
    let text: string;
    let card: Record<string, unknown> | undefined;
    let upload: FakeFeishuUpload | undefined;
    if (body.msg_type === "image" || body.msg_type === "file") {
      const key = body.msg_type === "image" ? content.image_key : content.file_key;
      upload = this.uploads.find((u) => u.key === key && u.kind === body.msg_type);
      if (!upload) return reply(400, { code: 230001, msg: "invalid file key" });
      text = `[${upload.kind}] ${upload.name}`;
    } else if (body.msg_type === "text" && typeof content.text === "string") {
      text = content.text;
    } else if (body.msg_type === "interactive" && Array.isArray(content.elements)) {
      card = content;
      text = cardText(card);
    } else {
      return invalid;
    }
    const uuid = typeof body.uuid === "string" ? body.uuid : undefined;
    const earlier = uuid ? this.messages.find((m) => m.uuid === uuid) : undefined;
    const message: FakeFeishuMessage = earlier ?? {
      messageId: `om_${String(this.#next++).padStart(8, "0")}`,
      chatId: body.receive_id,
      text,
      uuid,
      msgType: body.msg_type,
      ...(card ? { card } : {}),
      ...(upload ? { upload } : {}),
    };
    if (!earlier) this.messages.push(message);
    return reply(200, {
      code: 0,
      msg: "success",
      data: {
        message_id: message.messageId,
        chat_id: message.chatId,
        msg_type: message.msgType,
        body: { content: body.content },
      },
    });
  }

  #updateCard(req: IncomingMessage, messageId: string, body: Record<string, unknown>): FakeReply {
    const refused = this.#unauthorized(req);
    if (refused) return refused;
    const message = this.messages.find((m) => m.messageId === messageId);
    if (!message) return reply(400, { code: 230001, msg: "message not found" });
    if (message.msgType !== "interactive") {
      return reply(400, { code: 230001, msg: "only interactive messages can be updated this way" });
    }
    let card: Record<string, unknown> | undefined;
    try {
      card = JSON.parse(String(body.content)) as Record<string, unknown>;
    } catch {
      card = undefined;
    }
    if (!card || !Array.isArray(card.elements)) {
      return reply(400, { code: 230001, msg: "Your request contains an invalid request parameter." });
    }
    // Only shared cards can be updated for everyone.
    if ((card.config as { update_multi?: unknown } | undefined)?.update_multi !== true) {
      return reply(400, { code: 230099, msg: "the card is not a shared card (config.update_multi)" });
    }
    message.card = card;
    message.text = cardText(card);
    this.cardUpdates.push({ messageId, card });
    return reply(200, { code: 0, msg: "success", data: {} });
  }
}

export interface FeishuEventOptions {
  encryptKey: string;
  verificationToken: string;
  chatId: string;
  /** The sender's open_id. */
  openId: string;
  text: string;
  eventId?: string;
  chatType?: "p2p" | "group";
  /** Another message type (`image`, `file`, `post`) with its content object; `text` is then unused. */
  message?: { type: string; content: Record<string, unknown> };
  /** The message's id (default: made from the event id). */
  messageId?: string;
}

/** An inbound request (headers and raw body) as Feishu sends it: encrypted, then signed. */
export interface SignedRequest {
  headers: Record<string, string>;
  body: string;
}

function signed(encryptKey: string, plain: unknown, sign: boolean): SignedRequest {
  const body = JSON.stringify({ encrypt: encryptLarkEvent(encryptKey, JSON.stringify(plain)) });
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (sign) {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const nonce = randomBytes(8).toString("hex");
    headers[LARK_TIMESTAMP_HEADER] = timestamp;
    headers[LARK_NONCE_HEADER] = nonce;
    headers[LARK_SIGNATURE_HEADER] = larkSignature(timestamp, nonce, encryptKey, body);
  }
  return { headers, body };
}

/** An `im.message.receive_v1` event (schema 2.0), encrypted and signed. */
export function buildFeishuEvent(options: FeishuEventOptions): SignedRequest {
  return signed(options.encryptKey, feishuMessageEvent(options), true);
}

/** An `im.message.receive_v1` event (schema 2.0) in plain JSON, as the long connection carries it. */
export function feishuMessageEvent(options: Omit<FeishuEventOptions, "encryptKey">): Record<string, unknown> {
  const eventId = options.eventId ?? randomBytes(16).toString("hex");
  const now = String(Date.now());
  const event = {
    schema: "2.0",
    header: {
      event_id: eventId,
      event_type: "im.message.receive_v1",
      create_time: now,
      token: options.verificationToken,
      app_id: "cli_fake_app_0001",
      tenant_key: "fake-tenant",
    },
    event: {
      sender: {
        sender_id: { open_id: options.openId, union_id: `on_${options.openId}`, user_id: "u1" },
        sender_type: "user",
        tenant_key: "fake-tenant",
      },
      message: {
        message_id: options.messageId ?? `om_in_${eventId.slice(0, 12)}`,
        create_time: now,
        chat_id: options.chatId,
        chat_type: options.chatType ?? "p2p",
        message_type: options.message?.type ?? "text",
        content: JSON.stringify(
          options.message?.content ?? {
            text: options.chatType === "group" ? `@_user_1 ${options.text}` : options.text,
          },
        ),
      },
    },
  };
  return event;
}

export interface FeishuCardActionOptions {
  encryptKey: string;
  verificationToken: string;
  /** The presser's open_id. */
  openId: string;
  chatId: string;
  /** The card message's id. */
  messageId: string;
  /** The pressed button's `value`. */
  value: unknown;
  eventId?: string;
}

/** A `card.action.trigger` callback (schema 2.0) for a button press, encrypted and signed. */
export function buildFeishuCardAction(options: FeishuCardActionOptions): SignedRequest {
  const eventId = options.eventId ?? randomBytes(16).toString("hex");
  const callback = {
    schema: "2.0",
    header: {
      event_id: eventId,
      token: options.verificationToken,
      create_time: String(Date.now() * 1000),
      event_type: "card.action.trigger",
      tenant_key: "fake-tenant",
      app_id: "cli_fake_app_0001",
    },
    event: {
      operator: { tenant_key: "fake-tenant", user_id: "u1", open_id: options.openId },
      token: `c-${randomBytes(8).toString("hex")}`,
      action: { value: options.value, tag: "button" },
      host: "im_message",
      context: { open_message_id: options.messageId, open_chat_id: options.chatId },
    },
  };
  return signed(options.encryptKey, callback, true);
}

/** The `url_verification` handshake Feishu sends when the request URL is saved (encrypted, unsigned). */
export function buildFeishuChallenge(options: {
  encryptKey: string;
  verificationToken: string;
  challenge: string;
}): SignedRequest {
  return signed(
    options.encryptKey,
    { challenge: options.challenge, token: options.verificationToken, type: "url_verification" },
    false,
  );
}
