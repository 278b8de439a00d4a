/**
 * HTTP plumbing shared by the tools that talk to the network (fetch_url, HTTP tools, web search):
 * a request pinned to addresses the SSRF guard checked, decompression, and a size-capped body read.
 */
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from "node:http";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { DimsumError } from "../../errors.js";
import { pinnedLookup, type ResolvedAddress } from "../builtin/network-guard.js";

export interface PinnedRequest {
  url: URL;
  method: string;
  headers: OutgoingHttpHeaders;
  body?: string;
}

/**
 * Sends a request that can only connect to `addresses` (when given) and never reuses a pooled socket,
 * which could lead to an address this request did not check. Resolves with the response head.
 */
export function sendPinnedRequest(
  plan: PinnedRequest,
  addresses: ResolvedAddress[] | undefined,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  return new Promise<IncomingMessage>((resolve, reject) => {
    // node:https (TLS) loads on first use: it costs a few ms of every cold start otherwise.
    const send =
      plan.url.protocol === "https:" ? process.getBuiltinModule("node:https").request : httpRequest;
    const headers: OutgoingHttpHeaders = { ...plan.headers };
    if (plan.body !== undefined) headers["content-length"] = Buffer.byteLength(plan.body);
    const req = send(plan.url, {
      method: plan.method,
      headers,
      signal,
      agent: false,
      ...(addresses ? { lookup: pinnedLookup(addresses) } : {}),
    });
    req.on("response", resolve);
    req.on("error", reject);
    req.end(plan.body);
  });
}

/** The decompressed body stream of a response (gzip, deflate, br). */
export function decodedBody(res: IncomingMessage): Readable {
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

/** Reads at most `maxBytes` (after decompression), then stops the download and says it was cut. */
export function readCappedBody(
  stream: Readable,
  maxBytes: number,
): Promise<{ body: Buffer; truncated: boolean }> {
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
      reject(
        new DimsumError("tool_failed", "The connection closed before the whole response arrived.", {
          hint: "try again",
        }),
      );
    });
  });
}
