/**
 * The API's error shape, `{"error": {"code", "message", "issues"?}}`, and the mapping from anything
 * thrown in a handler (our HttpError, Hono's HTTPException, team errors carrying a code) to it.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

export type ApiErrorCode =
  | "invalid"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "rate_limited"
  | "unavailable"
  | "internal";

export interface ValidationIssue {
  path: string;
  message: string;
}

export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string; issues?: ValidationIssue[] };
}

/** Thrown by handlers and middleware; becomes a JSON error response with this status. */
export class HttpError extends Error {
  readonly status: ContentfulStatusCode;
  readonly code: ApiErrorCode;
  readonly issues: ValidationIssue[] | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: ContentfulStatusCode,
    code: ApiErrorCode,
    message: string,
    extra: { issues?: ValidationIssue[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.code = code;
    this.issues = extra.issues;
    this.headers = extra.headers;
  }
}

/** Status for each error code a team facade error may carry (`TeamError.code` and DimsumError codes). */
const statusByCode: Record<string, ContentfulStatusCode> = {
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
  config: 503,
  auth: 502,
  provider_unavailable: 502,
  timeout: 504,
};

function apiCodeFor(status: number): ApiErrorCode {
  switch (status) {
    case 400:
      return "invalid";
    case 401:
      return "unauthenticated";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 413:
      return "too_large";
    case 429:
      return "rate_limited";
    default:
      return status >= 500 ? (status === 500 ? "internal" : "unavailable") : "invalid";
  }
}

/** Maps a thrown value to an HttpError; undefined for unexpected errors (bugs → 500, logged). */
export function toHttpError(err: unknown): HttpError | undefined {
  if (err instanceof HttpError) return err;
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    const message = err.status === 413 ? "request body too large" : err.message || "bad request";
    return new HttpError(status, apiCodeFor(status), message);
  }
  if (err instanceof Error && "code" in err && typeof err.code === "string") {
    const status = statusByCode[err.code];
    if (status) return new HttpError(status, apiCodeFor(status), err.message);
  }
  return undefined;
}

/** Builds the JSON error response for an HttpError. */
export function errorResponse(c: Context, error: HttpError): Response {
  const body: ApiErrorBody = { error: { code: error.code, message: error.message } };
  if (error.issues) body.error.issues = error.issues;
  for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
  return c.json(body, error.status);
}

/** Shorthands for the common denials. */
export const unauthenticated = (message = "sign in first") => new HttpError(401, "unauthenticated", message);
export const forbidden = (message = "you may not do this") => new HttpError(403, "forbidden", message);
export const notFound = (what: string) => new HttpError(404, "not_found", `${what} not found`);
export const conflict = (message: string) => new HttpError(409, "conflict", message);
