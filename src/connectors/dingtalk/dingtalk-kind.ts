/**
 * The DingTalk robot connector (an app's robot, "企业内部应用机器人"). `mode: "stream"` (default)
 * takes robot messages over DingTalk's Stream mode (no public address needed; one instance holds the
 * connection at a time); `mode: "webhook"` takes DingTalk's HTTP callback at
 * `/api/connectors/<id>/inbound`, verified by its `timestamp` and `sign` headers before anything is
 * stored. One-to-one chats and group messages that @ the robot reach the agent; answers go back as
 * DingTalk markdown through the message's session webhook while it is valid, else through the robot
 * OpenAPI. Each chat's route (its session webhook, whether it is a group, the sender's staff id) is
 * kept in the connector's state, so any instance can deliver the answer. With a card template
 * (`cardTemplateId`, Stream mode) approvals and a flow's progress are interactive cards with buttons,
 * pressed over Stream mode, and answers are streamed into a card updated in place (see
 * `dingtalk-card.ts`).
 */
import { randomUUID } from "node:crypto";
import * as z from "zod";
import { downloadFile } from "../file-download.js";
import { holdOpened } from "../held-connection.js";
import { httpUrl, parseWith, tokenAtStart } from "../kind-helpers.js";
import { speakerMarkdown, speakerTitle } from "../speaker-label.js";
import {
  type ApprovalPrompt,
  type ConnectorDriver,
  type ConnectorKind,
  type ConnectorSettings,
  DeliveryError,
  type DriverContext,
  type FlowCard,
  type InboundOutcome,
  type InboundRequest,
  type OutboundMessage,
} from "../types.js";
import { DINGTALK_API, DingTalkApi, markdownTitle } from "./dingtalk-api.js";
import {
  answerCardParams,
  approvalCardParams,
  cardCallbackResponse,
  flowCardParams,
  pressOfCardCallback,
} from "./dingtalk-card.js";
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
    /** The app's card template (see `dingtalk-card.ts`): approval and flow cards, streamed answers. */
    cardTemplateId: z.string().trim().min(1).max(200).optional(),
    /** Stream answers into a card updated in place (needs the card template). */
    streaming: z.boolean().default(true),
  })
  .strict();

/** Whether the connector shows cards: a card template, and Stream mode (where card presses arrive). */
function cardsOn(settings: ConnectorSettings): boolean {
  return settings.mode !== "webhook" && typeof settings.cardTemplateId === "string";
}

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
    await tokenAtStart(this.#context, () => this.#api.accessToken());
    if (this.#mode !== "stream") return;
    const context = this.#context;
    this.#background = holdOpened(context, this.#abort.signal, async () => {
      const { openDingTalkStream } = await import("./dingtalk-stream.js");
      return openDingTalkStream({
        baseUrl: this.#api.baseUrl,
        clientId: String(context.settings.clientId),
        clientSecret: context.secrets.clientSecret ?? "",
        onMessage: (message) => this.#take(message),
        ...(cardsOn(context.settings) ? { onCardAction: (data: string) => this.#cardAction(data) } : {}),
        report: context.report,
        backoff: context.backoff,
      });
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

  /** A press of a card button: decided by the manager, answered with the card's update. */
  async #cardAction(data: string): Promise<unknown> {
    const press = pressOfCardCallback(data);
    if (!press) return {};
    return cardCallbackResponse(await this.#context.press(press));
  }

  readonly approvals = {
    update: (_chatId: string, messageId: string, prompt: ApprovalPrompt, signal?: AbortSignal) =>
      this.#api.updateCard(messageId, approvalCardParams(prompt), signal),
  };

  readonly flowCards = {
    update: (_chatId: string, messageId: string, card: FlowCard, signal?: AbortSignal) =>
      this.#api.updateCard(messageId, flowCardParams(card), signal),
  };

  readonly preview = {
    send: async (chatId: string, text: string) =>
      this.#sendCard(chatId, answerCardParams(markdownTitle(text), text), `dan-${randomUUID()}`),
    edit: (_chatId: string, messageId: string, text: string) =>
      this.#api.updateCard(messageId, { markdown: text }),
  };

  /** Sends a card from the template to the chat; resolves with its outTrackId. */
  async #sendCard(
    chatId: string,
    params: Record<string, string>,
    outTrackId: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const route = await this.#route(chatId);
    const staffId = route.staffId;
    if (!route.group && !staffId) {
      throw new DeliveryError("DingTalk gave no staff id to send the person a card", { retryable: false });
    }
    await this.#api.createCard(
      {
        templateId: String(this.#context.settings.cardTemplateId),
        outTrackId,
        robotCode: route.robotCode ?? String(this.#context.settings.clientId),
        params,
        target: route.group ? { group: chatId } : { user: staffId ?? "" },
      },
      signal,
    );
    return outTrackId;
  }

  async #route(chatId: string): Promise<DingTalkChatRoute> {
    const stored = await this.#context.state.get(`${ROUTE_KEY}${chatId}`);
    return stored ? (JSON.parse(stored) as DingTalkChatRoute) : { group: true };
  }

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
    const markdown = message.speaker
      ? { title: speakerTitle(message.speaker), text: speakerMarkdown(message.speaker, message.text) }
      : { title: markdownTitle(message.text), text: message.text };
    if (cardsOn(this.#context.settings)) {
      if (message.approval) {
        const params = approvalCardParams(message.approval);
        return this.#sendCard(message.chatId, params, `dap-${message.approval.token}`, signal);
      }
      if (message.flow) {
        return this.#sendCard(
          message.chatId,
          flowCardParams(message.flow),
          `dfl-${message.flow.token}`,
          signal,
        );
      }
      if (message.editMessageId !== undefined) {
        // The streamed preview card becomes the whole answer.
        await this.#api.updateCard(
          message.editMessageId,
          answerCardParams(markdown.title, markdown.text),
          signal,
        );
        return message.editMessageId;
      }
    }
    const route = await this.#route(message.chatId);
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
      cardTemplateId: "Card template ID",
      streaming: "Stream answers",
    }),
  // A conservative size per markdown message; longer answers are split.
  limit: () => ({ max: 5000, unit: "utf16" }),
  streams: (settings) => cardsOn(settings) && settings.streaming !== false,
  approvals: cardsOn,
  create: (context) => new DingTalkDriver(context),
};
