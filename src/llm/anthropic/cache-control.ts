/**
 * Anthropic prompt-cache breakpoints. Anthropic caches only prefixes that end at a block marked
 * `cache_control` (at most four per request), so a request marks: the last tool, the system prompt,
 * the message the previous call of the conversation ended with (it reads what that call wrote) and
 * the last message (it writes the prefix the next call reads).
 * The quirk `promptCache: false` leaves requests unmarked, for proxies that reject the field.
 */
import type { CacheTtl, ModelSpec } from "../types.js";
import type { AnthropicCacheControl, AnthropicMessage, AnthropicRequestBody } from "./wire-types.js";

/** The API's limit on breakpoints per request. */
export const MAX_BREAKPOINTS = 4;

function marker(ttl: CacheTtl | undefined): AnthropicCacheControl {
  return ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
}

/**
 * The index of the user message the previous call ended with: the one right before the last
 * assistant message (a tool round's results, or the last turn's question). Undefined without one.
 */
function previousEnd(messages: AnthropicMessage[]): number | undefined {
  for (let i = messages.length - 1; i > 0; i--) {
    if (messages[i]?.role === "assistant") return messages[i - 1]?.role === "user" ? i - 1 : undefined;
  }
  return undefined;
}

/** Marks the last block of a user message; assistant blocks (thinking among them) are never marked. */
function markMessage(message: AnthropicMessage | undefined, control: AnthropicCacheControl): boolean {
  if (message?.role !== "user") return false;
  const last = message.content.at(-1);
  if (!last) return false;
  last.cache_control = control;
  return true;
}

/** Adds the breakpoints to a built request body, in place. */
export function addCacheBreakpoints(body: AnthropicRequestBody, model: ModelSpec): void {
  if (model.quirks?.promptCache === false) return;
  const control = marker(model.cacheTtl);
  let left = MAX_BREAKPOINTS;
  const lastTool = body.tools?.at(-1);
  if (lastTool) {
    lastTool.cache_control = control;
    left--;
  }
  if (body.system !== undefined && body.system !== "") {
    const blocks =
      typeof body.system === "string" ? [{ type: "text" as const, text: body.system }] : body.system;
    const lastBlock = blocks.at(-1);
    if (lastBlock) {
      lastBlock.cache_control = control;
      body.system = blocks;
      left--;
    }
  }
  const lastIndex = body.messages.length - 1;
  const previous = previousEnd(body.messages);
  if (previous !== undefined && previous !== lastIndex && left > 1) {
    if (markMessage(body.messages[previous], control)) left--;
  }
  if (left > 0) markMessage(body.messages[lastIndex], control);
}
