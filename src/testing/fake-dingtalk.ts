/**
 * A fake DingTalk on 127.0.0.1, from the documented shapes: the OpenAPI access token
 * (`POST /v1.0/oauth2/accessToken`), session webhooks (`POST /robot/sendBySession?session=…`, a
 * switch makes them answer an errcode), the robot OpenAPI sends (`/v1.0/robot/groupMessages/send`,
 * `/v1.0/robot/oToMessages/batchSend`), and the Stream mode gateway: `POST
 * /v1.0/gateway/connections/open` hands out a WebSocket endpoint and ticket, and the WebSocket
 * speaks the Stream protocol (JSON frames `{specVersion, type: "CALLBACK", headers: {messageId,
 * topic, …}, data}`, acknowledged by the client with `{code: 200, headers: {messageId}, data}`),
 * including card button callbacks (`pressCard`); and interactive cards from a template
 * (`POST /v1.0/card/instances/createAndDeliver`, updated by `PUT /v1.0/card/instances`).
 * `buildDingTalkCallback` signs a robot message the way DingTalk's HTTP callback sends it.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { type DingTalkRobotMessage, dingTalkSign } from "../connectors/dingtalk/dingtalk-message.js";
import { FakePlatform, startFake } from "./fake-platform.js";
import { type FakePlatformServer, type FakeReply, fileReply, reply } from "./fake-platform-server.js";

export const DINGTALK_ROBOT_TOPIC = "/v1.0/im/bot/messages/get";
export const DINGTALK_CARD_CALLBACK_TOPIC = "/v1.0/card/instances/callback";

/** A message the robot sent (a card: its present state, updates applied). */
export interface FakeDingTalkMessage {
  via: "session" | "group" | "user" | "card";
  /** The session id, the group's openConversationId, or the person's staff id. */
  target: string;
  title: string;
  text: string;
  /** A card's id and variables (`title`, `markdown`, `buttons`, as the template takes them). */
  outTrackId?: string;
  params?: Record<string, string>;
}

/** A button of a card (from its `buttons` variable). */
export interface FakeDingTalkButton {
  text: string;
  action: string;
}

/** The fake platform of one app. */
export class FakeDingTalk extends FakePlatform {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly #wss: WebSocketServer;
  readonly messages: FakeDingTalkMessage[] = [];
  /** Paths of files downloaded, in order. */
  readonly downloads: string[] = [];
  readonly #files = new Map<string, { data: Buffer; contentType: string }>();
  /** OpenAPI access tokens handed out. */
  readonly tokens: string[] = [];
  /** Stream connections opened (tickets used). */
  readonly connections: string[] = [];
  /** Stream messageIds the client acknowledged. */
  readonly acks: string[] = [];
  /** Every card update (`PUT /v1.0/card/instances`), in order. */
  readonly cardUpdates: Array<{ outTrackId: string; params: Record<string, string> }> = [];
  /** The `data` of the client's answers to Stream callbacks, by messageId. */
  readonly #answers = new Map<string, unknown>();
  #tickets = new Set<string>();
  #sockets = new Set<WebSocket>();
  #sessionError: { errcode: number; errmsg: string } | undefined;

  private constructor(
    clientId: string,
    clientSecret: string,
    server: FakePlatformServer,
    wss: WebSocketServer,
  ) {
    super(server);
    this.clientId = clientId;
    this.clientSecret = clientSecret;
    this.#wss = wss;
    wss.on("connection", (socket, req) => this.#connected(socket, req));
  }

  static async start(
    clientId = "dingfakeappkey0001",
    clientSecret = "fake-dingtalk-secret-0123456789",
  ): Promise<FakeDingTalk> {
    const wss = await new Promise<WebSocketServer>((resolve) => {
      const created: WebSocketServer = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () =>
        resolve(created),
      );
    });
    return startFake((server) => new FakeDingTalk(clientId, clientSecret, server, wss), {
      handle: (fake, req, body) => fake.handle(req, body),
    });
  }

  /** Makes session webhooks answer with this errcode (undefined: work again). */
  failSessions(error: { errcode: number; errmsg: string } | undefined): void {
    this.#sessionError = error;
  }

  /** Open Stream connections. */
  get openStreams(): number {
    return [...this.#sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  /** Drops every Stream connection (the client should reconnect by itself). */
  dropStreams(): void {
    for (const socket of this.#sockets) socket.terminate();
  }

  override async close(): Promise<void> {
    for (const socket of this.#sockets) socket.terminate();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
    await super.close();
  }

  /** A robot message as DingTalk sends it, with a session webhook on this fake. */
  robotMessage(options: {
    conversationId: string;
    text: string;
    senderStaffId: string;
    senderNick?: string;
    group?: boolean;
    msgId?: string;
    /** Another kind (`audio`, `picture`, `file`) with its content; `text` is then unused. */
    kind?: { msgtype: "audio" | "picture" | "file"; content: NonNullable<DingTalkRobotMessage["content"]> };
    /** Milliseconds from now until the session webhook expires (default 90 minutes). */
    sessionTtlMs?: number;
  }): DingTalkRobotMessage {
    const session = randomBytes(8).toString("hex");
    return {
      msgId: options.msgId ?? `msg${randomBytes(8).toString("hex")}`,
      ...(options.kind
        ? { msgtype: options.kind.msgtype, content: options.kind.content }
        : { msgtype: "text", text: { content: options.group ? ` ${options.text}` : options.text } }),
      conversationId: options.conversationId,
      conversationType: options.group ? "2" : "1",
      ...(options.group ? { conversationTitle: "Team room" } : {}),
      senderId: `$:LWCP_v1:$${options.senderStaffId}`,
      senderStaffId: options.senderStaffId,
      senderNick: options.senderNick ?? "Zhang San",
      sessionWebhook: `${this.url}/robot/sendBySession?session=${session}`,
      sessionWebhookExpiredTime: Date.now() + (options.sessionTtlMs ?? 90 * 60 * 1000),
      robotCode: this.clientId,
    };
  }

  /** The buttons of a card, while it has them. */
  buttons(message: FakeDingTalkMessage): FakeDingTalkButton[] {
    try {
      return JSON.parse(message.params?.buttons ?? "[]") as FakeDingTalkButton[];
    } catch {
      return [];
    }
  }

  /**
   * A person presses a card's button: its callback goes down the Stream connections as DingTalk sends
   * it; resolves with the client's answer (`{response: {cardData?, userPrivateData?, …}}`), the card's
   * variables updated from `cardData` as DingTalk would.
   */
  async pressCard(options: { outTrackId: string; userId: string; action: string }): Promise<{
    response?: {
      cardData?: { cardParamMap?: Record<string, string> };
      userPrivateData?: { cardParamMap?: Record<string, string> };
    };
  }> {
    const data = {
      outTrackId: options.outTrackId,
      corpId: "dingfakecorp",
      userId: options.userId,
      type: "actionCallback",
      content: JSON.stringify({
        cardPrivateData: { actionIds: ["dimsum"], params: { action: options.action } },
      }),
    };
    const messageId = this.#push(DINGTALK_CARD_CALLBACK_TOPIC, JSON.stringify(data));
    await this.waitUntil(() => this.#answers.has(messageId), "the card callback's answer");
    const answer = this.#answers.get(messageId) as Awaited<ReturnType<FakeDingTalk["pressCard"]>>;
    const params = answer?.response?.cardData?.cardParamMap;
    const card = this.messages.find((m) => m.outTrackId === options.outTrackId);
    if (card && params) this.#apply(card, params);
    return answer ?? {};
  }

  #apply(card: FakeDingTalkMessage, params: Record<string, string>): void {
    card.params = { ...card.params, ...params };
    card.title = card.params.title ?? "";
    card.text = card.params.markdown ?? "";
  }

  /** Pushes a robot message down every open Stream connection; resolves with its messageId. */
  pushRobotMessage(message: DingTalkRobotMessage): string {
    return this.#push(DINGTALK_ROBOT_TOPIC, JSON.stringify(message));
  }

  #push(topic: string, data: string): string {
    const messageId = `stream-${randomBytes(8).toString("hex")}`;
    const frame = {
      specVersion: "1.0",
      type: "CALLBACK",
      headers: {
        appId: this.clientId,
        connectionId: "fake-connection",
        contentType: "application/json",
        messageId,
        time: String(Date.now()),
        topic,
      },
      data,
    };
    for (const socket of this.#sockets)
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(frame));
    return messageId;
  }

  #connected(socket: WebSocket, req: IncomingMessage): void {
    const ticket = new URL(req.url ?? "", "http://x").searchParams.get("ticket") ?? "";
    if (!this.#tickets.delete(ticket)) {
      socket.close(4001, "invalid ticket");
      return;
    }
    this.connections.push(ticket);
    this.#sockets.add(socket);
    socket.on("close", () => {
      this.#sockets.delete(socket);
      this.server.changed();
    });
    socket.on("message", (data) => {
      try {
        const frame = JSON.parse(String(data)) as {
          code?: number;
          headers?: { messageId?: string };
          data?: string;
        };
        if (frame.code === 200 && frame.headers?.messageId) {
          this.acks.push(frame.headers.messageId);
          this.#answers.set(frame.headers.messageId, JSON.parse(frame.data ?? "null"));
        }
      } catch {
        // Not JSON: ignored, as the gateway would.
      }
      this.server.changed();
    });
    this.server.changed();
  }

  /** Answers one HTTP request. */
  /** Keeps a file people send; returns its `downloadCode`. */
  addFile(data: Buffer, contentType: string): string {
    const code = `dc-${randomBytes(8).toString("hex")}`;
    this.#files.set(code, { data, contentType });
    return code;
  }

  handle(req: IncomingMessage, raw: string): FakeReply {
    const url = new URL(req.url ?? "", this.url);
    if (req.method === "GET" && url.pathname.startsWith("/files/")) {
      const file = this.#files.get(url.pathname.slice("/files/".length));
      this.downloads.push(url.pathname);
      return file ? fileReply(file.data, file.contentType) : reply(404, { code: "NotFound" });
    }
    let body: Record<string, unknown> = {};
    try {
      body = raw === "" ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return reply(400, { code: "InvalidParameter", message: "body is not JSON" });
    }
    const credentialsOk = (key: unknown, secret: unknown) =>
      key === this.clientId && secret === this.clientSecret;
    switch (url.pathname) {
      case "/v1.0/oauth2/accessToken": {
        if (!credentialsOk(body.appKey, body.appSecret)) {
          return reply(400, { code: "invalidClientIdOrSecret", message: "无效的clientId或者clientSecret" });
        }
        const token = `dt-${randomBytes(12).toString("hex")}`;
        this.tokens.push(token);
        return reply(200, { accessToken: token, expireIn: 7200 });
      }
      case "/v1.0/gateway/connections/open": {
        if (!credentialsOk(body.clientId, body.clientSecret)) {
          return reply(401, { code: "invalidClientIdOrSecret", message: "无效的clientId或者clientSecret" });
        }
        const ticket = randomBytes(12).toString("hex");
        this.#tickets.add(ticket);
        const port = (this.#wss.address() as AddressInfo).port;
        return reply(200, { endpoint: `ws://127.0.0.1:${port}/connect`, ticket });
      }
      case "/robot/sendBySession": {
        if (this.#sessionError) return reply(200, this.#sessionError);
        const markdown = body.markdown as { title?: unknown; text?: unknown } | undefined;
        if (
          body.msgtype !== "markdown" ||
          typeof markdown?.text !== "string" ||
          typeof markdown.title !== "string"
        ) {
          return reply(200, { errcode: 40035, errmsg: "缺少参数 markdown" });
        }
        this.messages.push({
          via: "session",
          target: url.searchParams.get("session") ?? "",
          title: markdown.title,
          text: markdown.text,
        });
        return reply(200, { errcode: 0, errmsg: "ok" });
      }
      case "/v1.0/robot/messageFiles/download": {
        const token = req.headers["x-acs-dingtalk-access-token"];
        if (typeof token !== "string" || !this.tokens.includes(token))
          return reply(401, { code: "InvalidAuthentication", message: "不合法的access_token" });
        if (body.robotCode !== this.clientId || typeof body.downloadCode !== "string")
          return reply(400, { code: "InvalidParameter", message: "robotCode or downloadCode is wrong" });
        if (!this.#files.has(body.downloadCode))
          return reply(400, { code: "InvalidParameter.downloadCode", message: "downloadCode 无效" });
        return reply(200, { downloadUrl: `${this.url}/files/${body.downloadCode}` });
      }
      case "/v1.0/robot/groupMessages/send":
      case "/v1.0/robot/oToMessages/batchSend":
        return this.#robotSend(req, url.pathname, body);
      case "/v1.0/card/instances/createAndDeliver":
        return this.#createCard(req, body);
      case "/v1.0/card/instances":
        return req.method === "PUT" ? this.#updateCard(req, body) : reply(404, { code: "NotFound" });
      default:
        return reply(404, { code: "NotFound", message: "no such API" });
    }
  }

  #authorized(req: IncomingMessage): boolean {
    const token = req.headers["x-acs-dingtalk-access-token"];
    return typeof token === "string" && this.tokens.includes(token);
  }

  #createCard(req: IncomingMessage, body: Record<string, unknown>): FakeReply {
    if (!this.#authorized(req))
      return reply(401, { code: "InvalidAuthentication", message: "不合法的access_token" });
    const params = (body.cardData as { cardParamMap?: Record<string, unknown> } | undefined)?.cardParamMap;
    const space = /^dtv1\.card\/\/(IM_GROUP|IM_ROBOT)\.(.+)$/.exec(String(body.openSpaceId ?? ""));
    const deliver = (
      space?.[1] === "IM_GROUP" ? body.imGroupOpenDeliverModel : body.imRobotOpenDeliverModel
    ) as { robotCode?: unknown } | undefined;
    if (
      typeof body.cardTemplateId !== "string" ||
      typeof body.outTrackId !== "string" ||
      body.callbackType !== "STREAM" ||
      !space ||
      deliver?.robotCode !== this.clientId ||
      !params ||
      Object.values(params).some((v) => typeof v !== "string")
    ) {
      return reply(400, {
        code: "InvalidParameter",
        message: "a card needs its template, outTrackId, space and string variables",
      });
    }
    if (this.messages.some((m) => m.outTrackId === body.outTrackId))
      return reply(400, { code: "param.outTrackIdExist", message: "outTrackId 已存在" });
    const card: FakeDingTalkMessage = {
      via: "card",
      target: space[2] ?? "",
      title: "",
      text: "",
      outTrackId: body.outTrackId,
      params: {},
    };
    this.#apply(card, params as Record<string, string>);
    this.messages.push(card);
    return reply(200, {
      success: true,
      result: { outTrackId: body.outTrackId, deliverResults: [{ spaceId: space[2], success: true }] },
    });
  }

  #updateCard(req: IncomingMessage, body: Record<string, unknown>): FakeReply {
    if (!this.#authorized(req))
      return reply(401, { code: "InvalidAuthentication", message: "不合法的access_token" });
    const card = this.messages.find((m) => m.outTrackId !== undefined && m.outTrackId === body.outTrackId);
    if (!card) return reply(400, { code: "param.outTrackIdNotExist", message: "卡片不存在" });
    const params = (body.cardData as { cardParamMap?: Record<string, string> } | undefined)?.cardParamMap;
    if (!params) return reply(400, { code: "InvalidParameter", message: "cardData.cardParamMap is missing" });
    this.#apply(card, params);
    this.cardUpdates.push({ outTrackId: card.outTrackId ?? "", params: structuredClone(params) });
    return reply(200, { success: true, result: true });
  }

  #robotSend(req: IncomingMessage, path: string, body: Record<string, unknown>): FakeReply {
    const token = req.headers["x-acs-dingtalk-access-token"];
    if (typeof token !== "string" || !this.tokens.includes(token)) {
      return reply(401, { code: "InvalidAuthentication", message: "不合法的access_token" });
    }
    let param: { title?: unknown; text?: unknown } = {};
    try {
      param = JSON.parse(String(body.msgParam)) as { title?: unknown; text?: unknown };
    } catch {
      return reply(400, { code: "InvalidParameter", message: "msgParam is not JSON" });
    }
    if (
      body.msgKey !== "sampleMarkdown" ||
      typeof param.text !== "string" ||
      body.robotCode !== this.clientId
    ) {
      return reply(400, { code: "InvalidParameter", message: "msgKey, msgParam or robotCode is wrong" });
    }
    const group = path.includes("group");
    const target = group
      ? String(body.openConversationId)
      : String((body.userIds as unknown[] | undefined)?.[0]);
    this.messages.push({
      via: group ? "group" : "user",
      target,
      title: String(param.title),
      text: param.text,
    });
    return reply(200, { processQueryKey: `pqk-${this.messages.length}` });
  }
}

/** A robot message as DingTalk's HTTP callback posts it, signed now (or at `timestamp`). */
export function buildDingTalkCallback(
  clientSecret: string,
  message: DingTalkRobotMessage,
  timestamp = Date.now(),
): { headers: Record<string, string>; body: string } {
  const ts = String(timestamp);
  return {
    headers: {
      "content-type": "application/json; charset=utf-8",
      timestamp: ts,
      sign: dingTalkSign(ts, clientSecret),
    },
    body: JSON.stringify(message),
  };
}
