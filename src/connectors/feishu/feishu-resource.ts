/**
 * Files and images people send to a Feishu/Lark bot, downloaded with the official SDK's
 * message-resource API (`client.im.messageResource.get`: `GET /open-apis/im/v1/messages/:message_id/
 * resources/:file_key?type=image|file`), authorised with the connector's own tenant token (one token
 * cache per connector, in memory). The SDK is loaded on the first download. Errors carry Feishu's code
 * and message, sorted like the other platform calls; the SDK's own logging is off (its error lines
 * can carry request bodies).
 */
import type { Readable } from "node:stream";
import { importExternal } from "../../import-external.js";
import { FileTooLargeError, readCapped } from "../file-download.js";
import { retryableStatus } from "../http-json.js";
import { DeliveryError } from "../types.js";

type Lark = typeof import("@larksuiteoapi/node-sdk");
type LarkClient = InstanceType<Lark["Client"]>;

/** Feishu's codes for a missing or expired access token. */
const TOKEN_CODES = new Set([99991661, 99991663]);

export interface FeishuResourceOptions {
  baseUrl: string;
  appId: string;
  appSecret: string;
  /** The connector's cached tenant token. */
  tenantToken(signal?: AbortSignal): Promise<string>;
  /** Forgets the cached token (Feishu said it expired). */
  dropToken(): void;
}

/** What a refused download answered. */
interface ResourceFailure {
  status?: number;
  code?: number;
  msg?: string;
}

const silent = { error: () => {}, warn: () => {}, info: () => {}, debug: () => {}, trace: () => {} };

/** Downloads message resources of one app. */
/** Which resource of which message to download. */
interface ResourceRequest {
  params: { type: "image" | "file" };
  path: { message_id: string; file_key: string };
}

export class FeishuResources {
  readonly #options: FeishuResourceOptions;
  #client: Promise<{ lark: Lark; client: LarkClient }> | undefined;

  constructor(options: FeishuResourceOptions) {
    this.#options = options;
  }

  #sdk(): Promise<{ lark: Lark; client: LarkClient }> {
    this.#client ??= (async () => {
      const lark = (await importExternal("@larksuiteoapi/node-sdk")) as Lark;
      const client = new lark.Client({
        appId: this.#options.appId,
        appSecret: this.#options.appSecret,
        domain: this.#options.baseUrl,
        // Tokens come from the connector (withTenantToken); the SDK keeps none of its own.
        disableTokenCache: true,
        logger: silent,
        loggerLevel: lark.LoggerLevel.error,
      });
      return { lark, client };
    })();
    return this.#client;
  }

  /** The bytes of an image or file of a message, at most `maxBytes`; throws DeliveryError or FileTooLargeError. */
  async download(
    messageId: string,
    fileKey: string,
    type: "image" | "file",
    maxBytes: number,
    signal: AbortSignal,
  ): Promise<Buffer> {
    const resource = { params: { type }, path: { message_id: messageId, file_key: fileKey } };
    try {
      return await this.#download(resource, maxBytes, signal);
    } catch (err) {
      if (!(err instanceof ExpiredToken)) throw err;
      this.#options.dropToken();
      return this.#download(resource, maxBytes, signal);
    }
  }

  /** One try; `resource` is the SDK's messageResource.get request. */
  async #download(resource: ResourceRequest, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
    const { lark, client } = await this.#sdk();
    const token = await this.#options.tenantToken(signal);
    let stream: Readable;
    try {
      const answer = await abortable(
        client.im.messageResource.get(resource, lark.withTenantToken(token)),
        signal,
      );
      const length = Number(answer.headers?.["content-length"] ?? Number.NaN);
      stream = answer.getReadableStream();
      if (Number.isFinite(length) && length > maxBytes) {
        stream.destroy();
        throw new FileTooLargeError(maxBytes);
      }
    } catch (err) {
      if (err instanceof FileTooLargeError || signal.aborted) throw err;
      const failure = await failureOf(err);
      if (failure.code !== undefined && TOKEN_CODES.has(failure.code)) throw new ExpiredToken();
      const detail =
        failure.code !== undefined
          ? `code ${failure.code}: ${failure.msg ?? ""}`
          : failure.status !== undefined
            ? `HTTP ${failure.status}`
            : "the connection failed";
      throw new DeliveryError(`Feishu file download failed (${detail})`, {
        retryable: failure.status === undefined || retryableStatus(failure.status),
      });
    }
    const stop = () => stream.destroy(new Error("timed out"));
    signal.addEventListener("abort", stop, { once: true });
    try {
      return await readCapped(stream, maxBytes);
    } catch (err) {
      if (err instanceof FileTooLargeError) throw err;
      throw new DeliveryError("Feishu file download failed: the transfer broke off", { retryable: true });
    } finally {
      signal.removeEventListener("abort", stop);
      stream.destroy();
    }
  }
}

class ExpiredToken extends Error {}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

/** The status and Feishu's code of a failed request (an axios error whose body is a stream). */
async function failureOf(err: unknown): Promise<ResourceFailure> {
  const response = (err as { response?: { status?: unknown; data?: unknown } } | undefined)?.response;
  if (!response) return {};
  const status = typeof response.status === "number" ? response.status : undefined;
  const data = response.data;
  let body: unknown = data;
  if (data && typeof data === "object" && Symbol.asyncIterator in data) {
    try {
      body = JSON.parse((await readCapped(data as AsyncIterable<Uint8Array>, 16 * 1024)).toString("utf8"));
    } catch {
      body = undefined;
    }
  }
  const reply = (typeof body === "object" && body !== null ? body : {}) as { code?: unknown; msg?: unknown };
  return {
    ...(status !== undefined ? { status } : {}),
    ...(typeof reply.code === "number" ? { code: reply.code } : {}),
    ...(typeof reply.msg === "string" ? { msg: reply.msg } : {}),
  };
}
