/**
 * Splits an answer into pieces that each fit one platform message, preferring to break between
 * paragraphs, then lines, then words, and never inside a character (surrogate pair or UTF-8 sequence).
 */
import type { MessageLimit } from "./types.js";

/** The size of `text` in the limit's unit. */
export function measure(text: string, unit: MessageLimit["unit"]): number {
  return unit === "utf8" ? Buffer.byteLength(text, "utf8") : text.length;
}

/** The longest prefix length (in UTF-16 units) of `text` that fits `max` in `unit`, on a character edge. */
function fittingPrefix(text: string, limit: MessageLimit): number {
  if (measure(text, limit.unit) <= limit.max) return text.length;
  let end = 0;
  let size = 0;
  for (const char of text) {
    const next = size + measure(char, limit.unit);
    if (next > limit.max) break;
    size = next;
    end += char.length;
  }
  return end;
}

/** A good place to cut within the first `end` units: a paragraph, line or word break past halfway. */
function breakPoint(text: string, end: number): number {
  const window = text.slice(0, end);
  const floor = Math.floor(end / 2);
  for (const separator of ["\n\n", "\n", " "]) {
    const at = window.lastIndexOf(separator);
    if (at >= floor && at > 0) return at + separator.length;
  }
  return end;
}

/** The pieces of `text`, each within `limit`; an empty text gives no pieces. */
export function splitText(text: string, limit: MessageLimit): string[] {
  if (limit.max <= 0) throw new RangeError("a message limit must be positive");
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const end = fittingPrefix(rest, limit);
    if (end === rest.length) {
      pieces.push(rest);
      break;
    }
    // A single character wider than the limit cannot be split: send it alone rather than loop.
    const cut = end === 0 ? ((rest.codePointAt(0) ?? 0) > 0xffff ? 2 : 1) : breakPoint(rest, end);
    const piece = rest.slice(0, cut).trimEnd();
    if (piece !== "") pieces.push(piece);
    rest = rest.slice(cut).replace(/^\n+/, "");
  }
  return pieces;
}

/** Cuts `text` to fit one message, marking the cut with an ellipsis (streamed previews). */
export function truncateText(text: string, limit: MessageLimit): string {
  if (measure(text, limit.unit) <= limit.max) return text;
  const room: MessageLimit = { ...limit, max: limit.max - measure("…", limit.unit) };
  return `${text.slice(0, fittingPrefix(text, room))}…`;
}
