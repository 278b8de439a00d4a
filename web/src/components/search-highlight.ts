/**
 * Showing why a message matched a search: the query's terms (as the server's FTS5 query reads them:
 * words match as prefixes of words, CJK runs anywhere), a short excerpt around the first match, and
 * the excerpt split into plain and highlighted parts for rendering as text (never as HTML).
 */

/** Inline Markdown an excerpt keeps as emphasis (its markers are dropped). */
export type InlineStyle = "strong" | "em" | "code";

/** A piece of an excerpt; `hit` pieces matched a search term; `style` is set for emphasised text. */
export interface TextPart {
  text: string;
  hit: boolean;
  style?: InlineStyle;
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

// Markers at the start of a line (headings, quotes, list bullets, code fences) say nothing in one line.
const LINE_MARKERS =
  /^[ \t]{0,3}(?:#{1,6}[ \t]+|>[ \t]?|[-*+][ \t]+|\d{1,9}[.)][ \t]+|```[^\n]*$|~~~[^\n]*$)/gm;
// `**strong**` / `__strong__`, `code`, `*em*` / `_em_`, and `[link text](url)`, not nested.
const INLINE =
  /(\*\*|__)(?=\S)(.+?)(?<=\S)\1|`([^`]+)`|(?<![\p{L}\p{N}*])\*(?=\S)([^*]+?)(?<=\S)\*(?!\*)|(?<![\p{L}\p{N}_])_(?=\S)([^_]+?)(?<=\S)_(?![\p{L}\p{N}_])|\[([^\]]+)\]\([^)\s]+\)/gu;

/**
 * A message's Markdown as one line of plain text plus the style of each UTF-16 unit, so an excerpt
 * shows `**this**` as emphasis instead of raw markers.
 */
export function inlineMarkdown(text: string): { plain: string; styles: (InlineStyle | undefined)[] } {
  const flat = text.replace(LINE_MARKERS, "").replace(/\s+/g, " ").trim();
  let plain = "";
  const styles: (InlineStyle | undefined)[] = [];
  const push = (piece: string, style: InlineStyle | undefined) => {
    plain += piece;
    for (let i = 0; i < piece.length; i++) styles.push(style);
  };
  let at = 0;
  for (const m of flat.matchAll(INLINE)) {
    push(flat.slice(at, m.index), undefined);
    if (m[2] !== undefined) push(m[2], "strong");
    else if (m[3] !== undefined) push(m[3], "code");
    else if (m[4] !== undefined) push(m[4], "em");
    else if (m[5] !== undefined) push(m[5], "em");
    else push(m[6] ?? "", undefined);
    at = m.index + m[0].length;
  }
  push(flat.slice(at), undefined);
  return { plain, styles };
}

/** Splits highlighted parts further where the style changes. */
function styled(parts: TextPart[], styles: (InlineStyle | undefined)[], offset: number): TextPart[] {
  const out: TextPart[] = [];
  let at = offset;
  for (const part of parts) {
    let start = 0;
    for (let i = 1; i <= part.text.length; i++) {
      if (i < part.text.length && styles[at + i] === styles[at + start]) continue;
      const style = styles[at + start];
      const piece = { text: part.text.slice(start, i), hit: part.hit };
      out.push(style ? { ...piece, style } : piece);
      start = i;
    }
    at += part.text.length;
  }
  return out;
}

/**
 * At most about `maxChars` of the message on one line, starting a little before the first match
 * (so the match is visible even in a long message), with its matches marked.
 */
export function searchExcerpt(text: string, query: string, maxChars = 220): TextPart[] {
  const { plain: flat, styles } = inlineMarkdown(text);
  const matcher = termMatcher(query);
  if (flat.length <= maxChars) return styled(highlightParts(flat, matcher), styles, 0);
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
  const parts = styled(highlightParts(flat.slice(start, end), matcher), styles, start);
  if (start > 0) parts.unshift({ text: ELLIPSIS, hit: false });
  if (end < flat.length) parts.push({ text: ELLIPSIS, hit: false });
  return parts;
}
