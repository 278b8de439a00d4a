/** Failures of one search engine, classified so failover knows whether to cool the engine down. */
import { DimsumError, type DimsumErrorOptions, type ErrorCode } from "../../errors.js";

/** A DimsumError that may carry how long the engine asked us to wait (HTTP 429 Retry-After). */
export class SearchEngineError extends DimsumError {
  /** Milliseconds the engine asked for before the next request; undefined when it did not say. */
  readonly retryAfterMs: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: DimsumErrorOptions & { retryAfterMs?: number } = {},
  ) {
    super(code, message, options);
    this.name = "SearchEngineError";
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** An engine that cannot be used as configured (missing key, bad URL): skipped, never cooled down. */
export function misconfigured(message: string, hint: string): SearchEngineError {
  return new SearchEngineError("config", message, { hint });
}

/** The engine answered, but not in the format its API documents. */
export function badAnswer(message: string): SearchEngineError {
  return new SearchEngineError("provider_unavailable", message, {
    hint: "the service may have changed its API or be misbehaving; another engine is tried",
  });
}

/**
 * Parses a Retry-After value (delay seconds or an HTTP date) into milliseconds from `now`.
 * Undefined when absent or unusable.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
