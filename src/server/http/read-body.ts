/**
 * Reads request bodies straight from Node's IncomingMessage, with a size limit. Hono's own bodyLimit
 * first turns every request into a WHATWG Request (stream and all) just to look at its body, which
 * was a tenth of the server's time per chat message; here a body is read only when there is one,
 * and its text goes into the request's body cache, where `c.req.json()` and `c.req.text()` find it.
 */
import type { IncomingMessage } from "node:http";
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { DimsumError } from "../../errors.js";

const BODYLESS = new Set(["GET", "HEAD", "OPTIONS"]);

function tooLarge(maxBytes: number): DimsumError {
  return new DimsumError("too_large", `request body over ${maxBytes} bytes`);
}

/** The body's bytes, or a 413 as soon as it passes `maxBytes` (the rest is not read). */
function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      incoming.off("data", onData);
      incoming.off("end", onEnd);
      incoming.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        incoming.resume();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    incoming.on("data", onData);
    incoming.on("end", onEnd);
    incoming.on("error", onError);
  });
}

/**
 * Hono's bodyLimit with the contract's 413: for multipart uploads, which their route parses from the
 * WHATWG Request, and for requests made in process.
 */
export function limitBody(maxBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes);
    },
  });
}

/**
 * Limits an upload's body to `maxBytes` without reading it: a declared length over it is a 413 at
 * once; a chunked body is counted as the route reads it, and fails with the 413 past the limit.
 * (Hono's bodyLimit reads a chunked body whole into memory first, which the upload routes, checking
 * each file's own limit as it streams in, must not.)
 */
export function limitStreamedBody(maxBytes: number): MiddlewareHandler {
  return async (c, next) => {
    const raw = c.req.raw;
    if (!raw.body) return next();
    const declared = raw.headers.get("content-length");
    if (declared !== null && !raw.headers.has("transfer-encoding")) {
      if (Number(declared) > maxBytes) throw tooLarge(maxBytes);
      return next();
    }
    let size = 0;
    const counted = raw.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > maxBytes) controller.error(tooLarge(maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    c.req.raw = new Request(raw.url, {
      method: raw.method,
      headers: raw.headers,
      body: counted,
      signal: raw.signal,
      duplex: "half",
    } as RequestInit);
    return next();
  };
}

/** Limits request bodies to `maxBytes` (413 beyond) and reads them once for the handlers. */
export function readBody(maxBytes: number): MiddlewareHandler {
  const fallback = limitBody(maxBytes);
  return async (c, next) => {
    if (BODYLESS.has(c.req.method)) return next();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    // Requests made in process (app.request in tests) have no Node request under them.
    if (!incoming || incoming.readableEnded || incoming.readableDidRead) return fallback(c, next);
    const declared = Number(incoming.headers["content-length"] ?? Number.NaN);
    if (declared > maxBytes) throw tooLarge(maxBytes);
    const body = await readIncoming(incoming, maxBytes);
    // Hono keeps promises in its body cache (its type says methods); `json()` parses the cached text.
    (c.req.bodyCache as Record<string, Promise<unknown>>).text = Promise.resolve(body.toString("utf8"));
    return next();
  };
}
