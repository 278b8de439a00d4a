/**
 * The knowledge base: bases, documents, parent and child chunks with their vectors, and BM25 over
 * term tables. The same columns as the SQLite schema (so both backends map rows with the same
 * code), with what FTS5 keeps internally spelled out as tables:
 * - `kb_chunk_terms`: one posting per (term, chunk) with its count and the chunk's length in
 *   terms, written by the app from the same processed terms FTS5 gets on SQLite (stems, CJK
 *   bigrams and characters), so both backends score alike. No foreign key: a per-row check made
 *   ingestion three times slower; the repository deletes postings with their chunks and bases;
 * - `kb_term_df`: how many chunks of a base hold a term (summed over bases at query time, like
 *   FTS5's table-wide counts); per base, so writers of different bases never touch the same rows;
 * - `kb_bases.fts_rows` and `fts_tokens`: the base's chunk and term totals, for N and the average
 *   length. Every write locks its base's row first (the version bump), which orders writers of one
 *   base across instances.
 * Vectors are Float32 bytes (BYTEA) searched in each instance's memory; `version` tells when to reload.
 */
import { sqlMigration } from "../pg-migrations.js";

export const knowledge = sqlMigration(
  4,
  "knowledge base: bases, documents, chunks, vectors, BM25 term tables",
  [
    `CREATE TABLE kb_bases (
    id BIGSERIAL PRIMARY KEY,
    name TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    description TEXT NOT NULL DEFAULT '',
    version BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    fts_rows BIGINT NOT NULL DEFAULT 0,
    fts_tokens BIGINT NOT NULL DEFAULT 0,
    UNIQUE (agent_id, name)
  )`,
    `CREATE TABLE kb_documents (
    id BIGSERIAL PRIMARY KEY,
    kb_id BIGINT NOT NULL REFERENCES kb_bases (id) ON DELETE CASCADE,
    source TEXT NOT NULL,
    title TEXT NOT NULL,
    mime TEXT NOT NULL,
    size BIGINT NOT NULL,
    content_hash TEXT NOT NULL,
    pages INTEGER,
    status TEXT NOT NULL CHECK (status IN ('ready', 'failed')),
    error TEXT,
    parent_count INTEGER NOT NULL DEFAULT 0,
    chunk_count INTEGER NOT NULL DEFAULT 0,
    embedding_model TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    UNIQUE (kb_id, source)
  )`,
    `CREATE TABLE kb_parent_chunks (
    id BIGSERIAL PRIMARY KEY,
    document_id BIGINT NOT NULL REFERENCES kb_documents (id) ON DELETE CASCADE,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    section TEXT,
    page_start INTEGER,
    page_end INTEGER,
    tokens INTEGER NOT NULL
  )`,
    "CREATE INDEX kb_parent_chunks_document ON kb_parent_chunks (document_id, seq)",
    `CREATE TABLE kb_child_chunks (
    id BIGSERIAL PRIMARY KEY,
    parent_id BIGINT NOT NULL REFERENCES kb_parent_chunks (id) ON DELETE CASCADE,
    document_id BIGINT NOT NULL,
    kb_id BIGINT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    section TEXT,
    page_start INTEGER,
    page_end INTEGER,
    tokens INTEGER NOT NULL,
    embedding BYTEA,
    embedding_model TEXT,
    embedding_dims INTEGER,
    fts_len INTEGER NOT NULL DEFAULT 0
  )`,
    "CREATE INDEX kb_child_chunks_parent ON kb_child_chunks (parent_id)",
    "CREATE INDEX kb_child_chunks_document ON kb_child_chunks (document_id)",
    "CREATE INDEX kb_child_chunks_kb_model ON kb_child_chunks (kb_id, embedding_model)",
    `CREATE TABLE kb_chunk_terms (
    term TEXT NOT NULL,
    kb_id BIGINT NOT NULL,
    chunk_id BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    len INTEGER NOT NULL,
    PRIMARY KEY (term, kb_id, chunk_id) INCLUDE (tf, len)
  )`,
    "CREATE INDEX kb_chunk_terms_chunk ON kb_chunk_terms (kb_id, chunk_id)",
    `CREATE TABLE kb_term_df (
    term TEXT NOT NULL,
    kb_id BIGINT NOT NULL REFERENCES kb_bases (id) ON DELETE CASCADE,
    df INTEGER NOT NULL,
    PRIMARY KEY (term, kb_id)
  )`,
    "CREATE INDEX kb_term_df_kb ON kb_term_df (kb_id)",
  ],
);
