/** The knowledge base SQL, prepared once per connection. */
import type { Database } from "better-sqlite3";
import { DOCUMENT_COLUMNS, type DocumentRow } from "./rows.js";

export interface DocumentParams {
  kbId: number;
  source: string;
  title: string;
  mime: string;
  size: number;
  hash: string;
  pages: number | null;
  status: "ready" | "failed";
  error: string | null;
  parents: number;
  chunks: number;
  model: string | null;
  now: number;
}

type ChunkPlace = [
  text: string,
  section: string | null,
  pageStart: number | null,
  pageEnd: number | null,
  tokens: number,
];

const _BASE_COUNTS = `b.*, (SELECT count(*) FROM kb_documents d WHERE d.kb_id = b.id) AS documents,
  (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.kb_id = b.id) AS chunks`;

/**
 * Prepares the statements.
 * @internal Kept out of the declaration files: better-sqlite3's statement type cannot be named there.
 */
export function prepareKnowledge(db: Database) {
  return {
    baseCount: db.prepare<[], number>("SELECT count(*) FROM kb_bases").pluck(),
    deleteBase: db.prepare<[number]>("DELETE FROM kb_bases WHERE id = ?"),
    bumpVersion: db.prepare<[number, number]>(
      "UPDATE kb_bases SET version = version + 1, updated_at = ? WHERE id = ?",
    ),
    version: db.prepare<[number], number>("SELECT version FROM kb_bases WHERE id = ?").pluck(),
    documentBySource: db.prepare<[number, string], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = ? AND d.source = ?`,
    ),
    upsertDocument: db.prepare<[DocumentParams], { id: number }>(
      `INSERT INTO kb_documents (kb_id, source, title, mime, size, content_hash, pages, status, error, parent_count,
         chunk_count, embedding_model, created_at, updated_at)
       VALUES (@kbId, @source, @title, @mime, @size, @hash, @pages, @status, @error, @parents, @chunks, @model, @now, @now)
       ON CONFLICT (kb_id, source) DO UPDATE SET title = excluded.title, mime = excluded.mime, size = excluded.size,
         content_hash = excluded.content_hash, pages = excluded.pages, status = excluded.status, error = excluded.error,
         parent_count = excluded.parent_count, chunk_count = excluded.chunk_count,
         embedding_model = excluded.embedding_model, updated_at = excluded.updated_at
       RETURNING id`,
    ),
    deleteParentsOf: db.prepare<[number]>("DELETE FROM kb_parent_chunks WHERE document_id = ?"),
    deleteDocument: db.prepare<[number]>("DELETE FROM kb_documents WHERE id = ?"),
    insertParent: db.prepare<[number, number, ...ChunkPlace]>(
      `INSERT INTO kb_parent_chunks (document_id, seq, text, section, page_start, page_end, tokens)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertChild: db.prepare<
      [number, number, number, number, ...ChunkPlace, Buffer | null, string | null, number | null]
    >(
      `INSERT INTO kb_child_chunks (parent_id, document_id, kb_id, seq, text, section, page_start, page_end, tokens,
         embedding, embedding_model, embedding_dims) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    childIdsOfDocument: db
      // Through the parents: both joins use an index, kb_child_chunks.document_id has none.
      .prepare<[number], number>(
        "SELECT c.id FROM kb_parent_chunks p JOIN kb_child_chunks c ON c.parent_id = p.id WHERE p.document_id = ?",
      )
      .pluck(),
    setEmbedding: db.prepare<[Buffer | null, string | null, number | null, number]>(
      "UPDATE kb_child_chunks SET embedding = ?, embedding_model = ?, embedding_dims = ? WHERE id = ?",
    ),
    setDocumentModel: db.prepare<[string | null, number, number]>(
      "UPDATE kb_documents SET embedding_model = ?, updated_at = ? WHERE id = ?",
    ),
  };
}

/** @internal */
export type KnowledgeStatements = ReturnType<typeof prepareKnowledge>;
