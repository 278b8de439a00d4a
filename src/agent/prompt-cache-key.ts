/** The prompt-cache key of a session: stable for its turns, and not the ids themselves (they leave the machine). */
import { createHash } from "node:crypto";

/** `dimsum-` and 24 hex digits of a hash of the person and the session. */
export function promptCacheKey(ref: { userId: string; sessionId: string }): string {
  const digest = createHash("sha256").update(`${ref.userId}\u0000${ref.sessionId}`).digest("hex");
  return `dimsum-${digest.slice(0, 24)}`;
}
