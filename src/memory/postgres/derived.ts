/**
 * `dimsum migrate` for long-term memory: the copied memories get their BM25 postings and length, and
 * each person's state row (count, total terms, a new version for the vector caches) is recomputed
 * from the rows. Idempotent: a memory already indexed is left alone.
 */
import type { DerivedStep } from "../../store/postgres/copy-from-sqlite.js";
import { postingsOf } from "./bm25.js";

export const memoryTermsStep: DerivedStep = {
  name: "memory search terms",
  rebuilds: ["memory_user_state"],
  async run(target, onProgress) {
    const total =
      (await target.one<{ n: number }>("SELECT count(*)::int AS n FROM memories WHERE fts_tokens = 0"))?.n ??
      0;
    let done = 0;
    let lastId = 0;
    for (;;) {
      const rows = await target.many<{
        id: number;
        user_id: string;
        agent_id: string;
        type: string;
        text: string;
      }>(
        "SELECT id, user_id, agent_id, type, text FROM memories WHERE fts_tokens = 0 AND id > $1 ORDER BY id LIMIT 500",
        [lastId],
      );
      if (rows.length === 0) break;
      lastId = rows.at(-1)?.id ?? lastId;
      const cols = { id: [] as number[], user: [] as string[], agent: [] as string[], type: [] as string[] };
      const terms: string[] = [];
      const tfs: number[] = [];
      const lengths: number[] = [];
      const docTokens: number[] = [];
      for (const row of rows) {
        const postings = postingsOf(row.text);
        lengths.push(postings.tokens);
        postings.terms.forEach((term, i) => {
          cols.id.push(row.id);
          cols.user.push(row.user_id);
          cols.agent.push(row.agent_id);
          cols.type.push(row.type);
          terms.push(term);
          tfs.push(postings.tfs[i] ?? 1);
          docTokens.push(postings.tokens);
        });
      }
      await target.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO memory_terms (memory_id, user_id, agent_id, type, term, tf, doc_tokens)
           SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[])
           ON CONFLICT DO NOTHING`,
          [cols.id, cols.user, cols.agent, cols.type, terms, tfs, docTokens],
        );
        await tx.run(
          "UPDATE memories m SET fts_tokens = v.n FROM unnest($1::bigint[], $2::int[]) AS v(id, n) WHERE m.id = v.id",
          [rows.map((r) => r.id), lengths],
        );
      });
      done += rows.length;
      onProgress(done, total);
    }
    await target.run(
      `INSERT INTO memory_user_state (user_id, version, count, tokens)
       SELECT user_id, 1, count(*), coalesce(sum(fts_tokens), 0) FROM memories GROUP BY user_id
       ON CONFLICT (user_id) DO UPDATE SET version = memory_user_state.version + 1, count = excluded.count,
         tokens = excluded.tokens`,
    );
  },
};
