/**
 * Errors are values with a stable code, a message saying what happened and a hint saying what to do.
 * Codes group by who can fix them: the user's configuration, the provider, the model, a tool, or us.
 */
export type ErrorCode =
  | "config" // bad or missing configuration: the user fixes a setting
  | "auth" // provider rejected the key (401/403)
  | "rate_limit" // 429 after retries
  | "provider_unavailable" // 5xx, unreachable host, dropped connection after retries
  | "bad_request" // 400 and other 4xx: the request was wrong
  | "timeout"
  | "aborted"
  | "tool_args" // the model produced arguments that do not fit the schema
  | "tool_failed"
  | "output_invalid" // the final answer does not follow the requested JSON Schema, even corrected once
  // Refusals and state problems of the domain (team, accounts, schedules, connectors, knowledge):
  | "invalid" // the input is wrong
  | "unauthenticated" // who is asking is unknown: sign in
  | "forbidden" // the caller may not do this
  | "not_found" // the thing asked for does not exist (or the caller may not know it does)
  | "conflict" // the request clashes with the current state
  | "too_large" // the input is over a size limit
  | "rate_limited" // the caller asked too often
  | "unavailable" // the feature is not enabled here
  | "internal";

/** A problem with one field of the input (validation). */
export interface ErrorIssue {
  path: string;
  message: string;
}

export interface DimsumErrorOptions {
  hint?: string;
  status?: number;
  retryable?: boolean;
  cause?: unknown;
  /** Which fields of the input were wrong (code `invalid`). */
  issues?: ErrorIssue[];
  /** When the caller may try again (code `rate_limited`). */
  retryAfterSeconds?: number;
}

/** The one error type Dimsum raises or reports; `code` is stable, `message` is for people. */
export class DimsumError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly issues: ErrorIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(code: ErrorCode, message: string, options: DimsumErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DimsumError";
    this.code = code;
    this.hint = options.hint;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
    this.issues = options.issues;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** One line for a terminal: the cause, then what to do about it. */
  toLine(): string {
    return this.hint ? `${this.message} (${this.hint})` : this.message;
  }
}

/** Turns anything thrown into a DimsumError, keeping DimsumErrors as they are. */
export function toDimsumError(err: unknown, fallback: ErrorCode = "internal"): DimsumError {
  if (err instanceof DimsumError) return err;
  if (err instanceof Error && err.name === "AbortError") {
    return new DimsumError("aborted", "The run was aborted.", { cause: err });
  }
  const message = err instanceof Error ? err.message : String(err);
  return new DimsumError(fallback, message, { cause: err });
}

const REFUSALS = new Set<ErrorCode>(["invalid", "unauthenticated", "forbidden", "not_found", "conflict"]);

/** True for a refused operation (bad input, no right, missing thing, clash): the caller's to fix. */
export function isRefusal(err: unknown): err is DimsumError {
  return err instanceof DimsumError && REFUSALS.has(err.code);
}

function refusal(code: ErrorCode, message: string, hint: string | undefined): DimsumError {
  return new DimsumError(code, message, hint === undefined ? {} : { hint });
}

/** The input is wrong. */
export function invalid(message: string, hint?: string): DimsumError {
  return refusal("invalid", message, hint);
}

/** The caller may not do this. */
export function forbidden(message: string, hint?: string): DimsumError {
  return refusal("forbidden", message, hint);
}

/** The thing asked for does not exist. */
export function notFound(message: string, hint?: string): DimsumError {
  return refusal("not_found", message, hint);
}

/** The request clashes with the current state (duplicate id, wrong state). */
export function conflict(message: string, hint?: string): DimsumError {
  return refusal("conflict", message, hint);
}

/** The feature is not enabled on this server or in this process. */
export function unavailable(message: string, hint?: string): DimsumError {
  return refusal("unavailable", message, hint);
}
