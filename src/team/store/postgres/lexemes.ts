/**
 * Channel-message search on PostgreSQL: the terms of search-text.ts become tsvector lexemes as they
 * are (no second tokenizer), and a query becomes a tsquery requiring each term, words by prefix.
 * Latin diacritics are folded on both sides, as SQLite's FTS5 index does (`remove_diacritics 2`).
 */
import { documentTerms, queryTerms } from "../../search-text.js";

function fold(term: string): string {
  return term
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .normalize("NFC");
}

function quote(term: string): string {
  return `'${term.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** The distinct lexemes of a message's text, for `array_to_tsvector`. */
export function messageLexemes(text: string): string[] {
  return [
    ...new Set(
      documentTerms(text)
        .map(fold)
        .filter((t) => t !== ""),
    ),
  ];
}

/** A tsquery requiring every term of `query`; undefined when it has none. */
export function messageTsQuery(query: string): string | undefined {
  const terms = queryTerms(query)
    .map((t) => ({ ...t, term: fold(t.term) }))
    .filter((t) => t.term !== "");
  if (terms.length === 0) return undefined;
  return terms.map((t) => `${quote(t.term)}${t.prefix ? ":*" : ""}`).join(" & ");
}
