/**
 * Where a conversation may be cut without breaking what providers require: a cut lands right before a
 * `user` message (so a turn stays whole) and never between an assistant tool call and a result that
 * answers it, even when a user message was interleaved between the two.
 */
import type { Message } from "../../llm/types.js";
import { isTurnContext } from "../turn-context.js";
import { defaultTokenCounter, estimateMessageTokens, type TokenCounter } from "./tokens.js";

/** Ascending indices `i > 0` such that `messages.slice(i)` starts a whole turn with all tool pairs intact. */
export function legalCutPoints(messages: readonly Message[]): number[] {
  const lastAnswerAt = lastResultIndexByCall(messages);
  const cuts: number[] = [];
  // reach = the latest index holding a result for any call made before position i.
  let reach = -1;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    // A turn context belongs to the user message before it: never cut between the two.
    if (i > 0 && message?.role === "user" && !isTurnContext(message) && reach < i) cuts.push(i);
    const answeredAt = lastAnswerAt[i] ?? -1;
    if (answeredAt > reach) reach = answeredAt;
  }
  return cuts;
}

/** For each message index, the index of the last tool result answering a call in it (-1 if none). */
function lastResultIndexByCall(messages: readonly Message[]): number[] {
  const result = new Array<number>(messages.length).fill(-1);
  // Ids are looked up against the most recent call so providers that reuse ids per turn still pair up.
  const callAt = new Map<string, number>();
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i];
    if (message === undefined) continue;
    if (message.role === "assistant") {
      for (const part of message.content) if (part.type === "tool_call") callAt.set(part.id, i);
    } else if (message.role === "tool") {
      const at = callAt.get(message.toolCallId);
      if (at !== undefined) result[at] = i;
    }
  }
  return result;
}

/** Token estimate of every message, and suffix sums: `suffix[i]` = tokens of `messages.slice(i)`. */
export function suffixTokens(
  messages: readonly Message[],
  counter: TokenCounter = defaultTokenCounter,
): { perMessage: number[]; suffix: number[] } {
  const perMessage = messages.map((m) => estimateMessageTokens(m, counter));
  const suffix = new Array<number>(messages.length + 1).fill(0);
  for (let i = messages.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + (perMessage[i] ?? 0);
  return { perMessage, suffix };
}

/**
 * The earliest legal cut whose tail fits `budget`; when none fits, the latest legal cut (the smallest
 * whole tail); 0 when the whole list fits or no legal cut exists.
 */
export function chooseCut(cuts: readonly number[], suffix: readonly number[], budget: number): number {
  if ((suffix[0] ?? 0) <= budget || cuts.length === 0) return 0;
  for (const cut of cuts) if ((suffix[cut] ?? 0) <= budget) return cut;
  return cuts[cuts.length - 1] ?? 0;
}
