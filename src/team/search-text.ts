/**
 * Search terms for channel messages. FTS5's unicode61 tokenizer keeps a run of Chinese or Japanese
 * characters as one token, so a word inside a sentence could never match; the app therefore writes a
 * processed column where CJK runs become single characters plus overlapping bigrams (the classic CJK
 * analyser), and queries look up bigrams. Other words are kept whole and matched by prefix.
 */

// Letters and numbers in a CJK script; the lookahead keeps CJK punctuation (、。「」) out.
const CJK = String.raw`(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]`;
const WORD_CHAR = String.raw`[\p{L}\p{N}\p{M}\p{Co}]`;
const SEGMENT = new RegExp(`((?:${CJK})+)|((?:(?!${CJK})${WORD_CHAR})+)`, "gu");

interface Segment {
  cjk: boolean;
  text: string;
}

function segments(text: string): Segment[] {
  const out: Segment[] = [];
  for (const match of text.normalize("NFKC").toLowerCase().matchAll(SEGMENT)) {
    if (match[1] !== undefined) out.push({ cjk: true, text: match[1] });
    else if (match[2] !== undefined) out.push({ cjk: false, text: match[2] });
  }
  return out;
}

function bigrams(run: string): string[] {
  const chars = Array.from(run);
  if (chars.length === 1) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/** A document's search terms: words, CJK characters and CJK bigrams, in order. */
export function documentTerms(text: string): string[] {
  const terms: string[] = [];
  for (const segment of segments(text)) {
    if (segment.cjk) terms.push(...Array.from(segment.text), ...bigrams(segment.text));
    else terms.push(segment.text);
  }
  return terms;
}

/** The text written to the FTS index: the document's terms, space separated. */
export function searchDocument(text: string): string {
  return documentTerms(text).join(" ");
}

/** A query term; `prefix` terms match any term starting with them. */
export interface QueryTerm {
  term: string;
  prefix: boolean;
}

/**
 * The terms a query requires, each once: words as prefixes (`deploy` finds "deployment"), CJK runs as
 * their bigrams so 数据库 matches 数据库 and not 数 anywhere.
 */
export function queryTerms(query: string): QueryTerm[] {
  const terms = new Map<string, QueryTerm>();
  for (const segment of segments(query)) {
    if (segment.cjk) for (const gram of bigrams(segment.text)) terms.set(gram, { term: gram, prefix: false });
    else terms.set(segment.text, { term: segment.text, prefix: true });
  }
  return [...terms.values()];
}

/** An FTS5 MATCH expression requiring every query term; undefined when it has none. */
export function searchExpression(query: string): string | undefined {
  const terms = queryTerms(query);
  if (terms.length === 0) return undefined;
  return terms.map((t) => (t.prefix ? `"${t.term.replaceAll('"', '""')}"*` : `"${t.term}"`)).join(" AND ");
}
