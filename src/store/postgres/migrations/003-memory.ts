/**
 * Long-term memory on PostgreSQL: archival memories, their BM25 postings, per-user state, core memory
 * blocks, and the recall index over session messages. The memory columns are those of the SQLite
 * schema, so both backends map rows with the same code.
 *
 * BM25 is computed in SQL the way SQLite's FTS5 does it (src/memory/postgres/bm25.ts): the memory
 * layer writes each memory's processed terms (stems, CJK bigrams and characters) as postings with
 * their frequency; `fts_tokens` is the memory's length in terms; `memory_user_state` keeps each user's
 * memory count, total terms (the collection statistics sum them over users) and a version that
 * in-memory vector caches of every instance compare against. Only the memory layer writes these
 * tables, always bumping the version in the transaction that changes vectors, texts or types.
 *
 * Recall: `messages_recall` holds the text of user and assistant messages (kept by a trigger on
 * `messages`, so every writer is covered) and its folded form (NFKC, lower case, Latin accents off)
 * under a pg_trgm index, which finds any substring of three or more characters, CJK included.
 */
import { sqlMigration } from "../pg-migrations.js";

export const memory = sqlMigration(
  3,
  "long-term memory: archival memories, core memory blocks, recall index",
  [
    `CREATE TABLE memories (
    id BIGSERIAL PRIMARY KEY,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL CHECK (type IN ('semantic', 'episodic', 'procedural')),
    text TEXT NOT NULL,
    tags_json TEXT NOT NULL DEFAULT '[]',
    importance INTEGER NOT NULL CHECK (importance BETWEEN 1 AND 10),
    confidence DOUBLE PRECISION NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    source_session_id TEXT,
    source_run_id TEXT,
    access_count INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    last_accessed_at BIGINT,
    embedding BYTEA,
    embedding_model TEXT,
    embedding_dims INTEGER,
    fts_tokens INTEGER NOT NULL DEFAULT 0
  )`,
    "CREATE INDEX memories_user ON memories (user_id, agent_id, updated_at)",
    "CREATE INDEX memories_user_model ON memories (user_id, embedding_model)",
    // One row per distinct term of a memory, with what scoring and filtering need (the memory's length,
    // agent and type, copied so that a search reads the index alone). By term: document frequencies
    // (over every user, as FTS5 counts them); by user and term: the postings a search scores. No
    // foreign key: the memory layer deletes a memory's postings with it (a per-row check would slow
    // bulk imports down severalfold).
    `CREATE TABLE memory_terms (
    memory_id BIGINT NOT NULL,
    term TEXT NOT NULL,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    type TEXT NOT NULL,
    tf INTEGER NOT NULL,
    doc_tokens INTEGER NOT NULL,
    PRIMARY KEY (memory_id, term)
  )`,
    "CREATE INDEX memory_terms_term ON memory_terms (term)",
    "CREATE INDEX memory_terms_user ON memory_terms (user_id, term) INCLUDE (memory_id, tf, doc_tokens, agent_id, type)",
    `CREATE TABLE memory_user_state (
    user_id TEXT PRIMARY KEY,
    version BIGINT NOT NULL,
    count BIGINT NOT NULL,
    tokens BIGINT NOT NULL
  )`,
    `CREATE TABLE core_memory (
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL DEFAULT '',
    label TEXT NOT NULL,
    value TEXT NOT NULL,
    char_limit INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (user_id, agent_id, label)
  )`,
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    // What normalizeText (src/store/text/terms.ts) does to a query, so that substrings match.
    `CREATE FUNCTION dimsum_fold(t TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT normalize(regexp_replace(normalize(lower(normalize(t, NFKC)), NFD), '[\\u0300-\\u036f]+', '', 'g'), NFC)
  $$`,
    // The text of a message as SQLite's recall index takes it: a JSON string, or the text parts of an
    // array joined by newlines; NULL for anything else (including content that is not JSON).
    `CREATE FUNCTION dimsum_message_text(content TEXT) RETURNS TEXT LANGUAGE plpgsql IMMUTABLE AS $$
  DECLARE
    doc jsonb;
  BEGIN
    BEGIN
      doc := content::jsonb;
    EXCEPTION WHEN others THEN
      RETURN NULL;
    END;
    IF jsonb_typeof(doc) = 'string' THEN
      RETURN doc #>> '{}';
    ELSIF jsonb_typeof(doc) = 'array' THEN
      RETURN (SELECT string_agg(e ->> 'text', E'\\n' ORDER BY i)
              FROM jsonb_array_elements(doc) WITH ORDINALITY AS parts (e, i)
              WHERE jsonb_typeof(e) = 'object' AND e ->> 'type' = 'text');
    END IF;
    RETURN NULL;
  END $$`,
    `CREATE TABLE messages_recall (
    message_id BIGINT PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    session_id BIGINT NOT NULL,
    text TEXT NOT NULL,
    folded TEXT NOT NULL,
    chars INTEGER NOT NULL
  )`,
    "CREATE INDEX messages_recall_session ON messages_recall (session_id) INCLUDE (chars)",
    "CREATE INDEX messages_recall_trgm ON messages_recall USING GIN (folded gin_trgm_ops)",
    `CREATE FUNCTION dimsum_messages_recall() RETURNS trigger LANGUAGE plpgsql AS $$
  DECLARE
    t TEXT;
    f TEXT;
  BEGIN
    IF NEW.role IN ('user', 'assistant') THEN
      t := dimsum_message_text(NEW.content_json);
    END IF;
    IF t IS NULL OR t = '' THEN
      IF TG_OP = 'UPDATE' THEN
        DELETE FROM messages_recall WHERE message_id = NEW.id;
      END IF;
      RETURN NULL;
    END IF;
    f := dimsum_fold(t);
    INSERT INTO messages_recall (message_id, session_id, text, folded, chars)
      VALUES (NEW.id, NEW.session_id, t, f, char_length(f))
      ON CONFLICT (message_id) DO UPDATE SET text = excluded.text, folded = excluded.folded, chars = excluded.chars;
    RETURN NULL;
  END $$`,
    `CREATE TRIGGER messages_recall_insert AFTER INSERT ON messages
    FOR EACH ROW EXECUTE FUNCTION dimsum_messages_recall()`,
    `CREATE TRIGGER messages_recall_update AFTER UPDATE OF content_json, role ON messages
    FOR EACH ROW EXECUTE FUNCTION dimsum_messages_recall()`,
    // Messages written before this migration.
    `INSERT INTO messages_recall (message_id, session_id, text, folded, chars)
    SELECT id, session_id, t, dimsum_fold(t), char_length(dimsum_fold(t))
    FROM (SELECT id, session_id, dimsum_message_text(content_json) AS t FROM messages
          WHERE role IN ('user', 'assistant')) m
    WHERE t <> ''`,
  ],
);
