/**
 * CJK handling for full-text search. Chinese and Japanese have no spaces between words, so a run of
 * CJK characters is indexed as its single characters plus overlapping bigrams (the classic CJK
 * analyser): a two-character word such as 咖啡 is then one exact term, and longer words match through
 * their bigrams.
 */

// Letters and numbers whose script is CJK; the lookahead keeps CJK punctuation (、。「」) out.
const CJK_CLASS = String.raw`(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Bopomofo}]`;
// Token characters as FTS5's unicode61 tokenizer is configured for memories (L* N* Co M*).
const WORD_CHAR = String.raw`[\p{L}\p{N}\p{M}\p{Co}]`;

/** Matches either a run of CJK characters (group 1) or a run of other word characters (group 2). */
const SEGMENT = new RegExp(`((?:${CJK_CLASS})+)|((?:(?!${CJK_CLASS})${WORD_CHAR})+)`, "gu");
const CJK_TEST = new RegExp(CJK_CLASS, "u");

export interface Segment {
  kind: "cjk" | "word";
  text: string;
}

/** Splits text into CJK runs and other words; punctuation and spaces separate segments. */
export function segments(text: string): Segment[] {
  const out: Segment[] = [];
  for (const match of text.matchAll(SEGMENT)) {
    if (match[1] !== undefined) out.push({ kind: "cjk", text: match[1] });
    else if (match[2] !== undefined) out.push({ kind: "word", text: match[2] });
  }
  return out;
}

/** True when the text contains at least one CJK letter. */
export function hasCjk(text: string): boolean {
  return CJK_TEST.test(text);
}

/** Overlapping two-character pieces of a CJK run (code points, not UTF-16 units). */
export function cjkBigrams(run: string): string[] {
  const chars = Array.from(run);
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  return out;
}

/** The single characters of a CJK run. */
export function cjkChars(run: string): string[] {
  return Array.from(run);
}
