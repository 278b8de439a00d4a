/**
 * The DingTalk robot connector (an app's robot, "企业内部应用机器人"). `mode: "stream"` (default)
 * takes robot messages over DingTalk's Stream mode (no public address needed; one instance holds the
 * connection at a time); `mode: "webhook"` takes DingTalk's HTTP callback at
 * `/api/connectors/<id>/inbound`, verified by its `timestamp` and `sign` headers before anything is
 * stored. One-to-one chats and group messages that @ the robot reach the agent; answers go back as
 * DingTalk markdown through the message's session webhook while it is valid, else through the robot
 * OpenAPI. Each chat's route (its session webhook, whether it is a group, the sender's staff id) is
 * kept in the connector's state, so any instance can deliver the answer.
 */
import * as z from "zod";
import { downloadFile } from "../file-download.js";
import { holdConnection } from "../held-connection.js";
import { httpUrl, messageOf, parseWith } from "../kind-helpers.js";
import { speakerMarkdown, speakerTitle } from "../speaker-label.js";
import {
  type ConnectorDriver,
  type ConnectorKind,
  DeliveryError,
  type DriverContext,
  type InboundOutcome,
  type InboundRequest,
  type OutboundMessage,
} from "../types.js";
import { DINGTALK_API, DingTalkApi, markdownTitle } from "./dingtalk-api.js";
import {
  checkDingTalkSign,
  type DingTalkChatRoute,
  type DingTalkRobotMessage,
  inboundOfRobotMessage,
  routeOf,
} from "./dingtalk-message.js";

const ROUTE_KEY = "dingtalk.route:";
/** A session webhook this close to its expiry is not used. */
const WEBHOOK_MARGIN_MS = 60_000;

const settingsSchema = z
  .object({
    /** The app's Client ID (formerly AppKey). */
    clientId: z.string().trim().min(1).max(100),
    mode: z.enum(["stream", "webhook"]).default("stream"),
    baseUrl: httpUrl.default(DINGTALK_API),
  })
  .strict();

class DingTalkDriver implements ConnectorDriver {
  readonly #context: DriverContext;
  readonly #api: DingTalkApi;
  readonly #mode: "stream" | "webhook";
  readonly #abort = new AbortController();
  #background: Promise<void> | undefined;

  constructor(context: DriverContext) {
    this.#context = context;
    this.#mode = context.settings.mode === "webhook" ? "webhook" : "stream";
    this.#api = new DingTalkApi({
      baseUrl: String(context.settings.baseUrl),
      appKey: String(context.settings.clientId),
      appSecret: context.secrets.clientSecret ?? "",
      now: context.now,
    });
  }

  async start(): Promise<void> {
    try {
      await this.#api.accessToken();
    } catch (err) {
      // Wrong credentials fail the start; an outage only delays things.
      if (err instanceof Error && "retryable" in err && err.retryable === true)
        this.#context.report(messageOf(err));
      else throw err;
    }
    if (this.#mode !== "stream") return;
    const context = this.#context;
    let stream: { close(): void } | undefined;
    this.#background = holdConnection(context, this.#abort.signal, {
      open: async () => {
        const { openDingTalkStream } = await import("./dingtalk-stream.js");
        stream = await openDingTalkStream({
          baseUrl: this.#api.baseUrl,
          clientId: String(context.settings.clientId),
          clientSecret: context.secrets.clientSecret ?? "",
          onMessage: (message) => this.#take(message),
          report: context.report,
          backoff: context.backoff,
        });
      },
      close: () => {
        stream?.close();
        stream = undefined;
      },
    });
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#background;
  }

  /** Downloads a file of a robot message: its short-lived URL from the OpenAPI, then the bytes. */
  readonly #download = (downloadCode: string) => async (maxBytes: number, signal: AbortSignal) => {
    const url = await this.#api.downloadUrl(String(this.#context.settings.clientId), downloadCode, signal);
    return downloadFile(url, { what: "DingTalk file download", maxBytes, signal });
  };

  /** Remembers how to answer the message's chat, then hands the message to the pipeline. */
  async #take(robot: DingTalkRobotMessage): Promise<void> {
    const message = inboundOfRobotMessage(robot, this.#download);
    if (!message) return;
    await this.#context.state.set(`${ROUTE_KEY}${message.chat.id}`, JSON.stringify(routeOf(robot)));
    await this.#context.receive([message]);
  }

  async inbound(request: InboundRequest): Promise<InboundOutcome> {
    if (this.#mode !== "webhook") {
      return {
        kind: "rejected",
        status: 403,
        reason: "this DingTalk connector uses Stream mode; it takes no HTTP callbacks",
      };
    }
    const refusal = checkDingTalkSign(
      request.headers,
      this.#context.secrets.clientSecret ?? "",
      this.#context.now(),
    );
    if (refusal) return { kind: "rejected", status: 401, reason: refusal };
    let robot: DingTalkRobotMessage;
    try {
      robot = JSON.parse(request.body) as DingTalkRobotMessage;
    } catch {
      return { kind: "rejected", status: 400, reason: "the body is not a DingTalk robot message" };
    }
    const message = inboundOfRobotMessage(robot, this.#download);
    if (message) {
      await this.#context.state.set(`${ROUTE_KEY}${message.chat.id}`, JSON.stringify(routeOf(robot)));
    }
    return { kind: "messages", messages: message ? [message] : [], body: {} };
  }

  async send(message: OutboundMessage, signal?: AbortSignal): Promise<string | undefined> {
    const stored = await this.#context.state.get(`${ROUTE_KEY}${message.chatId}`);
    const route = stored ? (JSON.parse(stored) as DingTalkChatRoute) : { group: true };
    const markdown = message.speaker
      ? { title: speakerTitle(message.speaker), text: speakerMarkdown(message.speaker, message.text) }
      : { title: markdownTitle(message.text), text: message.text };
    const webhook = route.webhook && this.#trusted(route.webhook) ? route.webhook : undefined;
    if (webhook && (route.expiresAt ?? 0) > this.#context.now() + WEBHOOK_MARGIN_MS) {
      if (await this.#api.sendBySession(webhook, markdown, signal)) return undefined;
    }
    const robotCode = route.robotCode ?? String(this.#context.settings.clientId);
    if (route.group) return this.#api.sendToGroup(robotCode, message.chatId, markdown, signal);
    if (!route.staffId) {
      throw new DeliveryError(
        "the chat's DingTalk session expired and DingTalk gave no staff id to write to the person directly",
        { retryable: false },
      );
    }
    return this.#api.sendToUser(robotCode, route.staffId, markdown, signal);
  }

  /** Session webhooks are followed only to DingTalk (or the configured API host, for tests and proxies). */
  #trusted(url: string): boolean {
    try {
      const target = new URL(url);
      const base = new URL(this.#api.baseUrl);
      if (target.origin === base.origin) return true;
      return (
        target.protocol === "https:" &&
        (target.hostname === "dingtalk.com" || target.hostname.endsWith(".dingtalk.com"))
      );
    } catch {
      return false;
    }
  }

  async test(): Promise<string> {
    await this.#api.accessToken();
    return `got an access token for app ${String(this.#context.settings.clientId)}`;
  }
}

/** The DingTalk kind. */
export const dingtalkKind: ConnectorKind = {
  type: "dingtalk",
  label: "DingTalk",
  secrets: [{ name: "clientSecret", label: "Client Secret (AppSecret)", required: true }],
  parseSettings: (settings) =>
    parseWith(settingsSchema, settings, "DingTalk", {
      clientId: "Client ID (AppKey)",
      mode: "Receive by",
      baseUrl: "OpenAPI URL",
    }),
  // A conservative size per markdown message; longer answers are split.
  limit: () => ({ max: 5000, unit: "utf16" }),
  streams: () => false,
  create: (context) => new DingTalkDriver(context),
};
