/**
 * A fake WeCom server API on 127.0.0.1, from the documented shapes: `GET /cgi-bin/gettoken`
 * (`{errcode: 0, access_token, expires_in}`) and `POST /cgi-bin/message/send?access_token=…`
 * (text and markdown, refusing content over 2,048 bytes with errcode 45002); plus builders of what
 * WeCom sends to a callback URL: the signed URL verification query (`echostr` encrypted) and an
 * encrypted, signed text message (XML with `Encrypt`), made with the official `@wecom/crypto`.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { encrypt, getSignature } from "@wecom/crypto";
import { buildWecomXml } from "../connectors/wecom/wecom-xml.js";
import { FakePlatformServer, type FakeReply, type Outage, reply } from "./fake-platform-server.js";

export interface FakeWecomMessage {
  touser: string;
  msgtype: "text" | "markdown";
  agentid: number;
  content: string;
}

/** The fake API of one corp and app. */
export class FakeWecom {
  readonly corpId: string;
  readonly corpSecret: string;
  readonly agentId: number;
  readonly #server: FakePlatformServer;
  readonly messages: FakeWecomMessage[] = [];
  /** Access tokens handed out. */
  readonly tokens: string[] = [];
  #valid = new Set<string>();

  private constructor(corpId: string, corpSecret: string, agentId: number, server: FakePlatformServer) {
    this.corpId = corpId;
    this.corpSecret = corpSecret;
    this.agentId = agentId;
    this.#server = server;
  }

  static async start(
    corpId = "wwfakecorp0001",
    corpSecret = "fake-corp-secret-0123456789",
    agentId = 1000002,
  ): Promise<FakeWecom> {
    let fake: FakeWecom | undefined;
    const server = await FakePlatformServer.start((req, body) => fake?.handle(req, body) ?? reply(503, {}));
    fake = new FakeWecom(corpId, corpSecret, agentId, server);
    return fake;
  }

  get url(): string {
    return this.#server.url;
  }

  outage(mode: Outage): Promise<void> {
    return this.#server.outage(mode);
  }

  /** Invalidates every token handed out (as on expiry). */
  expireTokens(): void {
    this.#valid.clear();
  }

  waitUntil(test: () => boolean, what: string, timeoutMs?: number): Promise<void> {
    return this.#server.waitUntil(test, what, timeoutMs);
  }

  close(): Promise<void> {
    return this.#server.close();
  }

  handle(req: IncomingMessage, raw: string): FakeReply {
    const url = new URL(req.url ?? "", this.url);
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
    return reply(404, { errcode: 404, errmsg: "not found" });
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
