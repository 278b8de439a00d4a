/**
 * Turns text into the terms memories are indexed and searched by: NFKC, lower case, Latin accents
 * removed, English words Porter-stemmed, CJK runs as characters plus bigrams (index) or bigrams
 * (query). FTS5 then only has to split on spaces, and JS knows every term it will look up.
 */
import { cjkBigrams, cjkChars, segments } from "./cjk.js";
import { porterStem } from "./porter-stemmer.js";
import { STOPWORDS } from "./stopwords.js";

const LATIN_MARKS = /(\p{Script=Latin})\p{Mn}+/gu;

/** Unicode-compatibility form, lower case, accents off Latin letters (Japanese voicing marks stay). */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toLowerCase().normalize("NFD").replace(LATIN_MARKS, "$1").normalize("NFC");
}

/** Every term of the text in order, as written to the FTS index. */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const segment of segments(normalizeText(text))) {
    if (segment.kind === "word") out.push(porterStem(segment.text));
    else out.push(...cjkChars(segment.text), ...cjkBigrams(segment.text));
  }
  return out;
}

/** The FTS document for a memory's text. */
export function ftsDocument(text: string): string {
  return indexTerms(text).join(" ");
}

/**
 * Distinct search terms of a query: stop words dropped (unless nothing else is left), CJK runs as
 * bigrams so 咖啡 matches as a word rather than as 咖 or 啡 anywhere; a lone CJK character stays.
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
      const pieces = Array.from(segment.text).length === 1 ? [segment.text] : cjkBigrams(segment.text);
      all.push(...pieces);
      content.push(...pieces);
    }
  }
  return [...new Set(content.length > 0 ? content : all)];
}

/** An FTS5 MATCH expression that ORs the terms, each quoted so no term is read as syntax. */
export function ftsMatchExpression(terms: readonly string[]): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/** The content terms of a text as a set, for near-duplicate checks. */
export function termSet(text: string): Set<string> {
  return new Set(queryTerms(text));
}

/** |a ∩ b| / |a ∪ b|; 1 for two empty sets. */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let shared = 0;
  for (const term of a) if (b.has(term)) shared++;
  return shared / (a.size + b.size - shared);
}
