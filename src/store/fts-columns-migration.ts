/**
 * Migration 9: the memory and knowledge FTS indexes get a second column, `chars`, for single CJK
 * characters (and hiragana pairs), which search weighs below words and bigrams; existing memories
 * and chunks are re-indexed from their stored text. FTS5 cannot add a column, so both tables are
 * rebuilt. The terms come from store/text (pure functions, no I/O, shared with memory and knowledge),
 * so the index written here is exactly the one new writes produce.
 */
import type { Database } from "better-sqlite3";
import { ftsColumns } from "./text/terms.js";

const TOKENIZE = `tokenize = "unicode61 remove_diacritics 0 categories 'L* N* Co M*'"`;

/** Rebuilds memories_fts and kb_chunks_fts with the `chars` column and re-indexes every row. */
export function splitCjkCharsColumn(db: Database): void {
  db.exec(`
DROP TABLE memories_fts_vocab;
DROP TABLE memories_fts;
CREATE VIRTUAL TABLE memories_fts USING fts5 (terms, chars, ${TOKENIZE});
CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab (memories_fts, 'row');
DROP TABLE kb_chunks_fts_vocab;
DROP TABLE kb_chunks_fts;
CREATE VIRTUAL TABLE kb_chunks_fts USING fts5 (terms, chars, kb, ${TOKENIZE});
CREATE VIRTUAL TABLE kb_chunks_fts_vocab USING fts5vocab (kb_chunks_fts, 'row');
`);
  const memory = db.prepare<[number, string, string]>(
    "INSERT INTO memories_fts (rowid, terms, chars) VALUES (?, ?, ?)",
  );
  const memories = db.prepare<[number, number], TextRow>(
    "SELECT id, 0 AS kb_id, text FROM memories WHERE id > ? ORDER BY id LIMIT ?",
  );
  reindex(memories, (row, columns) => memory.run(row.id, columns.terms, columns.chars));
  const chunk = db.prepare<[number, string, string, string]>(
    "INSERT INTO kb_chunks_fts (rowid, terms, chars, kb) VALUES (?, ?, ?, ?)",
  );
  const chunks = db.prepare<[number, number], TextRow>(
    "SELECT id, kb_id, text FROM kb_child_chunks WHERE id > ? ORDER BY id LIMIT ?",
  );
  // The base tag as ChunkBm25 writes it (kbTag in knowledge/store/chunk-bm25.ts).
  reindex(chunks, (row, columns) => chunk.run(row.id, columns.terms, columns.chars, `kbid${row.kb_id}`));
}

interface TextRow {
  id: number;
  kb_id: number;
  text: string;
}

const PAGE = 500;

/** Reads rows a page at a time (a statement cannot run while another one is being iterated). */
function reindex(
  page: { all(after: number, limit: number): TextRow[] },
  write: (row: TextRow, columns: ReturnType<typeof ftsColumns>) => void,
): void {
  let after = 0;
  for (;;) {
    const rows = page.all(after, PAGE);
    for (const row of rows) write(row, ftsColumns(row.text));
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.id;
  }
}
