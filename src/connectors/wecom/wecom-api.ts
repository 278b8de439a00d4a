/**
 * The WeCom server API calls of a self-built app: `GET /cgi-bin/gettoken?corpid=…&corpsecret=…`
 * (`{errcode: 0, access_token, expires_in}` seconds, cached until shortly before it expires; one
 * request shared by concurrent sends) and `POST /cgi-bin/message/send?access_token=…` with
 * `{touser, msgtype: "markdown" | "text", agentid, …}`. Replies carry `{errcode, errmsg}`; 0 is success.
 */

import { AccessToken, type IssuedToken } from "../access-token.js";
import { downloadFile } from "../file-download.js";
import { apiFailure, type JsonResponse, replyObject, requestJson } from "../http-json.js";
import { DeliveryError } from "../types.js";

export const WECOM_API = "https://qyapi.weixin.qq.com";
/** The access token is invalid or expired: fetch a new one and try again. */
const TOKEN_CODES = new Set([40014, 42001, 40001]);
/** "system busy" and the API's frequency limits. */
const RETRY_CODES = new Set([-1, 45009, 45033]);

interface WecomReply {
  errcode?: number;
  errmsg?: string;
  access_token?: string;
  expires_in?: number;
  msgid?: string;
  invaliduser?: string;
  response_code?: string;
}

const replyOf = replyObject<WecomReply>;

/** A client for one self-built app. */
export class WecomApi {
  readonly #base: string;
  readonly #corpId: string;
  readonly #corpSecret: string;
  readonly #agentId: number;
  readonly #token: AccessToken;

  constructor(options: {
    baseUrl: string;
    corpId: string;
    corpSecret: string;
    agentId: number;
    now: () => number;
  }) {
    this.#base = options.baseUrl.replace(/\/+$/, "");
    this.#corpId = options.corpId;
    this.#corpSecret = options.corpSecret;
    this.#agentId = options.agentId;
    this.#token = new AccessToken((signal) => this.#issueToken(signal), options.now);
  }

  /** The cached access token, fetched when missing or about to expire. */
  accessToken(signal?: AbortSignal): Promise<string> {
    return this.#token.get(signal);
  }

  async #issueToken(signal?: AbortSignal): Promise<IssuedToken> {
    const query = new URLSearchParams({ corpid: this.#corpId, corpsecret: this.#corpSecret });
    const response = await requestJson(`${this.#base}/cgi-bin/gettoken?${query}`, {
      method: "GET",
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    if (response.status !== 200 || reply.errcode !== 0 || !reply.access_token) {
      throw this.#failure("gettoken", response);
    }
    return { value: reply.access_token, expiresInSec: reply.expires_in };
  }

  #failure(what: string, response: JsonResponse): DeliveryError {
    const { errcode: code, errmsg } = replyOf(response.body);
    return apiFailure("WeCom", what, response, {
      said: code !== undefined ? `errcode ${code}: ${errmsg ?? ""}` : undefined,
      retryableCode: code !== undefined && (RETRY_CODES.has(code) || TOKEN_CODES.has(code)),
    });
  }

  /** Sends a markdown or text message to one member of the corp; resolves with its msgid. */
  async send(
    userId: string,
    format: "markdown" | "text",
    content: string,
    signal?: AbortSignal,
  ): Promise<string> {
    const body = { touser: userId, msgtype: format, agentid: this.#agentId, [format]: { content } };
    return (await this.#post("message/send", body, signal)).msgid ?? "";
  }

  /**
   * Sends a template card (`button_interaction`) to one member; resolves with its `response_code`,
   * which updates the card once (`updateTemplateCard`).
   */
  async sendTemplateCard(
    userId: string,
    card: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<string> {
    const body = { touser: userId, msgtype: "template_card", agentid: this.#agentId, template_card: card };
    const reply = await this.#post("message/send", body, signal);
    return reply.response_code ?? reply.msgid ?? "";
  }

  /** Replaces a template card's buttons with a grey line of text (one use of a `response_code`). */
  async updateTemplateCard(
    userIds: string[],
    responseCode: string,
    replaceName: string,
    signal?: AbortSignal,
  ): Promise<void> {
    const body = {
      userids: userIds,
      agentid: this.#agentId,
      response_code: responseCode,
      button: { replace_name: replaceName },
    };
    await this.#post("message/update_template_card", body, signal);
  }

  /**
   * The bytes of a media file people sent (`GET /cgi-bin/media/get?media_id=…`, a voice message's AMR),
   * at most `maxBytes`. WeCom answers a refusal as JSON `{errcode, errmsg}` with HTTP 200.
   */
  async downloadMedia(mediaId: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
    const token = await this.accessToken(signal);
    const query = new URLSearchParams({ access_token: token, media_id: mediaId });
    const data = await downloadFile(`${this.#base}/cgi-bin/media/get?${query}`, {
      what: "WeCom media download",
      maxBytes,
      signal,
    });
    const refusal = refusalOf(data);
    if (refusal) {
      if (refusal.errcode !== undefined && TOKEN_CODES.has(refusal.errcode)) this.#token.drop();
      throw this.#failure("media/get", { status: 200, body: refusal, headers: new Headers() });
    }
    return data;
  }

  /**
   * Uploads a file as temporary media (`media/upload`, multipart `media`) and sends it to the person
   * as an image or file message; resolves with the message id.
   */
  async sendFile(
    userId: string,
    file: { name: string; mimeType: string; kind: string; data: Buffer },
    signal?: AbortSignal,
  ): Promise<string> {
    const type = file.kind === "image" ? "image" : "file";
    const token = await this.accessToken(signal);
    const form = new FormData();
    form.set("media", new Blob([new Uint8Array(file.data)], { type: file.mimeType }), file.name);
    const query = new URLSearchParams({ access_token: token, type });
    const response = await requestJson(`${this.#base}/cgi-bin/media/upload?${query}`, {
      body: form,
      timeoutMs: 120_000,
      ...(signal ? { signal } : {}),
    });
    const reply = replyOf(response.body);
    const mediaId = (response.body as { media_id?: unknown } | undefined)?.media_id;
    if (response.status !== 200 || reply.errcode !== 0 || typeof mediaId !== "string") {
      if (reply.errcode !== undefined && TOKEN_CODES.has(reply.errcode)) this.#token.drop();
      throw this.#failure("media/upload", response);
    }
    const body = { touser: userId, msgtype: type, agentid: this.#agentId, [type]: { media_id: mediaId } };
    return (await this.#post("message/send", body, signal)).msgid ?? "";
  }

  async #post(path: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<WecomReply> {
    const token = await this.accessToken(signal);
    const response = await requestJson(
      `${this.#base}/cgi-bin/${path}?access_token=${encodeURIComponent(token)}`,
      { body, ...(signal ? { signal } : {}) },
    );
    const reply = replyOf(response.body);
    if (response.status === 200 && reply.errcode === 0) {
      if (reply.invaliduser) {
        throw new DeliveryError(
          `WeCom did not deliver to ${reply.invaliduser}: not a member the app can reach`,
          {
            retryable: false,
          },
        );
      }
      return reply;
    }
    if (reply.errcode !== undefined && TOKEN_CODES.has(reply.errcode)) this.#token.drop();
    throw this.#failure(path, response);
  }
}

/** A media download that is WeCom's JSON error rather than the file. */
function refusalOf(data: Buffer): WecomReply | undefined {
  if (data.length > 4096 || data[0] !== 0x7b) return undefined;
  try {
    const reply = replyOf(JSON.parse(data.toString("utf8")) as unknown);
    return typeof reply.errcode === "number" && reply.errcode !== 0 ? reply : undefined;
  } catch {
    return undefined;
  }
}
