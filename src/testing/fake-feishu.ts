/**
 * A fake Feishu/Lark Open API on 127.0.0.1, from the documented shapes: the tenant access token
 * (`POST /open-apis/auth/v3/tenant_access_token/internal`), sending messages
 * (`POST /open-apis/im/v1/messages?receive_id_type=chat_id`, at most one per `uuid`), an outage
 * switch; and `buildFeishuEvent`, which signs and encrypts an `im.message.receive_v1` event the way
 * Feishu sends it to an event subscription URL.
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
import { FakePlatformServer, type FakeReply, type Outage, reply } from "./fake-platform-server.js";

export interface FakeFeishuMessage {
  messageId: string;
  chatId: string;
  text: string;
  uuid: string | undefined;
}

/** The fake Open API of one app. */
export class FakeFeishu {
  readonly appId: string;
  readonly appSecret: string;
  readonly #server: FakePlatformServer;
  /** Messages the app sent (one per uuid). */
  readonly messages: FakeFeishuMessage[] = [];
  /** Tenant tokens handed out, oldest first. */
  readonly tokens: string[] = [];
  #valid = new Set<string>();
  #next = 1;

  private constructor(appId: string, appSecret: string, server: FakePlatformServer) {
    this.appId = appId;
    this.appSecret = appSecret;
    this.#server = server;
  }

  /** Starts the fake for an app's credentials. */
  static async start(
    appId = "cli_fake_app_0001",
    appSecret = "fake-app-secret-0123456789",
  ): Promise<FakeFeishu> {
    let fake: FakeFeishu | undefined;
    const server = await FakePlatformServer.start((req, body) => fake?.handle(req, body) ?? reply(503, {}));
    fake = new FakeFeishu(appId, appSecret, server);
    return fake;
  }

  /** Base URL to configure as the connector's `baseUrl`. */
  get url(): string {
    return this.#server.url;
  }

  get outageHits(): number {
    return this.#server.outageHits;
  }

  /** Makes calls fail with 502, refuses connections, or works again. */
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

  /** Answers one Open API request. */
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
    if (path === "/open-apis/im/v1/messages" && req.method === "POST") return this.#send(req, body);
    return reply(404, { code: 404, msg: "404 page not found" });
  }

  #send(req: IncomingMessage, body: Record<string, unknown>): FakeReply {
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (!token) return reply(400, { code: 99991661, msg: "Missing access token for authorization." });
    if (!this.#valid.has(token))
      return reply(400, { code: 99991663, msg: "Invalid access token for authorization." });
    if (!new URL(req.url ?? "", this.url).searchParams.get("receive_id_type")) {
      return reply(400, {
        code: 99992402,
        msg: "field validation failed: receive_id_type is required",
      });
    }
    let text: unknown;
    try {
      text = (JSON.parse(String(body.content)) as { text?: unknown }).text;
    } catch {
      text = undefined;
    }
    if (body.msg_type !== "text" || typeof text !== "string" || typeof body.receive_id !== "string") {
      return reply(400, { code: 230001, msg: "Your request contains an invalid request parameter." });
    }
    const uuid = typeof body.uuid === "string" ? body.uuid : undefined;
    const earlier = uuid ? this.messages.find((m) => m.uuid === uuid) : undefined;
    const message = earlier ?? {
      messageId: `om_${String(this.#next++).padStart(8, "0")}`,
      chatId: body.receive_id,
      text,
      uuid,
    };
    if (!earlier) this.messages.push(message);
    return reply(200, {
      code: 0,
      msg: "success",
      data: {
        message_id: message.messageId,
        chat_id: message.chatId,
        msg_type: "text",
        body: { content: body.content },
      },
    });
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
        message_id: `om_in_${eventId.slice(0, 12)}`,
        create_time: now,
        chat_id: options.chatId,
        chat_type: options.chatType ?? "p2p",
        message_type: "text",
        content: JSON.stringify({
          text: options.chatType === "group" ? `@_user_1 ${options.text}` : options.text,
        }),
      },
    },
  };
  return signed(options.encryptKey, event, true);
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
