/**
 * One HTTP exchange with a search engine over node:http(s): no redirects followed (an API that
 * redirects is misconfigured, and following would carry keys elsewhere), a body size cap, and
 * status codes turned into SearchEngineErrors that failover can act on.
 * fetch_url's network guard is deliberately not applied: engine addresses come from the user's
 * configuration, never from the model, and a self-hosted SearXNG on a private address is normal.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import type { Readable } from "node:stream";
import { decodedBody } from "../net/http-body.js";
import { badAnswer, parseRetryAfter, SearchEngineError } from "./engine-error.js";
import { cleanText } from "./markup.js";

/** Default cap on an engine's response body. */
export const DEFAULT_MAX_RESPONSE_BYTES = 2 * 1024 * 1024;

const USER_AGENT = "dimsum-web-search/0.1";
const EXCERPT_CHARS = 200;

export interface EngineRequest {
  /** Shown in error messages, e.g. "Brave Search". */
  label: string;
  url: URL;
  method: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  maxBytes?: number;
}

export interface EngineResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/** The address to show people: no user name or password, no query string. */
export function displayUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function readAll(stream: Readable, maxBytes: number, label: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        fail(badAnswer(`${label} sent a response larger than ${maxBytes} bytes.`));
        stream.destroy();
        return;
      }
      chunks.push(chunk);
    });
    stream.on("end", () => {
      if (settled) return;
      settled = true;
      resolve(Buffer.concat(chunks, size));
    });
    stream.on("error", fail);
    stream.on("close", () =>
      fail(new SearchEngineError("provider_unavailable", `${label} closed the connection mid-response.`)),
    );
  });
}

/** Sends the request and reads the whole (decompressed) body; network failures become errors. */
export function sendEngineRequest(req: EngineRequest): Promise<EngineResponse> {
  const maxBytes = req.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return new Promise<EngineResponse>((resolve, reject) => {
    // node:https (TLS) loads on first use: it costs a few ms of every cold start otherwise.
    const send = req.url.protocol === "https:" ? process.getBuiltinModule("node:https").request : httpRequest;
    const headers: Record<string, string | number> = {
      "user-agent": USER_AGENT,
      "accept-encoding": "gzip, deflate, br",
      ...req.headers,
    };
    if (req.url.username || req.url.password) {
      const user = decodeURIComponent(req.url.username);
      const pass = decodeURIComponent(req.url.password);
      headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
    }
    if (req.body !== undefined) headers["content-length"] = Buffer.byteLength(req.body);
    // Credentials travel in the header above, never in the request line.
    const target = new URL(req.url.href);
    target.username = "";
    target.password = "";
    const outgoing = send(target, { method: req.method, headers, signal: req.signal });
    outgoing.on("error", (err) => {
      if (req.signal.aborted) return reject(err);
      const code = (err as NodeJS.ErrnoException).code;
      reject(
        new SearchEngineError(
          "provider_unavailable",
          `Could not reach ${req.label} at ${displayUrl(req.url)} (${code ?? err.message}).`,
          { cause: err, hint: "check the engine's URL and the network" },
        ),
      );
    });
    outgoing.on("response", (res) => {
      readAll(decodedBody(res), maxBytes, req.label).then(
        (body) => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: body.toString("utf8") }),
        (err: unknown) => {
          res.destroy();
          reject(err);
        },
      );
    });
    outgoing.end(req.body);
  });
}

/** A short, readable reason from an error body: the API's own message when it gives one. */
export function errorExcerpt(text: string): string {
  let message: string | undefined;
  try {
    message = messageIn(JSON.parse(text));
  } catch {
    // Not JSON: fall through to the raw text.
  }
  const plain = cleanText(message ?? text);
  return plain.length > EXCERPT_CHARS ? `${plain.slice(0, EXCERPT_CHARS)}…` : plain;
}

function messageIn(value: unknown, depth = 0): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null || depth > 3) return undefined;
  const record = value as Record<string, unknown>;
  for (const key of ["detail", "error", "message", "msg"]) {
    const found = messageIn(record[key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Throws the right SearchEngineError for a non-2xx status; returns quietly for 2xx. */
export function checkStatus(label: string, url: URL, res: EngineResponse, now = Date.now()): void {
  const { status } = res;
  if (status >= 200 && status < 300) return;
  const excerpt = errorExcerpt(res.text);
  const said = excerpt ? `: ${excerpt}` : "";
  if (status === 429) {
    const header = res.headers["retry-after"];
    const retryAfterMs = parseRetryAfter(Array.isArray(header) ? header[0] : header, now);
    throw new SearchEngineError("rate_limit", `${label} is rate limiting requests (HTTP 429)${said}.`, {
      status,
      retryable: true,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      hint: "the engine is paused for a while; others are tried meanwhile",
    });
  }
  if (status === 401 || status === 403) {
    throw new SearchEngineError("auth", `${label} refused the request (HTTP ${status})${said}.`, {
      status,
      hint: "check the engine's API key or access settings",
    });
  }
  if (status >= 500) {
    throw new SearchEngineError(
      "provider_unavailable",
      `${label} had a server error (HTTP ${status})${said}.`,
      {
        status,
        retryable: true,
      },
    );
  }
  if (status >= 300 && status < 400) {
    const location = res.headers.location;
    throw new SearchEngineError(
      "bad_request",
      `${label} at ${displayUrl(url)} redirected (HTTP ${status}${location ? ` to ${location}` : ""}).`,
      { status, hint: "set the engine's base URL to the address it redirects to" },
    );
  }
  throw new SearchEngineError("bad_request", `${label} rejected the request (HTTP ${status})${said}.`, {
    status,
  });
}

/** Parses a JSON body or throws a bad-answer error naming the engine. */
export function parseJsonBody(label: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw badAnswer(`${label} answered with something that is not JSON: ${errorExcerpt(text) || "(empty)"}`);
  }
}

/** Sends the request and returns its parsed JSON body; a non-2xx status or a non-JSON answer throws. */
export async function requestEngineJson(req: EngineRequest): Promise<unknown> {
  const res = await sendEngineRequest(req);
  checkStatus(req.label, req.url, res);
  return parseJsonBody(req.label, res.text);
}
