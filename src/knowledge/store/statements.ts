/** The knowledge base SQL, prepared once per connection. */
import type { Database } from "better-sqlite3";
import { type BaseRow, type ChildRow, DOCUMENT_COLUMNS, type DocumentRow, type PassageRow } from "./rows.js";

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

const BASE_COUNTS = `b.*, (SELECT count(*) FROM kb_documents d WHERE d.kb_id = b.id) AS documents,
  (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.kb_id = b.id) AS chunks`;

/**
 * Prepares the statements.
 * @internal Kept out of the declaration files: better-sqlite3's statement type cannot be named there.
 */
export function prepareKnowledge(db: Database) {
  return {
    insertBase: db.prepare<[string, string, string, number, number]>(
      "INSERT INTO kb_bases (name, agent_id, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?)",
    ),
    base: db.prepare<[string, string], BaseRow>("SELECT * FROM kb_bases WHERE agent_id = ? AND name = ?"),
    baseWithCounts: db.prepare<[number], BaseRow>(`SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.id = ?`),
    visibleBases: db.prepare<[string], BaseRow>(
      "SELECT * FROM kb_bases WHERE agent_id IN ('', ?) ORDER BY name",
    ),
    bases: db.prepare<[{ agent: string | null }], BaseRow>(
      `SELECT ${BASE_COUNTS} FROM kb_bases b WHERE @agent IS NULL OR b.agent_id IN ('', @agent) ORDER BY b.name, b.agent_id`,
    ),
    allBases: db.prepare<[], BaseRow>(`SELECT ${BASE_COUNTS} FROM kb_bases b ORDER BY b.name, b.agent_id`),
    baseCount: db.prepare<[], number>("SELECT count(*) FROM kb_bases").pluck(),
    deleteBase: db.prepare<[number]>("DELETE FROM kb_bases WHERE id = ?"),
    bumpVersion: db.prepare<[number, number]>(
      "UPDATE kb_bases SET version = version + 1, updated_at = ? WHERE id = ?",
    ),
    version: db.prepare<[number], number>("SELECT version FROM kb_bases WHERE id = ?").pluck(),
    documentBySource: db.prepare<[number, string], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = ? AND d.source = ?`,
    ),
    documentById: db.prepare<[number, number], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = ? AND d.id = ?`,
    ),
    documents: db.prepare<[number], DocumentRow>(
      `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id WHERE d.kb_id = ? ORDER BY d.source`,
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
    childrenOfDocument: db.prepare<[number], ChildRow & { section: string | null; seq: number }>(
      `SELECT c.id, c.parent_id, c.document_id, c.text, c.section, c.seq FROM kb_parent_chunks p
       JOIN kb_child_chunks c ON c.parent_id = p.id WHERE p.document_id = ? ORDER BY c.id`,
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
    children: db.prepare<[string], ChildRow>(
      "SELECT id, parent_id, document_id, text, section FROM kb_child_chunks WHERE id IN (SELECT value FROM json_each(?))",
    ),
    passages: db.prepare<[string], PassageRow>(
      `SELECT p.id, p.text, p.section, p.page_start, p.page_end, p.document_id, d.title, d.source, d.mime, b.name AS kb_name
       FROM kb_parent_chunks p JOIN kb_documents d ON d.id = p.document_id JOIN kb_bases b ON b.id = d.kb_id
       WHERE p.id IN (SELECT value FROM json_each(?))`,
    ),
    counts: db.prepare<[], { documents: number; chunks: number }>(
      "SELECT count(*) AS documents, coalesce(sum(chunk_count), 0) AS chunks FROM kb_documents",
    ),
    chunksWithVectors: db
      .prepare<[string], number>(
        "SELECT count(*) FROM kb_child_chunks WHERE embedding_model = ? AND embedding IS NOT NULL",
      )
      .pluck(),
  };
}

/** @internal */
export type KnowledgeStatements = ReturnType<typeof prepareKnowledge>;
