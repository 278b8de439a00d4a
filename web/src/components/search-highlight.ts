/**
 * Showing why a message matched a search: the query's terms (as the server's FTS5 query reads them:
 * words match as prefixes of words, CJK runs anywhere), a short excerpt around the first match, and
 * the excerpt split into plain and highlighted parts for rendering as text (never as HTML).
 */

/** A piece of an excerpt; `hit` pieces matched a search term. */
export interface TextPart {
  text: string;
  hit: boolean;
}

// Same letter classes as the server's search-text.ts, so the UI highlights what FTS5 matched.
const CJK = String.raw`(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]`;
const WORD_CHAR = String.raw`[\p{L}\p{N}\p{M}\p{Co}]`;
const SEGMENT = new RegExp(`((?:${CJK})+)|((?:(?!${CJK})${WORD_CHAR})+)`, "gu");
const ELLIPSIS = "…";
/** How much text to keep before the first match when the message has to be cut. */
const LEAD_CHARS = 50;

interface Term {
  text: string;
  cjk: boolean;
}

function termsOf(query: string): Term[] {
  const out = new Map<string, Term>();
  for (const match of query.normalize("NFKC").toLowerCase().matchAll(SEGMENT)) {
    if (match[2] !== undefined) {
      out.set(match[2], { text: match[2], cjk: false });
      continue;
    }
    const run = match[1] ?? "";
    out.set(run, { text: run, cjk: true });
    // The server matches a CJK run by its bigrams, which need not sit next to each other.
    const chars = Array.from(run);
    for (let i = 0; i + 1 < chars.length; i++) {
      const gram = chars[i]! + chars[i + 1]!;
      out.set(gram, { text: gram, cjk: true });
    }
  }
  // Longest first: the regex alternation then prefers a whole run over one of its bigrams.
  return [...out.values()].sort((a, b) => b.text.length - a.text.length);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A global regex finding the terms of `query` in text, or undefined when it has none. */
export function termMatcher(query: string): RegExp | undefined {
  const terms = termsOf(query);
  if (terms.length === 0) return undefined;
  // A word term must start a word ("deploy" finds "deployment", not "redeploy").
  const alternatives = terms.map((t) =>
    t.cjk ? escapeRegExp(t.text) : `(?<!${WORD_CHAR})${escapeRegExp(t.text)}`,
  );
  return new RegExp(alternatives.join("|"), "giu");
}

/** `text` split into plain and matching parts (adjacent parts never share a kind). */
export function highlightParts(text: string, matcher: RegExp | undefined): TextPart[] {
  if (!matcher) return text === "" ? [] : [{ text, hit: false }];
  const parts: TextPart[] = [];
  const push = (piece: string, hit: boolean) => {
    if (piece === "") return;
    const last = parts[parts.length - 1];
    if (last && last.hit === hit) last.text += piece;
    else parts.push({ text: piece, hit });
  };
  let at = 0;
  for (const match of text.matchAll(new RegExp(matcher.source, matcher.flags))) {
    push(text.slice(at, match.index), false);
    push(match[0], true);
    at = match.index + match[0].length;
  }
  push(text.slice(at), false);
  return parts;
}

function isLowSurrogate(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * At most about `maxChars` of the message on one line, starting a little before the first match
 * (so the match is visible even in a long message), with its matches marked.
 */
export function searchExcerpt(text: string, query: string, maxChars = 220): TextPart[] {
  const flat = text.replace(/\s+/g, " ").trim();
  const matcher = termMatcher(query);
  if (flat.length <= maxChars) return highlightParts(flat, matcher);
  const first = matcher ? new RegExp(matcher.source, "iu").exec(flat)?.index : undefined;
  let start = Math.max(0, Math.min((first ?? 0) - LEAD_CHARS, flat.length - maxChars));
  if (start > 0) {
    // Start at a word when one begins nearby, and never inside a surrogate pair.
    const space = flat.indexOf(" ", start);
    if (space !== -1 && space - start < 15 && (first === undefined || space < first)) start = space + 1;
    if (isLowSurrogate(flat, start)) start++;
  }
  let end = Math.min(flat.length, start + maxChars);
  if (end < flat.length && isLowSurrogate(flat, end)) end--;
  const lead = start > 0 ? ELLIPSIS : "";
  const tail = end < flat.length ? ELLIPSIS : "";
  return highlightParts(`${lead}${flat.slice(start, end)}${tail}`, matcher);
}
