/** Row shapes of the knowledge tables and their mapping to public records. */
import { type VisibilityRow, visibleOf } from "../../shared/visibility.js";
import { withPresent } from "../../store/present-fields.js";
import type { DocumentRecord, DocumentStatus, KnowledgeBaseInfo } from "../types.js";

export interface BaseRow extends VisibilityRow {
  id: number;
  name: string;
  agent_id: string;
  description: string;
  version: number;
  created_at: number;
  updated_at: number;
  documents?: number;
  chunks?: number;
}

export interface DocumentRow {
  id: number;
  kb_id: number;
  kb_name: string;
  source: string;
  title: string;
  mime: string;
  size: number;
  content_hash: string;
  pages: number | null;
  status: string;
  error: string | null;
  parent_count: number;
  chunk_count: number;
  embedding_model: string | null;
  created_at: number;
  updated_at: number;
}

export const DOCUMENT_COLUMNS = `d.id, d.kb_id, b.name AS kb_name, d.source, d.title, d.mime, d.size, d.content_hash,
  d.pages, d.status, d.error, d.parent_count, d.chunk_count, d.embedding_model, d.created_at, d.updated_at`;

/** A parent chunk with what a citation needs from its document and base. */
export interface PassageRow {
  id: number;
  text: string;
  section: string | null;
  page_start: number | null;
  page_end: number | null;
  document_id: number;
  title: string;
  source: string;
  mime: string;
  kb_name: string;
}

export interface ChildRow {
  id: number;
  parent_id: number;
  document_id: number;
  text: string;
  /** The heading path the child sits under. */
  section: string | null;
}

/** Shared bases store '' as their agent, so the unique key needs no NULL handling. */
export function agentKey(agentId: string | undefined): string {
  return agentId ?? "";
}

export function toBaseInfo(row: BaseRow): KnowledgeBaseInfo {
  const info: KnowledgeBaseInfo = {
    id: String(row.id),
    name: row.name,
    description: row.description,
    documents: row.documents ?? 0,
    chunks: row.chunks ?? 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.agent_id !== "") info.agentId = row.agent_id;
  Object.assign(info, visibleOf(row));
  return info;
}

export function toDocumentRecord(row: DocumentRow): DocumentRecord {
  const record: DocumentRecord = {
    id: String(row.id),
    kb: row.kb_name,
    source: row.source,
    title: row.title,
    mime: row.mime,
    size: row.size,
    contentHash: row.content_hash,
    status: row.status as DocumentStatus,
    parentChunks: row.parent_count,
    childChunks: row.chunk_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  return withPresent(record, { pages: row.pages, error: row.error, embeddingModel: row.embedding_model });
}

/** Whether a filter value is a glob (`*`, `?`, `[…]`) rather than a plain path or type. */
export const GLOB = /[*?[]/;

/** A path glob as matched against absolute sources: relative ones match anywhere. */
export function globPattern(path: string): string {
  return path.startsWith("/") || path.startsWith("*") ? path : `*${path}`;
}

/** A plain path as a segment of a source: `docs/` matches `/repo/docs/a.md`. */
export function pathSegment(path: string): string {
  return `/${path.replace(/^\.?\//, "")}`;
}
