/**
 * Request signing for the generic webhook, both ways: `X-Dimsum-Timestamp: <unix seconds>` and
 * `X-Dimsum-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>`. The timestamp is
 * signed with the body, so a captured request cannot be replayed later with a fresh timestamp, and
 * one outside the tolerance (5 minutes) is refused.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-dimsum-signature";
export const TIMESTAMP_HEADER = "x-dimsum-timestamp";
export const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, "utf8");
  const right = Buffer.from(b, "utf8");
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** The signature header value for a body sent at `timestamp` (unix seconds). */
export function signBody(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex")}`;
}

/** Both headers for an outbound request signed now. */
export function signedHeaders(secret: string, body: string, now: number): Record<string, string> {
  const timestamp = String(Math.floor(now / 1000));
  return { [TIMESTAMP_HEADER]: timestamp, [SIGNATURE_HEADER]: signBody(secret, timestamp, body) };
}

/** Why a signed request is refused, or undefined when it is genuine and fresh. */
export function checkSignature(
  secret: string,
  headers: Record<string, string | undefined>,
  body: string,
  now: number,
): string | undefined {
  const timestamp = headers[TIMESTAMP_HEADER];
  const signature = headers[SIGNATURE_HEADER];
  if (!timestamp || !signature) return `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header`;
  if (!/^\d{1,12}$/.test(timestamp)) return `${TIMESTAMP_HEADER} is not unix seconds`;
  if (!constantTimeEqual(signature, signBody(secret, timestamp, body))) return "signature mismatch";
  if (Math.abs(now - Number(timestamp) * 1000) > SIGNATURE_TOLERANCE_MS) {
    return "timestamp outside the 5-minute window (replayed request or wrong clock)";
  }
  return undefined;
}
