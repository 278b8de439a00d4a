/** Maps `memories` rows to MemoryRecords, and the conventions the SQL shares. */
import { withPresent } from "../store/present-fields.js";
import type { CleanInput } from "./input.js";
import type { MemoryRecord, MemoryType } from "./types.js";
import { vectorToBlob } from "./vectors/blob.js";

/** The columns every read selects (the embedding BLOB is read only where vectors are needed). */
export const MEMORY_COLUMNS = `id, user_id, agent_id, type, text, tags_json, importance, confidence, source_session_id,
  source_run_id, access_count, created_at, updated_at, last_accessed_at, embedding_model, embedding_dims`;

export interface MemoryRow {
  id: number;
  user_id: string;
  agent_id: string;
  type: string;
  text: string;
  tags_json: string;
  importance: number;
  confidence: number;
  source_session_id: string | null;
  source_run_id: string | null;
  access_count: number;
  created_at: number;
  updated_at: number;
  last_accessed_at: number | null;
  embedding_model: string | null;
  embedding_dims: number | null;
}

/** Shared (agent-less) rows store '' so that keys and indexes need no NULL handling. */
export function agentKey(agentId: string | undefined): string {
  return agentId ?? "";
}

/** Parses a public memory id ("42"); undefined for anything else. */
export function parseMemoryId(id: string): number | undefined {
  return /^[1-9][0-9]{0,15}$/.test(id.trim()) ? Number(id.trim()) : undefined;
}

function parseTags(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((t): t is string => typeof t === "string") : [];
  } catch {
    return [];
  }
}

/** A row as the public record. */
export function toMemoryRecord(row: MemoryRow): MemoryRecord {
  const record: MemoryRecord = {
    id: String(row.id),
    userId: row.user_id,
    type: row.type as MemoryType,
    text: row.text,
    tags: parseTags(row.tags_json),
    importance: row.importance,
    confidence: row.confidence,
    accessCount: row.access_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.agent_id !== "") record.agentId = row.agent_id;
  return withPresent(record, {
    sourceSessionId: row.source_session_id,
    sourceRunId: row.source_run_id,
    lastAccessedAt: row.last_accessed_at,
    embeddingModel: row.embedding_model,
    embeddingDims: row.embedding_dims,
  });
}

/** user, agent, type, text, tags, importance, confidence, source session, source run: a new memory's columns. */
export function memoryInputColumns(
  input: CleanInput,
): [string, string, string, string, string, number, number, string | null, string | null] {
  return [
    input.userId,
    agentKey(input.agentId),
    input.type,
    input.text,
    JSON.stringify(input.tags),
    input.importance,
    input.confidence,
    ...sourceColumns(input),
  ];
}

/** The source session and run of an input (or null). */
export function sourceColumns(input: CleanInput): [string | null, string | null] {
  return [input.sourceSessionId ?? null, input.sourceRunId ?? null];
}

/** text, type, tags_json, importance, updated_at of a memory a person edited at `now`. */
export function editedColumns(
  next: { text: string; type: MemoryType; tags: string[]; importance: number },
  now: number,
): [string, MemoryType, string, number, number] {
  return [next.text, next.type, JSON.stringify(next.tags), next.importance, now];
}

/** embedding, embedding_model, embedding_dims of a memory's vector (all null without one). */
export function vectorColumns(
  vector: Float32Array | undefined,
  model: string | undefined,
): [Buffer | null, string | null, number | null] {
  return vector ? [vectorToBlob(vector), model ?? null, vector.length] : [null, null, null];
}
