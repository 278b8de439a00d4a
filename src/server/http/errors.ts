/**
 * The server edge of the one error type: the API's error shape, `{"error": {"code", "message",
 * "issues"?}}`, and the only map from DimsumError codes to HTTP status. Handlers and middleware throw
 * DimsumError (or Hono's HTTPException); `toApiError` turns anything thrown into one.
 */
import { RequestError } from "@hono/node-server";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { DimsumError, type ErrorCode, type ErrorIssue } from "../../errors.js";

export type ValidationIssue = ErrorIssue;

export interface ApiErrorBody {
  error: { code: ErrorCode; message: string; issues?: ValidationIssue[] };
}

/** HTTP status per error code: the one place this mapping exists. */
const STATUS: Record<ErrorCode, ContentfulStatusCode> = {
  invalid: 400,
  bad_request: 400,
  tool_args: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  rate_limit: 429,
  internal: 500,
  unavailable: 501,
  auth: 502,
  provider_unavailable: 502,
  tool_failed: 502,
  output_invalid: 502,
  // The server is not set up for this yet (no model chosen, a key missing): an operator fixes it.
  config: 503,
  timeout: 504,
  aborted: 499 as ContentfulStatusCode,
};

/** The status an error code is answered with. */
export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS[code];
}

function codeOfStatus(status: number): ErrorCode {
  const found = (Object.entries(STATUS) as Array<[ErrorCode, number]>).find(([, s]) => s === status);
  return found ? found[0] : status >= 500 ? "internal" : "invalid";
}

/** Maps a thrown value to a DimsumError; undefined for unexpected errors (bugs → 500, logged). */
export function toApiError(err: unknown): DimsumError | undefined {
  if (err instanceof DimsumError) return err.code === "internal" ? undefined : err;
  if (err instanceof HTTPException) {
    // A 5xx raised by middleware is ours to explain in the log, not the caller's to read.
    if (err.status >= 500) return undefined;
    const message = err.status === 413 ? "request body too large" : err.message || "bad request";
    return new DimsumError(codeOfStatus(err.status), message);
  }
  return undefined;
}

/** Builds the JSON error response: message and hint in one line, field issues, Retry-After. */
export function errorResponse(c: Context, error: DimsumError): Response {
  const body: ApiErrorBody = { error: { code: error.code, message: error.toLine() } };
  if (error.issues) body.error.issues = error.issues;
  if (error.retryAfterSeconds !== undefined) c.header("Retry-After", String(error.retryAfterSeconds));
  return c.json(body, statusOf(error.code));
}

/** The answer to an unexpected error: no details, which are in the server log. */
export function internalError(): DimsumError {
  return new DimsumError("internal", "internal server error; see the server log");
}

/** The JSON body of an error, for answers written outside Hono (before routing, raw sockets). */
export function errorJson(error: DimsumError): string {
  const body: ApiErrorBody = { error: { code: error.code, message: error.toLine() } };
  return JSON.stringify(body);
}

const RAW_HEADERS = {
  "content-type": "application/json; charset=UTF-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

/**
 * The answer to a request that failed before it reached the app: the node adapter could not build a
 * Request from it (a missing or invalid Host header, a malformed target) → 400 naming the problem;
 * anything else → 500 with no internals, logged once by `logUnexpected`.
 */
export function beforeRoutingErrorResponse(err: unknown, logUnexpected: (err: unknown) => void): Response {
  if (err instanceof RequestError) {
    const error = new DimsumError("bad_request", `bad request: ${err.message}`, {
      hint: "send a Host header naming this server",
    });
    return new Response(errorJson(error), { status: 400, headers: RAW_HEADERS });
  }
  logUnexpected(err);
  return new Response(errorJson(internalError()), { status: 500, headers: RAW_HEADERS });
}

/** The caller has not signed in (or the credentials are no longer valid). */
export function unauthenticated(message = "sign in first"): DimsumError {
  return new DimsumError("unauthenticated", message);
}
