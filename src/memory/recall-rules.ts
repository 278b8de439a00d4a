/**
 * Recall search rules, whichever database holds the messages: a query becomes trigram phrases
 * (3+ characters, found by a trigram index as substrings, CJK included) and short substrings (a CJK
 * bigram such as 咖啡, a lone character, or short words when nothing else is left) matched over the
 * user's messages; the two ranked lists are fused with RRF, and long messages are cut to an excerpt.
 */

import { cjkBigrams, segments } from "../store/text/cjk.js";
import { STOPWORDS } from "../store/text/stopwords.js";
import { normalizeText } from "../store/text/terms.js";
import { reciprocalRankFusion } from "./ranking.js";
import type { RecallHit, RecallQuery } from "./types.js";

/** Depth of each ranked list before fusion. */
export const RECALL_CANDIDATES = 50;
const EXCERPT_CHARS = 400;
const MAX_SUBSTRINGS = 16;

/** Splits a query into trigram-index phrases (3+ characters) and short substrings. */
export function recallTerms(query: string): { phrases: string[]; substrings: string[] } {
  const phrases = new Set<string>();
  const substrings = new Set<string>();
  const shortWords: string[] = [];
  for (const segment of segments(normalizeText(query))) {
    const chars = Array.from(segment.text);
    if (segment.kind === "word") {
      if (STOPWORDS.has(segment.text)) continue;
      if (chars.length >= 3) phrases.add(segment.text);
      else shortWords.push(segment.text);
      continue;
    }
    if (chars.length === 1) substrings.add(segment.text);
    for (let i = 0; i + 3 <= chars.length; i++) phrases.add(chars.slice(i, i + 3).join(""));
    for (const bigram of cjkBigrams(segment.text)) substrings.add(bigram);
  }
  // Short Latin words are mostly noise ("my", "go"); they count only when nothing else is left.
  if (phrases.size === 0 && substrings.size === 0) for (const word of shortWords) substrings.add(word);
  return { phrases: [...phrases], substrings: [...substrings].slice(0, MAX_SUBSTRINGS) };
}

/** Cuts long message text to a window around the first matching term. */
export function excerpt(text: string, terms: readonly string[]): string {
  if (text.length <= EXCERPT_CHARS) return text;
  const lower = text.toLowerCase();
  const at = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0), text.length);
  const start = Math.max(0, Math.min(at - EXCERPT_CHARS / 4, text.length - EXCERPT_CHARS));
  const body = text.slice(start, start + EXCERPT_CHARS);
  return `${start > 0 ? "…" : ""}${body}${start + EXCERPT_CHARS < text.length ? "…" : ""}`;
}

/** The recall limit a query asks for, 1..50 (default 10). */
export function recallLimit(query: RecallQuery): number {
  return Math.max(1, Math.min(50, Math.floor(query.limit ?? 10)));
}

/** Whose sessions are searched, and which one session is left out. */
export function recallScope(query: RecallQuery): {
  owners: string[];
  exclude: string | null;
  excludeOwner: string | null;
} {
  const exclude = query.excludeSessionId ?? null;
  return {
    owners: query.owners ?? [query.userId],
    exclude,
    excludeOwner: exclude === null ? null : (query.excludeSessionOwner ?? query.userId),
  };
}

/** The best `limit` message ids of the fused lists with their scores, best first. */
export function fuseRecall(lists: readonly string[][], limit: number): Array<[string, number]> {
  return [...reciprocalRankFusion(lists)].sort((a, b) => b[1] - a[1]).slice(0, limit);
}

/** A matched message as both backends read it. */
export interface RecallRow {
  id: number;
  session_key: string;
  role: string;
  text: string;
  created_at: number;
}

/** The hits for the fused ids, in their order, from the rows read for them. */
export function recallHits(
  fused: ReadonlyArray<[string, number]>,
  rows: readonly RecallRow[],
  terms: readonly string[],
): RecallHit[] {
  const byId = new Map(rows.map((r) => [String(r.id), r]));
  return fused.flatMap(([id, score]) => {
    const row = byId.get(id);
    if (!row) return [];
    return [
      {
        messageId: row.id,
        sessionId: row.session_key,
        role: row.role as RecallHit["role"],
        text: excerpt(row.text, terms),
        createdAt: row.created_at,
        score,
      },
    ];
  });
}

/** Who a recall search reads: the owners' sessions, but one. */
export type RecallScope = ReturnType<typeof recallScope>;

/** What one database runs for a recall search (each returns message ids, best first). */
export interface RecallQueries {
  /** Phrases of three or more characters, ranked by BM25 over trigrams. */
  phrases(phrases: string[], scope: RecallScope): Promise<Array<{ id: number }>>;
  /** Shorter pieces, by how many of them a message contains, then newest. */
  substrings(substrings: string[], scope: RecallScope): Promise<Array<{ id: number }>>;
  /** The rows of the fused ids. */
  rows(ids: number[]): Promise<RecallRow[]>;
}

/** The user's messages that best match the query, best first: both searches fused, then read. */
export async function searchRecall(query: RecallQuery, queries: RecallQueries): Promise<RecallHit[]> {
  const limit = recallLimit(query);
  const { phrases, substrings } = recallTerms(query.query);
  const scope = recallScope(query);
  const searches: Array<Promise<Array<{ id: number }>>> = [];
  if (phrases.length > 0) searches.push(queries.phrases(phrases, scope));
  if (substrings.length > 0) searches.push(queries.substrings(substrings, scope));
  const lists = (await Promise.all(searches)).map((rows) => rows.map((r) => String(r.id)));
  const fused = fuseRecall(lists, limit);
  if (fused.length === 0) return [];
  const rows = await queries.rows(fused.map(([id]) => Number(id)));
  return recallHits(fused, rows, [...phrases, ...substrings]);
}
