/**
 * The DingTalk calls the robot connector makes. Answers go to a message's `sessionWebhook` (a URL
 * in each robot message, valid until `sessionWebhookExpiredTime`) with `{msgtype: "markdown",
 * markdown: {title, text}}`, answered `{errcode: 0}`; once it expired, through the robot OpenAPI with
 * an access token from `POST /v1.0/oauth2/accessToken` (`{appKey, appSecret}` → `{accessToken,
 * expireIn}` seconds, cached until shortly before it expires): `POST /v1.0/robot/groupMessages/send`
 * for a group, `POST /v1.0/robot/oToMessages/batchSend` for a one-to-one chat, both with
 * `msgKey: "sampleMarkdown"`. OpenAPI failures carry `{code, message}`.
 */
import { AccessToken, type IssuedToken } from "../access-token.js";
import { apiFailure, type JsonResponse, replyObject, requestJson } from "../http-json.js";
import type { DeliveryError } from "../types.js";

export const DINGTALK_API = "https://api.dingtalk.com";
/** Session webhook errcodes meaning the session is gone: use the OpenAPI instead. */
const SESSION_GONE = new Set([300001, 300002, 310000]);

export interface DingTalkMarkdown {
  title: string;
  text: string;
}

interface OpenApiReply {
  code?: string;
  message?: string;
  accessToken?: string;
  expireIn?: number;
  errcode?: number;
  errmsg?: string;
  processQueryKey?: string;
}

const replyOf = replyObject<OpenApiReply>;

/** The title DingTalk shows in notifications: the answer's first words, without Markdown marks. */
export function markdownTitle(text: string): string {
  const line = text
    .split("\n")
    .map((l) => l.replace(/[#>*_`~[\]()|-]/g, "").trim())
    .find((l) => l !== "");
  const title = line ?? "Answer";
  return title.length > 30 ? `${title.slice(0, 29)}…` : title;
}

/** A client for one app (robot). */
export class DingTalkApi {
  readonly #base: string;
  readonly #appKey: string;
  readonly #appSecret: string;
  readonly #token: AccessToken;

  constructor(options: { baseUrl: string; appKey: string; appSecret: string; now: () => number }) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#appKey = options.appKey;
    this.#appSecret = options.appSecret;
    this.#token = new AccessToken((signal) => this.#issueToken(signal), options.now);
  }

  get baseUrl(): string {
    return this.#base;
  }

  /** The cached access token, fetched when missing or about to expire. */
  accessToken(signal?: AbortSignal): Promise<string> {
    return this.#token.get(signal);
  }

  async #issueToken(signal?: AbortSignal): Promise<IssuedToken> {
    const response = await requestJson(`${this.#base}/v1.0/oauth2/accessToken`, {
      body: { appKey: this.#appKey, appSecret: this.#appSecret },
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    if (response.status !== 200 || !reply.accessToken) {
      throw this.#failure("access token", response);
    }
    return { value: reply.accessToken, expiresInSec: reply.expireIn };
  }

  #failure(what: string, response: JsonResponse): DeliveryError {
    const reply = replyOf(response.body);
    return apiFailure("DingTalk", what, response, {
      said:
        reply.code !== undefined
          ? `${reply.code}: ${reply.message ?? ""}`
          : reply.errcode !== undefined
            ? `errcode ${reply.errcode}: ${reply.errmsg ?? ""}`
            : undefined,
      retryableCode: reply.errcode === -1,
    });
  }

  /**
   * Sends a markdown message to a session webhook. Resolves false when the session is gone (the
   * caller falls back to the OpenAPI); throws DeliveryError for other failures.
   */
  async sendBySession(webhook: string, markdown: DingTalkMarkdown, signal?: AbortSignal): Promise<boolean> {
    const response = await requestJson(webhook, {
      body: { msgtype: "markdown", markdown },
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    if (response.status === 200 && (reply.errcode ?? 0) === 0) return true;
    if (reply.errcode !== undefined && SESSION_GONE.has(reply.errcode)) return false;
    throw this.#failure("session webhook send", response);
  }

  /** Sends a markdown message to a group through the OpenAPI. */
  sendToGroup(
    robotCode: string,
    conversationId: string,
    markdown: DingTalkMarkdown,
    signal?: AbortSignal,
  ): Promise<string> {
    return this.#robotSend(
      "/v1.0/robot/groupMessages/send",
      { robotCode, openConversationId: conversationId },
      markdown,
      signal,
    );
  }

  /** Sends a markdown message to one person (their staff id) through the OpenAPI. */
  sendToUser(
    robotCode: string,
    staffId: string,
    markdown: DingTalkMarkdown,
    signal?: AbortSignal,
  ): Promise<string> {
    return this.#robotSend(
      "/v1.0/robot/oToMessages/batchSend",
      { robotCode, userIds: [staffId] },
      markdown,
      signal,
    );
  }

  /**
   * Creates a card from the app's card template and delivers it to a group (by its
   * openConversationId) or to one person's chat with the robot (by staff id), with button callbacks
   * over Stream mode: `POST /v1.0/card/instances/createAndDeliver`.
   */
  async createCard(
    card: {
      templateId: string;
      outTrackId: string;
      robotCode: string;
      params: Record<string, string>;
      target: { group: string } | { user: string };
    },
    signal?: AbortSignal,
  ): Promise<void> {
    const space =
      "group" in card.target
        ? {
            openSpaceId: `dtv1.card//IM_GROUP.${card.target.group}`,
            imGroupOpenSpaceModel: { supportForward: false },
            imGroupOpenDeliverModel: { robotCode: card.robotCode },
          }
        : {
            openSpaceId: `dtv1.card//IM_ROBOT.${card.target.user}`,
            imRobotOpenSpaceModel: { supportForward: false },
            imRobotOpenDeliverModel: { spaceType: "IM_ROBOT", robotCode: card.robotCode },
          };
    await this.#cardCall(
      "card create",
      "POST",
      "/v1.0/card/instances/createAndDeliver",
      {
        cardTemplateId: card.templateId,
        outTrackId: card.outTrackId,
        callbackType: "STREAM",
        cardData: { cardParamMap: card.params },
        ...space,
      },
      signal,
    );
  }

  /** Updates a card's variables in place (those given; the rest stay): `PUT /v1.0/card/instances`. */
  async updateCard(outTrackId: string, params: Record<string, string>, signal?: AbortSignal): Promise<void> {
    await this.#cardCall(
      "card update",
      "PUT",
      "/v1.0/card/instances",
      {
        outTrackId,
        cardData: { cardParamMap: params },
        cardUpdateOptions: { updateCardDataByKey: true },
      },
      signal,
    );
  }

  async #cardCall(
    what: string,
    method: "POST" | "PUT",
    path: string,
    body: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    const call = async () =>
      requestJson(`${this.#base}${path}`, {
        method,
        headers: { "x-acs-dingtalk-access-token": await this.accessToken(signal) },
        body,
        ...(signal ? { signal } : {}),
      });
    let response = await call();
    if (response.status === 401 || response.status === 403) {
      this.#token.drop();
      response = await call();
    }
    const reply = replyOf(response.body) as OpenApiReply & { success?: boolean };
    if (response.status === 200 && reply.success !== false) return;
    throw this.#failure(what, response);
  }

  /** A short-lived URL of a file a robot message carries (`downloadCode`). */
  async downloadUrl(robotCode: string, downloadCode: string, signal?: AbortSignal): Promise<string> {
    const token = await this.accessToken(signal);
    const response = await requestJson(`${this.#base}/v1.0/robot/messageFiles/download`, {
      headers: { "x-acs-dingtalk-access-token": token },
      body: { robotCode, downloadCode },
      ...(signal ? { signal } : {}),
    });
    const url = (response.body as { downloadUrl?: unknown } | undefined)?.downloadUrl;
    if (response.status === 200 && typeof url === "string") return url;
    if (response.status === 401 || response.status === 403) this.#token.drop();
    throw this.#failure("file download", response);
  }

  async #robotSend(
    path: string,
    target: Record<string, unknown>,
    markdown: DingTalkMarkdown,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const send = async () => {
      const token = await this.accessToken(signal);
      return requestJson(`${this.#base}${path}`, {
        headers: { "x-acs-dingtalk-access-token": token },
        body: { ...target, msgKey: "sampleMarkdown", msgParam: JSON.stringify(markdown) },
        ...(signal ? { signal } : {}),
      });
    };
    let response = await send();
    if (response.status === 401 || response.status === 403) {
      // The token expired early or was revoked: one fresh token, one more try.
      this.#token.drop();
      response = await send();
    }
    const reply = replyOf(response.body);
    if (response.status === 200) return reply.processQueryKey ?? "";
    throw this.#failure("robot send", response);
  }
}
