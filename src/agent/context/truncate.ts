/**
 * The fallbacks that always succeed: cutting one oversized text to head + tail, and fitting a
 * conversation into a budget by dropping whole turns oldest-first, then shortening contents of the
 * last turn rather than breaking its structure.
 */
import type { AssistantMessage, Message, TextPart, UserContentPart } from "../../llm/types.js";
import { chooseCut, legalCutPoints, suffixTokens } from "./cut-points.js";
import { defaultTokenCounter, estimateMessageTokens, TOKEN_COSTS, type TokenCounter } from "./tokens.js";

export interface TruncatedText {
  text: string;
  /** Characters removed from the middle (0 when the text fit). */
  cutChars: number;
}

const cutNote = (chars: number) => `\n[… ${chars} characters cut …]\n`;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * Keeps the head and tail of a text with a note about the middle that was cut, so the result (note
 * included) fits `maxChars`. Both ends matter for tool output: what ran, and how it ended.
 */
export function truncateToolOutput(text: string, maxChars: number): TruncatedText {
  if (text.length <= maxChars) return { text, cutChars: 0 };
  // The note never has more digits than text.length, so sizing with it keeps the result within budget.
  const keep = Math.max(0, Math.floor(maxChars) - cutNote(text.length).length);
  let head = Math.ceil(keep / 2);
  let tail = keep - head;
  if (head > 0 && isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (tail > 0 && isLowSurrogate(text.charCodeAt(text.length - tail))) tail--;
  const cutChars = text.length - head - tail;
  return { text: text.slice(0, head) + cutNote(cutChars) + text.slice(text.length - tail), cutChars };
}

export interface TruncationResult {
  messages: Message[];
  /** Whole messages dropped from the front. */
  droppedCount: number;
  /** Messages of the kept tail whose content was shortened. */
  truncatedCount: number;
  /** False when even the shortened last turn is still over budget. */
  fits: boolean;
  /** What was done, for the trace; undefined when nothing had to change. */
  note: string | undefined;
}

/** Texts are never shortened below this; past it the message says nothing useful anyway. */
const MIN_TEXT_CHARS = 200;
const IMAGE_REMOVED = "[image removed to fit the context]";

/**
 * Fits messages into a token budget by dropping whole turns oldest-first (never splitting a turn or a
 * tool call from its results); if the last turn alone is too big, shortens its oldest tool results,
 * then texts, instead of breaking structure.
 */
export function truncateOldestFirst(
  messages: readonly Message[],
  budgetTokens: number,
  counter: TokenCounter = defaultTokenCounter,
): TruncationResult {
  const { suffix } = suffixTokens(messages, counter);
  if ((suffix[0] ?? 0) <= budgetTokens) {
    return { messages: messages.slice(), droppedCount: 0, truncatedCount: 0, fits: true, note: undefined };
  }
  const cut = chooseCut(legalCutPoints(messages), suffix, budgetTokens);
  const kept = messages.slice(cut);
  const keptTokens = suffix[cut] ?? 0;
  const shrunk =
    keptTokens > budgetTokens
      ? shrinkContents(kept, keptTokens - budgetTokens, counter)
      : { truncatedCount: 0, excess: keptTokens - budgetTokens };
  const fits = shrunk.excess <= 0;

  const done: string[] = [];
  if (cut > 0) done.push(`dropped the ${cut} oldest message${cut === 1 ? "" : "s"}`);
  if (shrunk.truncatedCount > 0) {
    done.push(
      `shortened ${shrunk.truncatedCount} message${shrunk.truncatedCount === 1 ? "" : "s"} of the last turn`,
    );
  }
  let note = `Context over its ${budgetTokens}-token budget: ${done.join(" and ") || "nothing could be removed"}.`;
  if (!fits) note += ` Still about ${shrunk.excess} tokens over.`;
  return { messages: kept, droppedCount: cut, truncatedCount: shrunk.truncatedCount, fits, note };
}

/** Shortens contents in place of `messages` (a fresh array), tool results first, oldest first. */
function shrinkContents(
  messages: Message[],
  initialExcess: number,
  counter: TokenCounter,
): { truncatedCount: number; excess: number } {
  const order = [
    ...indicesWhere(messages, (m) => m.role === "tool"),
    ...indicesWhere(messages, (m) => m.role === "assistant"),
    ...indicesWhere(messages, (m) => m.role === "user" || m.role === "system"),
  ];
  let excess = initialExcess;
  let truncatedCount = 0;
  for (const i of order) {
    if (excess <= 0) break;
    const message = messages[i];
    if (message === undefined) continue;
    const before = estimateMessageTokens(message, counter);
    const shortened = shortenMessage(message, excess, counter);
    if (shortened === message) continue;
    messages[i] = shortened;
    excess -= before - estimateMessageTokens(shortened, counter);
    truncatedCount++;
  }
  return { truncatedCount, excess };
}

function indicesWhere(messages: readonly Message[], test: (m: Message) => boolean): number[] {
  const out: number[] = [];
  messages.forEach((m, i) => {
    if (test(m)) out.push(i);
  });
  return out;
}

/** Returns the same object when nothing could be shortened. */
function shortenMessage(message: Message, excess: number, counter: TokenCounter): Message {
  let remaining = excess;
  const shortenText = (text: string): string => {
    if (remaining <= 0) return text;
    const tokens = counter.count(text);
    if (tokens === 0) return text;
    // Remove a share of characters proportional to the tokens still to save, plus room for the note.
    const toSave = Math.min(tokens, remaining + counter.count(cutNote(text.length)));
    const maxChars = Math.max(MIN_TEXT_CHARS, Math.floor((text.length * (tokens - toSave)) / tokens));
    if (maxChars >= text.length) return text;
    const cut = truncateToolOutput(text, maxChars);
    remaining -= tokens - counter.count(cut.text);
    return cut.text;
  };
  const shortenParts = <P extends UserContentPart>(parts: P[]): Array<P | TextPart> =>
    parts.map((part): P | TextPart => {
      if (remaining <= 0) return part;
      if (part.type === "image") {
        const text = part.name ? `[image ${part.name} removed to fit the context]` : IMAGE_REMOVED;
        remaining -= TOKEN_COSTS.image - counter.count(text);
        return { type: "text", text };
      }
      if (part.type === "file") {
        const text = `[file ${part.name} removed to fit the context]`;
        remaining -= estimateMessageTokens({ role: "user", content: [part] }, counter) - counter.count(text);
        return { type: "text", text };
      }
      const text = shortenText(part.text);
      return text === part.text ? part : { ...part, text };
    });

  switch (message.role) {
    case "system": {
      const content = shortenText(message.content);
      return content === message.content ? message : { ...message, content };
    }
    case "user": {
      if (typeof message.content === "string") {
        const content = shortenText(message.content);
        return content === message.content ? message : { ...message, content };
      }
      const content = shortenParts(message.content);
      return content.every((p, i) => p === message.content[i]) ? message : { ...message, content };
    }
    case "tool": {
      if (typeof message.content === "string") {
        const content = shortenText(message.content);
        return content === message.content ? message : { ...message, content };
      }
      const content = shortenParts(message.content);
      return content.every((p, i) => p === message.content[i]) ? message : { ...message, content };
    }
    case "assistant": {
      // Only unsigned visible text: tool-call arguments must stay valid JSON and signatures must still match.
      const content: AssistantMessage["content"] = message.content.map((part) => {
        if (part.type !== "text" || part.signature !== undefined || remaining <= 0) return part;
        const text = shortenText(part.text);
        return text === part.text ? part : { ...part, text };
      });
      return content.every((p, i) => p === message.content[i]) ? message : { ...message, content };
    }
  }
}
