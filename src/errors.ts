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
  | "internal";

export interface DimsumErrorOptions {
  hint?: string;
  status?: number;
  retryable?: boolean;
  cause?: unknown;
}

/** The one error type Dimsum raises or reports; `code` is stable, `message` is for people. */
export class DimsumError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly status: number | undefined;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: DimsumErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "DimsumError";
    this.code = code;
    this.hint = options.hint;
    this.status = options.status;
    this.retryable = options.retryable ?? false;
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
