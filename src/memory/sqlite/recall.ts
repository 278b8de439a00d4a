/**
 * Recall search: a user's own past messages, across all of their sessions. `messages_fts` indexes
 * message text by trigrams (kept in sync by triggers), which finds any substring of three or more
 * characters, CJK included. Shorter pieces (a CJK bigram such as 咖啡) are matched as substrings
 * over the user's messages. Both lists are fused with RRF.
 */
import type { Database, Statement } from "better-sqlite3";
import { reciprocalRankFusion } from "../ranking.js";
import { cjkBigrams, segments } from "../text/cjk.js";
import { STOPWORDS } from "../text/stopwords.js";
import { normalizeText } from "../text/terms.js";
import type { RecallHit, RecallQuery } from "../types.js";

const CANDIDATES = 50;
const EXCERPT_CHARS = 400;
const MAX_SUBSTRINGS = 16;

interface HitRow {
  id: number;
  session_key: string;
  role: string;
  text: string;
  created_at: number;
}

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
function excerpt(text: string, terms: readonly string[]): string {
  if (text.length <= EXCERPT_CHARS) return text;
  const lower = text.toLowerCase();
  const at = Math.min(...terms.map((t) => lower.indexOf(t)).filter((i) => i >= 0), text.length);
  const start = Math.max(0, Math.min(at - EXCERPT_CHARS / 4, text.length - EXCERPT_CHARS));
  const body = text.slice(start, start + EXCERPT_CHARS);
  return `${start > 0 ? "…" : ""}${body}${start + EXCERPT_CHARS < text.length ? "…" : ""}`;
}

/** Recall search statements for one connection. */
export class RecallSearch {
  private readonly substringStatements = new Map<
    number,
    Statement<Array<string | number | null>, { id: number }>
  >();
  private readonly phraseStatement;
  private readonly rowsById;

  constructor(private readonly db: Database) {
    this.phraseStatement = db.prepare<[string, string, string | null, string | null, number], { id: number }>(
      `SELECT m.id AS id FROM messages_fts f JOIN messages m ON m.id = f.rowid JOIN sessions s ON s.id = m.session_id
       WHERE messages_fts MATCH ? AND s.user_id IN (SELECT value FROM json_each(?))
         AND NOT (s.user_id IS ? AND s.session_key IS ?)
       ORDER BY bm25(messages_fts) LIMIT ?`,
    );
    this.rowsById = db.prepare<[string], HitRow>(
      `SELECT m.id, s.session_key, m.role, f.text, m.created_at
       FROM messages m JOIN sessions s ON s.id = m.session_id JOIN messages_fts f ON f.rowid = m.id
       WHERE m.id IN (SELECT value FROM json_each(?))`,
    );
  }

  /** The user's messages that best match the query, best first. */
  search(query: RecallQuery): RecallHit[] {
    const limit = Math.max(1, Math.min(50, Math.floor(query.limit ?? 10)));
    const { phrases, substrings } = recallTerms(query.query);
    const owners = JSON.stringify(query.owners ?? [query.userId]);
    const exclude = query.excludeSessionId ?? null;
    const excludeOwner = exclude === null ? null : (query.excludeSessionOwner ?? query.userId);
    const lists: string[][] = [];
    if (phrases.length > 0) {
      const match = phrases.map((p) => `"${p.replaceAll('"', '""')}"`).join(" OR ");
      lists.push(
        this.phraseStatement.all(match, owners, excludeOwner, exclude, CANDIDATES).map((r) => String(r.id)),
      );
    }
    if (substrings.length > 0) {
      const rows = this.substringStatement(substrings.length).all(
        ...substrings,
        owners,
        excludeOwner,
        exclude,
        CANDIDATES,
      );
      lists.push(rows.map((r) => String(r.id)));
    }
    const fused = [...reciprocalRankFusion(lists)].sort((a, b) => b[1] - a[1]).slice(0, limit);
    if (fused.length === 0) return [];
    const rows = new Map(
      this.rowsById.all(JSON.stringify(fused.map(([id]) => Number(id)))).map((r) => [String(r.id), r]),
    );
    const terms = [...phrases, ...substrings];
    return fused.flatMap(([id, score]) => {
      const row = rows.get(id);
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

  /** Counts how many of the n substrings each of the user's messages contains; most first, then newest. */
  private substringStatement(n: number) {
    let statement = this.substringStatements.get(n);
    if (!statement) {
      const hits = Array.from({ length: n }, () => "(instr(lower(f.text), ?) > 0)").join(" + ");
      statement = this.db.prepare<Array<string | number | null>, { id: number }>(
        `SELECT id FROM (
           SELECT m.id AS id, ${hits} AS hits FROM sessions s JOIN messages m ON m.session_id = s.id
           JOIN messages_fts f ON f.rowid = m.id
           WHERE s.user_id IN (SELECT value FROM json_each(?)) AND NOT (s.user_id IS ? AND s.session_key IS ?))
         WHERE hits > 0 ORDER BY hits DESC, id DESC LIMIT ?`,
      );
      this.substringStatements.set(n, statement);
    }
    return statement;
  }
}
