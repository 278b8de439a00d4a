/**
 * A fake WeCom server API on 127.0.0.1, from the documented shapes: `GET /cgi-bin/gettoken`
 * (`{errcode: 0, access_token, expires_in}`) and `POST /cgi-bin/message/send?access_token=…`
 * (text and markdown, refusing content over 2,048 bytes with errcode 45002); plus builders of what
 * WeCom sends to a callback URL (and `GET /cgi-bin/media/get` of media added with `addMedia`): the signed URL verification query (`echostr` encrypted) and an
 * encrypted, signed text message (XML with `Encrypt`), made with the official `@wecom/crypto`.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { encrypt, getSignature } from "@wecom/crypto";
import { buildWecomXml } from "../connectors/wecom/wecom-xml.js";
import { FakePlatform, startFake } from "./fake-platform.js";
import { type FakePlatformServer, type FakeReply, fileReply, reply } from "./fake-platform-server.js";

export interface FakeWecomMessage {
  touser: string;
  msgtype: "text" | "markdown" | "template_card" | "image" | "file";
  agentid: number;
  /** The text; for a template card its title, description and sub-title, one a line. */
  content: string;
  /** A template card's JSON; its `button_list` is gone once updated. */
  card?: Record<string, unknown>;
  /** What replaced the card's buttons (`update_template_card`). */
  replacedBy?: string;
  /** The `response_code` the send returned (template cards). */
  responseCode?: string;
  /** An image or file message's upload. */
  upload?: FakeWecomUpload;
}

/** Temporary media the app uploaded (`media/upload`). */
export interface FakeWecomUpload {
  mediaId: string;
  type: "image" | "file";
  name: string;
  data: Buffer;
}

/** A button of a template card. */
export interface FakeWecomButton {
  text: string;
  key: string;
}

/** The fake API of one corp and app. */
export class FakeWecom extends FakePlatform {
  readonly corpId: string;
  readonly corpSecret: string;
  readonly agentId: number;
  readonly messages: FakeWecomMessage[] = [];
  /** Temporary media the app uploaded, in order. */
  readonly uploads: FakeWecomUpload[] = [];
  /** Access tokens handed out. */
  readonly tokens: string[] = [];
  /** Live response codes (each updates its card once): code → the card's message. */
  readonly #codes = new Map<string, FakeWecomMessage>();
  #valid = new Set<string>();
  /** Media people "sent" (`addMedia`): media_id → bytes and content type. */
  readonly #media = new Map<string, { data: Buffer; contentType: string }>();
  /** media_ids downloaded, in order. */
  readonly mediaDownloads: string[] = [];

  private constructor(corpId: string, corpSecret: string, agentId: number, server: FakePlatformServer) {
    super(server);
    this.corpId = corpId;
    this.corpSecret = corpSecret;
    this.agentId = agentId;
  }

  static async start(
    corpId = "wwfakecorp0001",
    corpSecret = "fake-corp-secret-0123456789",
    agentId = 1000002,
  ): Promise<FakeWecom> {
    return startFake((server) => new FakeWecom(corpId, corpSecret, agentId, server), {
      handle: (fake, req, body) => fake.handle(req, body),
      upload: (fake, req, bytes) => fake.upload(req, bytes),
    });
  }

  /** Invalidates every token handed out (as on expiry). */
  expireTokens(): void {
    this.#valid.clear();
  }

  /** Stores a media file (a voice message's AMR, a picture) and returns its media_id for a callback. */
  addMedia(data: Buffer, contentType = "voice/amr"): string {
    const mediaId = `media-${randomBytes(8).toString("hex")}`;
    this.#media.set(mediaId, { data, contentType });
    return mediaId;
  }

  /** Answers `media/upload` (multipart `media`), keeping the file for a message that sends it. */
  async upload(req: IncomingMessage, bytes: Buffer): Promise<FakeReply> {
    const url = new URL(req.url ?? "", this.url);
    if (url.pathname !== "/cgi-bin/media/upload" || req.method !== "POST")
      return reply(404, { errcode: 404, errmsg: "not found" });
    if (!this.#valid.has(url.searchParams.get("access_token") ?? ""))
      return reply(200, { errcode: 42001, errmsg: "access_token expired" });
    const type = url.searchParams.get("type");
    if (type !== "image" && type !== "file")
      return reply(200, { errcode: 40004, errmsg: "invalid media type" });
    const form = await new Response(new Uint8Array(bytes), {
      headers: { "content-type": req.headers["content-type"] ?? "" },
    }).formData();
    const media = form.get("media");
    // Every file must be larger than 5 bytes.
    if (!(media instanceof File) || media.size <= 5)
      return reply(200, { errcode: 40005, errmsg: "invalid file" });
    const upload: FakeWecomUpload = {
      mediaId: `up-${randomBytes(8).toString("hex")}`,
      type,
      name: media.name,
      data: Buffer.from(await media.arrayBuffer()),
    };
    this.uploads.push(upload);
    return reply(200, { errcode: 0, errmsg: "ok", type, media_id: upload.mediaId, created_at: "1380000000" });
  }

  handle(req: IncomingMessage, raw: string): FakeReply {
    const url = new URL(req.url ?? "", this.url);
    if (url.pathname === "/cgi-bin/media/get" && req.method === "GET") {
      // WeCom answers refusals as JSON with HTTP 200, the file itself with its content type.
      if (!this.#valid.has(url.searchParams.get("access_token") ?? ""))
        return reply(200, { errcode: 42001, errmsg: "access_token expired" });
      const mediaId = url.searchParams.get("media_id") ?? "";
      const media = this.#media.get(mediaId);
      if (!media) return reply(200, { errcode: 40007, errmsg: "invalid media_id" });
      this.mediaDownloads.push(mediaId);
      return fileReply(media.data, media.contentType);
    }
    if (url.pathname === "/cgi-bin/gettoken" && req.method === "GET") {
      if (url.searchParams.get("corpid") !== this.corpId)
        return reply(200, { errcode: 40013, errmsg: "invalid corpid" });
      if (url.searchParams.get("corpsecret") !== this.corpSecret) {
        return reply(200, { errcode: 40001, errmsg: "invalid credential, hint: [fake]" });
      }
      const token = `wx-${randomBytes(16).toString("hex")}`;
      this.tokens.push(token);
      this.#valid.add(token);
      return reply(200, { errcode: 0, errmsg: "ok", access_token: token, expires_in: 7200 });
    }
    if (url.pathname === "/cgi-bin/message/send" && req.method === "POST") {
      const token = url.searchParams.get("access_token") ?? "";
      if (!this.#valid.has(token)) return reply(200, { errcode: 42001, errmsg: "access_token expired" });
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return reply(200, { errcode: 47001, errmsg: "data format error" });
      }
      const msgtype = body.msgtype;
      if (msgtype === "template_card") return this.#sendCard(body);
      if (msgtype === "image" || msgtype === "file") {
        const mediaId = (body[msgtype] as { media_id?: unknown } | undefined)?.media_id;
        const upload = this.uploads.find((u) => u.mediaId === mediaId && u.type === msgtype);
        if (!upload) return reply(200, { errcode: 40007, errmsg: "invalid media_id" });
        if (typeof body.touser !== "string" || body.agentid !== this.agentId)
          return reply(200, { errcode: 41009, errmsg: "missing touser or invalid agentid" });
        this.messages.push({
          touser: body.touser,
          msgtype,
          agentid: body.agentid,
          content: `[${msgtype}] ${upload.name}`,
          upload,
        });
        return reply(200, { errcode: 0, errmsg: "ok", msgid: `msg-${this.messages.length}` });
      }
      if (msgtype !== "text" && msgtype !== "markdown")
        return reply(200, { errcode: 40008, errmsg: "invalid message type" });
      const content = (body[msgtype] as { content?: unknown } | undefined)?.content;
      if (typeof content !== "string" || typeof body.touser !== "string") {
        return reply(200, { errcode: 41009, errmsg: "missing touser or content" });
      }
      if (body.agentid !== this.agentId) return reply(200, { errcode: 40056, errmsg: "invalid agentid" });
      if (Buffer.byteLength(content) > 2048)
        return reply(200, { errcode: 45002, errmsg: "content size out of limit" });
      this.messages.push({ touser: body.touser, msgtype, agentid: body.agentid, content });
      return reply(200, { errcode: 0, errmsg: "ok", msgid: `msg-${this.messages.length}` });
    }
    if (url.pathname === "/cgi-bin/message/update_template_card" && req.method === "POST") {
      if (!this.#valid.has(url.searchParams.get("access_token") ?? ""))
        return reply(200, { errcode: 42001, errmsg: "access_token expired" });
      const body = JSON.parse(raw) as {
        userids?: unknown;
        agentid?: unknown;
        response_code?: unknown;
        button?: { replace_name?: unknown };
      };
      const card = typeof body.response_code === "string" ? this.#codes.get(body.response_code) : undefined;
      if (!card) return reply(200, { errcode: 40029, errmsg: "invalid response_code" });
      if (body.agentid !== this.agentId) return reply(200, { errcode: 40056, errmsg: "invalid agentid" });
      if (typeof body.button?.replace_name !== "string")
        return reply(200, { errcode: 41009, errmsg: "missing button.replace_name" });
      this.#codes.delete(body.response_code as string);
      card.replacedBy = body.button.replace_name;
      if (card.card) delete card.card.button_list;
      return reply(200, { errcode: 0, errmsg: "ok" });
    }
    return reply(404, { errcode: 404, errmsg: "not found" });
  }

  #sendCard(body: Record<string, unknown>): FakeReply {
    const card = body.template_card as Record<string, unknown> | undefined;
    if (card === undefined) return reply(200, { errcode: 41009, errmsg: "missing template_card" });
    if (card.card_type !== "button_interaction" || typeof body.touser !== "string")
      return reply(200, { errcode: 41009, errmsg: "missing touser or template_card" });
    if (body.agentid !== this.agentId) return reply(200, { errcode: 40056, errmsg: "invalid agentid" });
    const buttons = card.button_list as Array<{ key?: unknown }> | undefined;
    if (!Array.isArray(buttons) || buttons.length === 0 || buttons.length > 6)
      return reply(200, { errcode: 40058, errmsg: "button_list must hold 1 to 6 buttons" });
    if (buttons.some((b) => typeof b.key !== "string" || Buffer.byteLength(b.key) > 1024))
      return reply(200, { errcode: 40058, errmsg: "invalid button key" });
    const title = card.main_title as { title?: string; desc?: string } | undefined;
    const responseCode = `rc-${randomBytes(8).toString("hex")}`;
    const message: FakeWecomMessage = {
      touser: body.touser,
      msgtype: "template_card",
      agentid: body.agentid,
      content: [title?.title, title?.desc, card.sub_title_text]
        .filter((x) => typeof x === "string")
        .join("\n"),
      card: structuredClone(card),
      responseCode,
    };
    this.messages.push(message);
    this.#codes.set(responseCode, message);
    return reply(200, {
      errcode: 0,
      errmsg: "ok",
      msgid: `msg-${this.messages.length}`,
      response_code: responseCode,
    });
  }

  /** The buttons of a card message, while it has them. */
  buttons(message: FakeWecomMessage): FakeWecomButton[] {
    const list = (message.card?.button_list ?? []) as Array<{ text: string; key: string }>;
    return list.map((b) => ({ text: b.text, key: b.key }));
  }

  /**
   * A person's press of a card button, as WeCom posts it to the callback (`template_card_event`), with
   * a fresh response code for the card.
   */
  pressCard(
    keys: WecomCallbackKeys,
    options: { from: string; message: FakeWecomMessage; button: string },
  ): { query: Record<string, string>; body: string } {
    const button = this.buttons(options.message).find((b) => b.text.includes(options.button));
    if (!button) throw new Error(`no button "${options.button}" on the card`);
    const responseCode = `rc-${randomBytes(8).toString("hex")}`;
    this.#codes.set(responseCode, options.message);
    return buildWecomCallback(keys, {
      ToUserName: keys.corpId,
      FromUserName: options.from,
      CreateTime: Math.floor(Date.now() / 1000),
      MsgType: "event",
      Event: "template_card_event",
      EventKey: button.key,
      TaskId: String(options.message.card?.task_id ?? ""),
      CardType: "button_interaction",
      ResponseCode: responseCode,
      AgentID: this.agentId,
    });
  }
}

/** What WeCom's callback settings hold: the Token and the EncodingAESKey (43 characters). */
export interface WecomCallbackKeys {
  token: string;
  encodingAESKey: string;
  corpId: string;
}

/** A random EncodingAESKey as the admin console generates one. */
export function randomEncodingAESKey(): string {
  return randomBytes(32)
    .toString("base64")
    .replace(/[^A-Za-z0-9]/g, "a")
    .slice(0, 43);
}

function signedQuery(keys: WecomCallbackKeys, ciphertext: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const nonce = String(Math.floor(Math.random() * 1e10));
  return { msg_signature: getSignature(keys.token, timestamp, nonce, ciphertext), timestamp, nonce };
}

/** The query of the GET WeCom sends when the callback URL is saved (`echostr` encrypted). */
export function buildWecomUrlVerification(keys: WecomCallbackKeys, echo: string): Record<string, string> {
  const echostr = encrypt(keys.encodingAESKey, echo, keys.corpId);
  return { ...signedQuery(keys, echostr), echostr };
}

/** Any callback (message or event) as WeCom posts it: encrypted, signed, the query and the XML body. */
export function buildWecomCallback(
  keys: WecomCallbackKeys,
  fields: Record<string, string | number>,
): { query: Record<string, string>; body: string } {
  const ciphertext = encrypt(keys.encodingAESKey, buildWecomXml(fields), keys.corpId);
  const body = buildWecomXml({
    ToUserName: keys.corpId,
    AgentID: String(fields.AgentID ?? ""),
    Encrypt: ciphertext,
  });
  return { query: signedQuery(keys, ciphertext), body };
}

/**
 * A voice message as WeCom posts it, with the text WeCom recognised in it when given (and the
 * `mediaId` of audio added with `addMedia`, for a download).
 */
export function buildWecomVoice(
  keys: WecomCallbackKeys,
  options: { from: string; agentId: number; recognition?: string; msgId?: string; mediaId?: string },
): { query: Record<string, string>; body: string } {
  return buildWecomCallback(keys, {
    ToUserName: keys.corpId,
    FromUserName: options.from,
    CreateTime: Math.floor(Date.now() / 1000),
    MsgType: "voice",
    MediaId: options.mediaId ?? `media-${randomBytes(6).toString("hex")}`,
    Format: "amr",
    ...(options.recognition !== undefined ? { Recognition: options.recognition } : {}),
    MsgId: options.msgId ?? String(Math.floor(Math.random() * 1e15)),
    AgentID: options.agentId,
  });
}

/** A picture as WeCom posts it: `mediaId` of an image added with `addMedia`, for the download. */
export function buildWecomImage(
  keys: WecomCallbackKeys,
  options: { from: string; agentId: number; mediaId: string; msgId?: string },
): { query: Record<string, string>; body: string } {
  return buildWecomCallback(keys, {
    ToUserName: keys.corpId,
    FromUserName: options.from,
    CreateTime: Math.floor(Date.now() / 1000),
    MsgType: "image",
    PicUrl: `https://wework.qpic.cn/fake/${options.mediaId}`,
    MediaId: options.mediaId,
    MsgId: options.msgId ?? String(Math.floor(Math.random() * 1e15)),
    AgentID: options.agentId,
  });
}

/** A text message as WeCom posts it to the callback: the query and the XML body. */
export function buildWecomText(
  keys: WecomCallbackKeys,
  options: { from: string; text: string; msgId?: string; agentId: number },
): { query: Record<string, string>; body: string } {
  const inner = buildWecomXml({
    ToUserName: keys.corpId,
    FromUserName: options.from,
    CreateTime: Math.floor(Date.now() / 1000),
    MsgType: "text",
    Content: options.text,
    MsgId: options.msgId ?? String(Math.floor(Math.random() * 1e15)),
    AgentID: options.agentId,
  });
  const ciphertext = encrypt(keys.encodingAESKey, inner, keys.corpId);
  const body = buildWecomXml({
    ToUserName: keys.corpId,
    AgentID: String(options.agentId),
    Encrypt: ciphertext,
  });
  return { query: signedQuery(keys, ciphertext), body };
}
