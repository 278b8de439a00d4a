/**
 * The Feishu/Lark Open API calls the connector uses: a tenant access token from
 * `POST /open-apis/auth/v3/tenant_access_token/internal` (`{app_id, app_secret}` →
 * `{code: 0, tenant_access_token, expire}` in seconds), cached until shortly before it expires, and
 * `POST /open-apis/im/v1/messages?receive_id_type=chat_id` to send a text message or an interactive
 * card, and `PATCH /open-apis/im/v1/messages/:message_id` to update a card the app sent. Responses
 * carry `{code, msg, data}`; `code` 0 is success.
 */
import { AccessToken, type IssuedToken } from "../access-token.js";
import { apiFailure, type JsonResponse, replyObject, requestJson } from "../http-json.js";
import type { DeliveryError } from "../types.js";

export const FEISHU_API = "https://open.feishu.cn";

/** Codes meaning the access token is missing or invalid: fetch a new one and try again. */
const TOKEN_CODES = new Set([99991661, 99991663]);
/** "request trigger frequency limit" (sent with HTTP 429 or, by older APIs, 400) and "internal error". */
const RETRY_CODES = new Set([99991400, 1500]);

interface FeishuReply {
  code?: number;
  msg?: string;
  tenant_access_token?: string;
  expire?: number;
  data?: { message_id?: string };
}

const replyOf = replyObject<FeishuReply>;

/** A client for one app. */
export class FeishuApi {
  readonly #base: string;
  readonly #appId: string;
  readonly #appSecret: string;
  readonly #token: AccessToken;

  constructor(options: { baseUrl: string; appId: string; appSecret: string; now: () => number }) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#appId = options.appId;
    this.#appSecret = options.appSecret;
    this.#token = new AccessToken((signal) => this.#issueToken(signal), options.now);
  }

  /** The cached tenant access token, fetched when missing or about to expire. */
  tenantToken(signal?: AbortSignal): Promise<string> {
    return this.#token.get(signal);
  }

  /** Forgets the cached token (Feishu said it is no longer valid). */
  dropToken(): void {
    this.#token.drop();
  }

  async #issueToken(signal?: AbortSignal): Promise<IssuedToken> {
    const response = await requestJson(`${this.#base}/open-apis/auth/v3/tenant_access_token/internal`, {
      body: { app_id: this.#appId, app_secret: this.#appSecret },
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    if (response.status !== 200 || reply.code !== 0 || !reply.tenant_access_token) {
      throw this.#failure("tenant_access_token", response);
    }
    return { value: reply.tenant_access_token, expiresInSec: reply.expire };
  }

  #failure(what: string, response: JsonResponse): DeliveryError {
    const { code, msg } = replyOf(response.body);
    // Rate limits say when the window resets in `x-ogw-ratelimit-reset` (seconds).
    const reset = Number(response.headers.get("x-ogw-ratelimit-reset") ?? Number.NaN);
    return apiFailure("Feishu", what, response, {
      said: code !== undefined ? `code ${code}: ${msg ?? ""}` : undefined,
      retryableCode: code !== undefined && (RETRY_CODES.has(code) || TOKEN_CODES.has(code)),
      retryAfterMs: Number.isFinite(reset) && reset >= 0 ? reset * 1000 : undefined,
    });
  }

  /** Sends a text message to a chat; resolves with its message id. */
  sendText(chatId: string, text: string, uuid?: string, signal?: AbortSignal): Promise<string> {
    return this.#send(chatId, "text", JSON.stringify({ text }), uuid, signal);
  }

  /**
   * Uploads a file and sends it to a chat as a file message (an image as an image message); resolves
   * with its message id. Images go to `/im/v1/images`, other files to `/im/v1/files` (as a PDF or a
   * stream).
   */
  async sendFile(
    chatId: string,
    file: { name: string; mimeType: string; kind: string; data: Buffer },
    uuid?: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const image = file.kind === "image";
    const form = new FormData();
    const blob = new Blob([new Uint8Array(file.data)], { type: file.mimeType });
    if (image) {
      form.set("image_type", "message");
      form.set("image", blob, file.name);
    } else {
      form.set("file_type", file.kind === "pdf" ? "pdf" : "stream");
      form.set("file_name", file.name);
      form.set("file", blob, file.name);
    }
    const token = await this.tenantToken(signal);
    const response = await requestJson(`${this.#base}/open-apis/im/v1/${image ? "images" : "files"}`, {
      headers: { authorization: `Bearer ${token}` },
      body: form,
      timeoutMs: 120_000,
      ...(signal ? { signal } : {}),
    });
    const reply = response.body as
      | { code?: number; data?: { image_key?: string; file_key?: string } }
      | undefined;
    const key = image ? reply?.data?.image_key : reply?.data?.file_key;
    if (response.status !== 200 || reply?.code !== 0 || !key) {
      if (reply?.code !== undefined && TOKEN_CODES.has(reply.code)) this.#token.drop();
      throw this.#failure(`upload ${image ? "image" : "file"}`, response);
    }
    const content = JSON.stringify(image ? { image_key: key } : { file_key: key });
    return this.#send(chatId, image ? "image" : "file", content, uuid, signal);
  }

  /** Sends an interactive card (card JSON) to a chat; resolves with its message id. */
  sendCard(chatId: string, card: unknown, uuid?: string, signal?: AbortSignal): Promise<string> {
    return this.#send(chatId, "interactive", JSON.stringify(card), uuid, signal);
  }

  /** Replaces the content of a card the app sent (the card must be shared: `config.update_multi`). */
  async updateCard(messageId: string, card: unknown, signal?: AbortSignal): Promise<void> {
    const token = await this.tenantToken(signal);
    const response = await requestJson(
      `${this.#base}/open-apis/im/v1/messages/${encodeURIComponent(messageId)}`,
      {
        method: "PATCH",
        headers: { authorization: `Bearer ${token}` },
        body: { content: JSON.stringify(card) },
        ...(signal ? { signal } : {}),
      },
    );
    const reply = replyOf(response.body);
    if (response.status === 200 && reply.code === 0) return;
    if (reply.code !== undefined && TOKEN_CODES.has(reply.code)) this.#token.drop();
    throw this.#failure("update card", response);
  }

  async #send(
    chatId: string,
    msgType: "text" | "interactive" | "image" | "file",
    content: string,
    uuid: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<string> {
    const token = await this.tenantToken(signal);
    const body: Record<string, string> = { receive_id: chatId, msg_type: msgType, content };
    // Feishu sends at most one message per uuid within an hour: a retried delivery is not doubled.
    if (uuid) body.uuid = uuid.slice(0, 50);
    const response = await requestJson(`${this.#base}/open-apis/im/v1/messages?receive_id_type=chat_id`, {
      headers: { authorization: `Bearer ${token}` },
      body,
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    if (response.status === 200 && reply.code === 0) return reply.data?.message_id ?? "";
    if (reply.code !== undefined && TOKEN_CODES.has(reply.code)) this.#token.drop();
    throw this.#failure("send message", response);
  }
}
