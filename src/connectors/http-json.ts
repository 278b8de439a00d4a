/**
 * JSON over HTTP for platform APIs, with failures sorted for the outbox: connection errors, timeouts,
 * 5xx, 408 and 429 are worth retrying; other 4xx are not.
 */
import { DeliveryError } from "./types.js";

export interface JsonResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
}

export interface JsonRequest {
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  headers?: Record<string, string>;
  /** Sent as is when a string (already serialised) or FormData (multipart), else as JSON. */
  body?: unknown;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 15_000;

function describe(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = (cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ECONNRESET") return "connection reset";
  if (code === "ENOTFOUND") return "host not found";
  if (err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError")) return "timed out";
  return cause instanceof Error ? cause.message : String(cause);
}

/** True for statuses a later attempt may get past. */
export function retryableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Sends one request; throws DeliveryError (retryable) when the server could not be reached. */
export async function requestJson(url: string, request: JsonRequest = {}): Promise<JsonResponse> {
  const timeout = AbortSignal.timeout(request.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
  const headers: Record<string, string> = { accept: "application/json", ...request.headers };
  let body: string | FormData | undefined;
  // A multipart upload: fetch writes the boundary into the content type.
  if (request.body instanceof FormData) body = request.body;
  else if (request.body !== undefined) {
    body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
    headers["content-type"] ??= "application/json; charset=utf-8";
  }
  let response: Response;
  let text: string;
  try {
    response = await fetch(url, { method: request.method ?? "POST", headers, body, signal });
    text = await response.text();
  } catch (err) {
    if (request.signal?.aborted) throw err;
    throw new DeliveryError(`${new URL(url).host} unreachable: ${describe(err)}`, {
      retryable: true,
      cause: err,
    });
  }
  let parsed: unknown = text;
  try {
    parsed = text === "" ? undefined : (JSON.parse(text) as unknown);
  } catch {
    // Not JSON (a proxy's error page): keep the text for the error message.
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

/** Seconds of a `Retry-After` header as milliseconds, if present. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (!value) return undefined;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** A short, single-line excerpt of an error body for messages and logs. */
export function bodyExcerpt(body: unknown): string {
  const text = typeof body === "string" ? body : JSON.stringify(body ?? "");
  return text.replace(/\s+/g, " ").slice(0, 200);
}

/** A platform's JSON reply read as `T`: the body when it is an object, else `{}`. */
export function replyObject<T extends object>(body: unknown): T {
  return (typeof body === "object" && body !== null ? body : {}) as T;
}

/** What a platform's API said about a failed call. */
export interface ApiVerdict {
  /** The API's own code and message ("errcode 40014: invalid token"); else an excerpt of the body is shown. */
  said: string | undefined;
  /** The API's code says a later try may pass (busy, rate limited, a stale token). */
  retryableCode: boolean;
  /** The wait the platform asks for, when it says so other than in Retry-After. */
  retryAfterMs?: number | undefined;
}

/**
 * A failed platform API call, worded `<platform> <what> failed (HTTP <status>, <detail>)`: retryable
 * for a retryable status or code, waiting what the platform asks (or its Retry-After).
 */
export function apiFailure(
  platform: string,
  what: string,
  response: JsonResponse,
  verdict: ApiVerdict,
): DeliveryError {
  const detail = verdict.said ?? bodyExcerpt(response.body);
  return new DeliveryError(`${platform} ${what} failed (HTTP ${response.status}, ${detail})`, {
    retryable: retryableStatus(response.status) || verdict.retryableCode,
    retryAfterMs: verdict.retryAfterMs ?? retryAfterMs(response.headers),
  });
}
