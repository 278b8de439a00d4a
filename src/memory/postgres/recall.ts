/**
 * Recall search on PostgreSQL over `messages_recall` (migration 3: the text of user and assistant
 * messages, kept by a trigger on `messages`, folded like a query and indexed by pg_trgm). As on
 * SQLite, phrases of 3+ characters are ranked by BM25 over character trigrams (a phrase's frequency is
 * how often it occurs, a message's length its number of trigrams) and short substrings by how many
 * of them a message contains; the rules are in ../recall-rules.ts. FTS5 takes N, the average length
 * and document frequencies over every message in the file; here they cover the searched sessions
 * (the people and channels asked for), which a per-person search can read from an index.
 */
import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { RECALL_CANDIDATES, type RecallRow, type RecallScope, searchRecall } from "../recall-rules.js";
import type { RecallHit, RecallQuery } from "../types.js";

// The searched sessions: $1 owners, $2/$3 the owner and key of the session left out (or NULL).
const SCOPE = `sessions s JOIN messages_recall r ON r.session_id = s.id
  WHERE s.user_id = ANY($1::text[])
    AND NOT (s.user_id IS NOT DISTINCT FROM $2::text AND s.session_key IS NOT DISTINCT FROM $3::text)`;

/** $1, $2 and $3 of SCOPE. */
function scopeParams(scope: RecallScope): unknown[] {
  return [scope.owners, scope.excludeOwner, scope.exclude];
}

function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class PgRecall {
  constructor(private readonly db: PgDatabase) {}

  /** The user's messages that best match the query, best first. */
  search(query: RecallQuery): Promise<RecallHit[]> {
    return searchRecall(query, {
      phrases: (phrases, scope) => this.phraseSearch(scopeParams(scope), phrases),
      substrings: (substrings, scope) =>
        this.db.many<{ id: number }>(
          `SELECT id FROM (
             SELECT r.message_id AS id,
               (SELECT count(*) FROM unnest($4::text[]) AS q (p) WHERE strpos(r.folded, q.p) > 0) AS hits
             FROM ${SCOPE}) h
           WHERE hits > 0 ORDER BY hits DESC, id DESC LIMIT $5`,
          [...scopeParams(scope), substrings, RECALL_CANDIDATES],
        ),
      rows: (ids) =>
        this.db.many<RecallRow>(
          `SELECT m.id, s.session_key, m.role, r.text, m.created_at
           FROM messages_recall r JOIN messages m ON m.id = r.message_id JOIN sessions s ON s.id = m.session_id
           WHERE r.message_id = ANY($1::bigint[])`,
          [ids],
        ),
    });
  }

  /** FTS5's bm25() over trigrams for the phrases, best first; the trigram index finds candidates. */
  private phraseSearch(base: unknown[], phrases: string[]): Promise<Array<{ id: number }>> {
    const likes = phrases.map((_, i) => `r.folded LIKE $${i + 6}`).join(" OR ");
    return this.db.many<{ id: number }>(
      `WITH stats AS (
         SELECT count(*)::float8 AS n, coalesce(sum(greatest(r.chars - 2, 0)), 0)::float8 AS tokens
         FROM ${SCOPE}),
       matched AS (
         SELECT r.message_id, r.folded, greatest(r.chars - 2, 0)::float8 AS len
         FROM ${SCOPE} AND (${likes})),
       hits AS (
         SELECT m.message_id, q.p, m.len,
           ((char_length(m.folded) - char_length(replace(m.folded, q.p, ''))) / char_length(q.p))::float8 AS tf
         FROM matched m CROSS JOIN unnest($4::text[]) AS q (p) WHERE strpos(m.folded, q.p) > 0),
       df AS (SELECT p, count(*)::float8 AS df FROM hits GROUP BY p)
       SELECT h.message_id AS id,
         sum(greatest(ln((st.n - df.df + 0.5) / (df.df + 0.5)), 1e-6) * (h.tf * 2.2)
           / (h.tf + 1.2 * (0.25 + 0.75 * h.len / greatest(st.tokens / st.n, 1e-9)))) AS score
       FROM hits h JOIN df USING (p) CROSS JOIN stats st
       GROUP BY h.message_id ORDER BY score DESC, h.message_id LIMIT $5`,
      [...base, phrases, RECALL_CANDIDATES, ...phrases.map(likePattern)],
    );
  }
}
