/** The archival memory SQL, prepared once per connection. */
import type { Database } from "better-sqlite3";
import type { EvictionRow } from "../archival-rules.js";
import { MEMORY_COLUMNS, type MemoryRow } from "../rows.js";

export interface EmbeddingRow {
  embedding: Buffer | null;
  embedding_model: string | null;
}

export interface ListParams {
  user: string;
  agent: string | null;
  type: string | null;
  limit: number;
  offset: number;
}

type Params = [
  userId: string,
  agentId: string,
  type: string,
  text: string,
  tagsJson: string,
  importance: number,
  confidence: number,
  sourceSessionId: string | null,
  sourceRunId: string | null,
  createdAt: number,
  updatedAt: number,
  embedding: Buffer | null,
  embeddingModel: string | null,
  embeddingDims: number | null,
];

/**
 * Prepares the statements.
 * @internal Kept out of the declaration files: better-sqlite3's statement type cannot be named there.
 */
export function prepareArchival(db: Database) {
  return {
    insert: db.prepare<Params>(
      `INSERT INTO memories (user_id, agent_id, type, text, tags_json, importance, confidence, source_session_id,
         source_run_id, created_at, updated_at, embedding, embedding_model, embedding_dims)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    mergeText: db.prepare<
      [
        string,
        string,
        number,
        number,
        number,
        string | null,
        string | null,
        Buffer | null,
        string | null,
        number | null,
        number,
      ]
    >(
      `UPDATE memories SET text = ?, tags_json = ?, importance = ?, confidence = ?, updated_at = ?,
         source_session_id = coalesce(?, source_session_id), source_run_id = coalesce(?, source_run_id),
         embedding = ?, embedding_model = ?, embedding_dims = ?
       WHERE id = ?`,
    ),
    edit: db.prepare<
      [string, string, string, number, number, Buffer | null, string | null, number | null, number, string]
    >(
      `UPDATE memories SET text = ?, type = ?, tags_json = ?, importance = ?, updated_at = ?,
         embedding = ?, embedding_model = ?, embedding_dims = ?
       WHERE id = ? AND user_id = ?`,
    ),
    mergeMeta: db.prepare<[string, number, number, number, number]>(
      "UPDATE memories SET tags_json = ?, importance = ?, confidence = ?, updated_at = ? WHERE id = ?",
    ),
    byId: db.prepare<[number, string], MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = ? AND user_id = ?`,
    ),
    byIds: db.prepare<[string, string], MemoryRow>(
      // `+user_id` keeps SQLite from scanning the user's index instead of looking the ids up.
      `SELECT ${MEMORY_COLUMNS} FROM memories WHERE +user_id = ? AND id IN (SELECT value FROM json_each(?))`,
    ),
    embeddingOf: db.prepare<[number], EmbeddingRow>(
      "SELECT embedding, embedding_model FROM memories WHERE id = ?",
    ),
    remove: db.prepare<[number, string]>("DELETE FROM memories WHERE id = ? AND user_id = ?"),
    touch: db.prepare<[number, number, string]>(
      "UPDATE memories SET access_count = access_count + 1, last_accessed_at = ? WHERE id = ? AND user_id = ?",
    ),
    count: db.prepare<[string], number>("SELECT count FROM memory_user_state WHERE user_id = ?").pluck(),
    version: db.prepare<[string], number>("SELECT version FROM memory_user_state WHERE user_id = ?").pluck(),
    evictionRows: db.prepare<[string], EvictionRow>(
      "SELECT id, importance, access_count, updated_at, last_accessed_at FROM memories WHERE user_id = ?",
    ),
    list: db.prepare<[ListParams], MemoryRow>(
      `SELECT ${MEMORY_COLUMNS} FROM memories
       WHERE user_id = @user AND (@agent IS NULL OR agent_id IN ('', @agent)) AND (@type IS NULL OR type = @type)
       ORDER BY updated_at DESC, id DESC LIMIT @limit OFFSET @offset`,
    ),
  };
}

/** @internal */
export type ArchivalStatements = ReturnType<typeof prepareArchival>;
