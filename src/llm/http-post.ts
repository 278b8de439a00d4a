/**
 * One JSON POST over node:http(s) with a keep-alive agent, an optional inactivity timeout, abort, and
 * `expire()` for callers that keep their own deadlines (model calls: see call-limits.ts).
 * node:http rather than global fetch: fetch keeps a one-shot CLI alive ~100 ms longer at exit.
 */
import http, { type ClientRequest, type IncomingMessage } from "node:http";
import type https from "node:https";

// Node's agents pool sockets per host:port, so one agent per scheme is one pool per origin.
// Idle pooled sockets are unref'd by Node, so they never hold the process open.
const httpAgent = new http.Agent({ keepAlive: true });
let httpsTransport: { https: typeof https; agent: https.Agent } | undefined;

/** node:https and its agent, loaded by the first https request (TLS costs a few ms of a cold start). */
function httpsOnce(): { https: typeof https; agent: https.Agent } {
  if (!httpsTransport) {
    const https = process.getBuiltinModule("node:https");
    httpsTransport = { https, agent: new https.Agent({ keepAlive: true }) };
  }
  return httpsTransport;
}

/** Why we tore a request down ourselves; a socket error alone cannot tell these apart. */
export type TeardownCause = "timeout" | "aborted";

export interface PostOptions {
  signal?: AbortSignal | undefined;
  /**
   * Socket inactivity limit: covers connect, waiting for headers, and gaps between body chunks. Any
   * byte resets it, keep-alive comments included; 0 or absent means none.
   */
  timeoutMs?: number;
}

/** An in-flight POST. Call `release()` when done with it, whatever happened. */
export interface HttpPost {
  readonly response: Promise<IncomingMessage>;
  /** Set when our timeout or the abort signal ended the request. */
  readonly cause: TeardownCause | undefined;
  /** True when the request went out on a pooled socket (a reset then usually means the server closed it idle). */
  readonly reusedSocket: boolean;
  /** Tears the request down as timed out (the caller's own deadline fired). */
  expire(): void;
  /** Removes listeners, and destroys the socket unless the response was read to the end. */
  release(): void;
}

/** Sends `body` (already serialised) and resolves with the response once its headers arrive. */
export function sendPost(
  url: URL,
  headers: Record<string, string>,
  body: string,
  options: PostOptions,
): HttpPost {
  const { signal, timeoutMs } = options;
  const secure = url.protocol === "https:" ? httpsOnce() : undefined;
  let cause: TeardownCause | undefined;
  let complete = false;
  let released = false;

  const req: ClientRequest = (secure?.https ?? http).request(url, {
    method: "POST",
    headers,
    agent: secure?.agent ?? httpAgent,
  });

  const teardown = (why: TeardownCause) => {
    if (complete || cause !== undefined) return;
    cause = why;
    req.destroy();
  };
  const onAbort = () => teardown("aborted");
  signal?.addEventListener("abort", onAbort, { once: true });
  if (timeoutMs !== undefined && timeoutMs > 0) req.setTimeout(timeoutMs, () => teardown("timeout"));

  let responded = false;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    // Stays attached after the response so a late socket error is never unhandled.
    req.on("error", reject);
    req.on("response", (res) => {
      responded = true;
      res.once("end", () => {
        complete = true;
      });
      resolve(res);
    });
    // Safety net: a request torn down before any response must still settle the promise.
    req.on("close", () => {
      if (!responded) reject(new Error(cause === undefined ? "socket closed" : `request ${cause}`));
    });
  });
  // The caller may never await (e.g. it was aborted first); keep the rejection handled.
  response.catch(() => undefined);

  req.end(body);

  return {
    response,
    get cause() {
      return cause;
    },
    get reusedSocket() {
      return req.reusedSocket;
    },
    expire() {
      teardown("timeout");
    },
    release() {
      if (released) return;
      released = true;
      signal?.removeEventListener("abort", onAbort);
      if (!complete) req.destroy();
    },
  };
}

/** Reads a (small) error body as text; bytes past `limit` are drained, not kept, so the socket can be reused. */
export async function readBodyText(res: IncomingMessage, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    if (size >= limit) continue;
    chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).subarray(0, limit).toString("utf8");
}
