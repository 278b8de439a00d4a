/**
 * Turns text into the terms memories are indexed and searched by: NFKC, lower case, Latin accents
 * removed, English words Porter-stemmed, CJK runs as characters plus bigrams, in two FTS columns
 * weighted apart (see ftsColumns). FTS5 then only has to split on spaces, and JS knows every term it
 * will look up.
 */
import { cjkBigrams, cjkChars, hasCjk, segments } from "./cjk.js";
import { CJK_STOP_CHARS } from "./cjk-stopwords.js";
import { porterStem } from "./porter-stemmer.js";
import { STOPWORDS } from "./stopwords.js";

const LATIN_MARKS = /(\p{Script=Latin})\p{Mn}+/gu;

/** Unicode-compatibility form, lower case, accents off Latin letters (Japanese voicing marks stay). */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase().normalize("NFD").replace(LATIN_MARKS, "$1").normalize("NFC");
}

/** Every term of the text in order, as written to the FTS index (both columns together). */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const segment of segments(normalizeText(text))) {
    if (segment.kind === "word") out.push(porterStem(segment.text));
    else out.push(...cjkChars(segment.text), ...cjkBigrams(segment.text));
  }
  return out;
}

/**
 * The two FTS columns of a text: `terms` holds the strong terms (words, CJK bigrams), `chars` the weak
 * ones (single CJK characters, and bigrams starting with a hiragana, which in Japanese are mostly
 * grammar: して, を飲). Search weighs `chars` at WEAK_TERM_WEIGHT of `terms`, so a shared
 * bigram counts more than shared characters, while a question sharing no bigram with a memory
 * (我应该喝什么茶 / 喜欢喝乌龙茶) still finds it through 喝 and 茶.
 */
export interface FtsColumns {
  terms: string;
  chars: string;
}

/** How much a match in `chars` counts next to one in `terms` (calibrated on bench/cjk-memory-quality.mjs). */
export const WEAK_TERM_WEIGHT = 0.3;

/** The FTS columns for a memory's or chunk's text. */
export function ftsColumns(text: string): FtsColumns {
  const strong: string[] = [];
  const weak: string[] = [];
  for (const term of indexTerms(text)) (isWeakTerm(term) ? weak : strong).push(term);
  return { terms: strong.join(" "), chars: weak.join(" ") };
}

/**
 * True for the terms kept in the `chars` column: one CJK character, or a CJK bigram starting with a
 * hiragana (a particle or ending before the next word: を飲, に住, して). A kanji followed by hiragana
 * (使っ, 好き) is the stem of a Japanese verb or adjective and stays strong.
 */
export function isWeakTerm(term: string): boolean {
  return isSingleCjk(term) || (HIRAGANA_START.test(term) && Array.from(term).length === 2);
}

function isSingleCjk(term: string): boolean {
  return hasCjk(term) && Array.from(term).length === 1;
}

const HIRAGANA_START = /^\p{Script=Hiragana}/u;
const HIRAGANA = /^\p{Script=Hiragana}$/u;

/**
 * Distinct search terms of a query: stop words dropped (unless nothing else is left); CJK runs as
 * bigrams and single characters, leaving out characters that carry no meaning alone (CJK_STOP_CHARS,
 * any lone hiragana) and bigrams made only of those.
 */
export function queryTerms(text: string): string[] {
  const content: string[] = [];
  const all: string[] = [];
  for (const segment of segments(normalizeText(text))) {
    if (segment.kind === "word") {
      const term = porterStem(segment.text);
      all.push(term);
      if (!STOPWORDS.has(segment.text)) content.push(term);
    } else {
      const chars = cjkChars(segment.text);
      const bigrams = cjkBigrams(segment.text);
      all.push(...bigrams, ...chars);
      content.push(...bigrams.filter((b) => !Array.from(b).every((c) => CJK_STOP_CHARS.has(c))));
      content.push(...chars.filter((c) => !isStopChar(c)));
    }
  }
  return [...new Set(content.length > 0 ? content : all)];
}

function isStopChar(char: string): boolean {
  return CJK_STOP_CHARS.has(char) || HIRAGANA.test(char);
}

/**
 * Whether a text matched by a query is evidence enough to recall it. A text that shares a word or
 * a bigram with the query always is; one that shares only single characters needs two distinct
 * meaningful ones (fewer when the query has fewer) and a score within `relativeFloor` of the best
 * hit's, so 我应该喝什么茶 recalls 喜欢喝乌龙茶 (喝, 茶) but 今天股市怎么样 recalls nothing through 天 alone.
 */
export class MatchEvidence {
  readonly #strong: ReadonlySet<string>;
  readonly #chars: ReadonlySet<string>;
  readonly #needed: number;
  /** False when every hit must have shared a strong term (no weak ones in the query), or none can. */
  readonly #checks: boolean;

  constructor(
    terms: readonly string[],
    private readonly relativeFloor = WEAK_ONLY_RELATIVE_FLOOR,
  ) {
    this.#strong = new Set(terms.filter((t) => !isWeakTerm(t)));
    this.#chars = new Set(terms.filter(isSingleCjk));
    this.#needed = Math.min(2, this.#chars.size);
    // A query of kana bigrams only (すし) has nothing better to go by than them.
    this.#checks = terms.some(isWeakTerm) && (this.#strong.size > 0 || this.#chars.size > 0);
  }

  /** True when `text`, scored `score` where the best hit scored `best`, should be kept. */
  accepts(text: string, score: number, best: number): boolean {
    if (!this.#checks) return true;
    const shared = new Set<string>();
    for (const term of indexTerms(text)) {
      if (this.#strong.has(term)) return true;
      if (this.#chars.has(term)) shared.add(term);
    }
    return shared.size >= this.#needed && shared.size > 0 && score >= best * this.relativeFloor;
  }
}

/** A hit matched by single characters only must score at least this share of the best hit. */
export const WEAK_ONLY_RELATIVE_FLOOR = 0.3;

/**
 * An FTS5 MATCH expression that ORs the terms, each quoted so no term is read as syntax; weak terms
 * (isWeakTerm) are looked up in the `chars` column, the others in `terms`.
 */
export function ftsMatchExpression(terms: readonly string[]): string {
  const quote = (t: string) => `"${t.replaceAll('"', '""')}"`;
  const strong = terms.filter((t) => !isWeakTerm(t)).map(quote);
  const weak = terms.filter(isWeakTerm).map(quote);
  const parts: string[] = [];
  if (strong.length > 0) parts.push(`terms : (${strong.join(" OR ")})`);
  if (weak.length > 0) parts.push(`chars : (${weak.join(" OR ")})`);
  return parts.length === 1 ? parts[0]! : `(${parts.join(" OR ")})`;
}

/** The content terms of a text for near-duplicate checks: words and CJK bigrams, as before unigrams counted. */
export function termSet(text: string): Set<string> {
  const terms = queryTerms(text).filter((t) => !isSingleCjk(t));
  return new Set(terms.length > 0 ? terms : queryTerms(text));
}

/** |a ∩ b| / |a ∪ b|; 1 for two empty sets. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const term of a) if (b.has(term)) shared++;
  return shared / (a.size + b.size - shared);
}
