/** Retry timing for model calls: the policy, exponential backoff with full jitter, and `Retry-After`. */
import type { IncomingHttpHeaders } from "node:http";
import type { RetryPolicy } from "./types.js";

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
});

/** Fills a partial policy from the defaults, clamping nonsense (negative numbers) to something usable. */
export function resolveRetryPolicy(partial: Partial<RetryPolicy> | undefined): RetryPolicy {
  if (partial === undefined) return DEFAULT_RETRY_POLICY;
  return {
    maxRetries: Math.max(0, Math.floor(partial.maxRetries ?? DEFAULT_RETRY_POLICY.maxRetries)),
    baseDelayMs: Math.max(0, partial.baseDelayMs ?? DEFAULT_RETRY_POLICY.baseDelayMs),
    maxDelayMs: Math.max(0, partial.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs),
  };
}

/**
 * Delay before retry number `retry` (1-based). A server-given delay wins over backoff; both are capped
 * at `maxDelayMs`. Full jitter spreads clients that failed together so they do not retry together.
 */
export function retryDelayMs(
  retry: number,
  policy: RetryPolicy,
  random: () => number,
  serverDelayMs?: number,
): number {
  if (serverDelayMs !== undefined) return Math.min(Math.max(0, serverDelayMs), policy.maxDelayMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.floor(random() * ceiling);
}

/** Reads `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date); undefined if absent or unreadable. */
export function parseRetryAfter(headers: IncomingHttpHeaders, now: number = Date.now()): number | undefined {
  const ms = headers["retry-after-ms"];
  if (typeof ms === "string" && ms.trim() !== "") {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const raw = headers["retry-after"];
  if (typeof raw !== "string" || raw.trim() === "") return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(raw);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}
