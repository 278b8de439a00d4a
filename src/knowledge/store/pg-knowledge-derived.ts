/**
 * What `dimsum migrate --to postgres://…` rebuilds for the knowledge base after copying its rows:
 * the BM25 term tables, which SQLite keeps inside FTS5 and so are not copied. Each child chunk's
 * index text is rebuilt from its text, section and document title (as re-embedding does), its
 * postings written and its length set in one transaction per batch; then the per-base term counts
 * and totals are recomputed from the postings. Chunks already indexed (length above zero) are left
 * alone, so running it again adds only what is missing.
 */

import type { PgDatabase } from "../../store/postgres/pg-database.js";
import { storedIndexText } from "../ingest/prepare.js";
import { chunkTerms } from "./pg-chunk-terms.js";

const BATCH = 500;

/** A `dimsum migrate` step (DerivedStep in store/postgres/copy-from-sqlite.ts). */
export interface KnowledgeDerivedStep {
  name: string;
  run(target: PgDatabase, onProgress: (done: number, total: number) => void): Promise<void>;
}

/** Indexes every copied child chunk for BM25 and recomputes the term counts and base totals. */
export const knowledgeTermsStep: KnowledgeDerivedStep = {
  name: "knowledge base search terms",
  async run(target, onProgress) {
    const total =
      (await target.one<{ n: number }>("SELECT count(*) AS n FROM kb_child_chunks WHERE fts_len = 0"))?.n ??
      0;
    let done = 0;
    let after = 0;
    onProgress(0, total);
    for (;;) {
      const rows = await target.many<{
        id: number;
        kb_id: number;
        text: string;
        section: string | null;
        title: string;
      }>(
        `SELECT c.id, c.kb_id, c.text, c.section, d.title FROM kb_child_chunks c
         JOIN kb_documents d ON d.id = c.document_id
         WHERE c.fts_len = 0 AND c.id > $1 ORDER BY c.id LIMIT $2`,
        [after, BATCH],
      );
      if (rows.length === 0) break;
      const postings = {
        terms: [] as string[],
        kbs: [] as number[],
        chunks: [] as number[],
        tf: [] as number[],
        len: [] as number[],
      };
      const lengths: number[] = [];
      for (const row of rows) {
        const terms = chunkTerms(storedIndexText(row, row.title));
        lengths.push(terms.len);
        for (const [term, count] of terms.tf) {
          postings.terms.push(term);
          postings.kbs.push(row.kb_id);
          postings.chunks.push(row.id);
          postings.tf.push(count);
          postings.len.push(terms.len);
        }
      }
      await target.transaction(async (tx) => {
        await tx.run(
          `INSERT INTO kb_chunk_terms (term, kb_id, chunk_id, tf, len)
           SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::int[], $5::int[])
           ON CONFLICT DO NOTHING`,
          [postings.terms, postings.kbs, postings.chunks, postings.tf, postings.len],
        );
        await tx.run(
          `UPDATE kb_child_chunks c SET fts_len = u.len FROM unnest($1::bigint[], $2::int[]) AS u(id, len)
           WHERE c.id = u.id`,
          [rows.map((r) => r.id), lengths],
        );
      });
      after = rows[rows.length - 1]!.id;
      done += rows.length;
      onProgress(done, total);
    }
    await target.transaction(async (tx) => {
      // Every base's row locked, so a server started early cannot write between the recounts.
      await tx.run("SELECT id FROM kb_bases ORDER BY id FOR UPDATE");
      await tx.run("DELETE FROM kb_term_df");
      await tx.run(
        `INSERT INTO kb_term_df (term, kb_id, df) SELECT term, kb_id, count(*) FROM kb_chunk_terms GROUP BY term, kb_id`,
      );
      // The version moves too, so a server's loaded vector indexes reload.
      await tx.run(
        `UPDATE kb_bases b SET version = version + 1,
           fts_rows = (SELECT count(*) FROM kb_child_chunks c WHERE c.kb_id = b.id),
           fts_tokens = (SELECT coalesce(sum(c.fts_len), 0) FROM kb_child_chunks c WHERE c.kb_id = b.id)`,
      );
    });
  },
};
