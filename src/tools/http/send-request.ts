/**
 * Sends one HTTP tool request with node:http(s). Unless private networks are allowed, the host is
 * checked by the network guard first and the socket connects only to the checked addresses.
 * Redirects are not followed: an API tool's URL should point at the final endpoint.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { DimsumError } from "../../errors.js";
import { checkUrl, type GuardDeps, pinnedLookup, type ResolvedAddress } from "../builtin/network-guard.js";

export interface HttpRequestPlan {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string;
}

export interface HttpResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body was longer than the byte limit and was cut. */
  truncated: boolean;
}

export interface SendOptions {
  signal: AbortSignal;
  allowPrivateNetwork: boolean;
  guard: GuardDeps;
  maxBytes: number;
}

const DEFAULT_HEADERS: Record<string, string> = {
  "user-agent": "dimsum-http-tool/0.1",
  accept: "application/json, text/plain;q=0.9, */*;q=0.5",
  "accept-encoding": "gzip, deflate, br",
};

/** Sends the request and reads the (decompressed) body up to `maxBytes`. */
export async function sendHttpRequest(plan: HttpRequestPlan, options: SendOptions): Promise<HttpResponse> {
  let addresses: ResolvedAddress[] | undefined;
  if (!options.allowPrivateNetwork) {
    try {
      addresses = (await checkUrl(plan.url, options.guard)).addresses;
    } catch (err) {
      if (!(err instanceof DimsumError)) throw err;
      throw new DimsumError("tool_failed", err.message, {
        hint: 'set "allowPrivateNetwork": true in the tool definition (or tools.fetch.allowPrivateNetwork in the config) to allow private addresses',
      });
    }
  }
  const res = await open(plan, addresses, options.signal);
  const { body, truncated } = await readBody(decoded(res), options.maxBytes);
  return {
    status: res.statusCode ?? 0,
    statusText: res.statusMessage ?? "",
    headers: res.headers,
    body: body.toString("utf8"),
    truncated,
  };
}

function open(plan: HttpRequestPlan, addresses: ResolvedAddress[] | undefined, signal: AbortSignal) {
  return new Promise<IncomingMessage>((resolve, reject) => {
    const send = plan.url.protocol === "https:" ? httpsRequest : httpRequest;
    const headers: Record<string, string | number> = { ...DEFAULT_HEADERS };
    for (const [name, value] of Object.entries(plan.headers)) headers[name.toLowerCase()] = value;
    if (plan.body !== undefined) headers["content-length"] = Buffer.byteLength(plan.body);
    const req = send(plan.url, {
      method: plan.method,
      headers,
      signal,
      // No pooled sockets: a kept-alive socket could lead to an address this request did not check.
      agent: false,
      ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
    });
    req.on("response", resolve);
    req.on("error", reject);
    req.end(plan.body);
  });
}

function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return res;
  // Errors reach the reader through the decoder; a premature close after truncation is expected.
  pipeline(res, decoder, () => undefined);
  return decoder;
}

function readBody(stream: Readable, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (truncated: boolean) => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(chunks, size), truncated });
      if (truncated) stream.destroy();
    };
    stream.on("data", (chunk: Buffer) => {
      if (done) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size += room;
        finish(true);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.on("end", () => finish(false));
    stream.on("error", (err) => {
      if (done) return;
      done = true;
      reject(err);
    });
    stream.on("close", () => {
      if (done) return;
      done = true;
      reject(new DimsumError("tool_failed", "The connection closed before the whole response arrived."));
    });
  });
}
