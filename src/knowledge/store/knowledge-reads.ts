/**
 * What both knowledge repositories read and create the same way (bases, documents, chunks, counts),
 * written once over the one database interface; the SQL the dialects order or list differently
 * stands side by side. Writes of chunks, their full-text index and search stay with each database
 * (sqlite-knowledge-repository.ts: FTS5; pg-knowledge-repository.ts: term tables).
 */
import { DimsumError } from "../../errors.js";
import { type Visible, visibilityParams } from "../../shared/visibility.js";
import { type SqlDatabase, sql } from "../../store/sql-database.js";
import type { StoredChild } from "./knowledge-repository.js";
import {
  agentKey,
  type BaseRow,
  type ChildRow,
  DOCUMENT_COLUMNS,
  type DocumentRow,
  type PassageRow,
} from "./rows.js";

const BASE_COLUMNS =
  "b.id, b.name, b.agent_id, b.description, b.version, b.created_at, b.updated_at, b.owner_id, b.visibility, b.allowed_json";
const BASE_COUNTS = `${BASE_COLUMNS}, (SELECT count(*) FROM kb_documents d WHERE d.kb_id = b.id) AS documents,
  (SELECT coalesce(sum(chunk_count), 0) FROM kb_documents d WHERE d.kb_id = b.id) AS chunks`;
// SQLite compares text bytewise; "C" orders the same way whatever the PostgreSQL database's collation.
const BY_NAME = {
  sqlite: "ORDER BY b.name, b.agent_id",
  postgres: 'ORDER BY b.name COLLATE "C", b.agent_id COLLATE "C"',
};
/** A JSON array of ids ($1) as rows of `value`. */
const IDS = {
  sqlite: "SELECT value FROM json_each(?)",
  postgres: "SELECT value::bigint FROM json_array_elements_text(?::json)",
};
const DOCUMENTS = `SELECT ${DOCUMENT_COLUMNS} FROM kb_documents d JOIN kb_bases b ON b.id = d.kb_id`;
const CHILDREN = "SELECT id, parent_id, document_id, text, section FROM kb_child_chunks WHERE id IN";
const PASSAGES = `SELECT p.id, p.text, p.section, p.page_start, p.page_end, p.document_id, d.title, d.source, d.mime,
    b.name AS kb_name
  FROM kb_parent_chunks p JOIN kb_documents d ON d.id = p.document_id JOIN kb_bases b ON b.id = d.kb_id
  WHERE p.id IN`;

const SQL = {
  // The agent's own base sorts first ('' is the shared one).
  findBase: sql(`SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.name = ? AND b.agent_id IN ('', ?)
    ORDER BY b.agent_id = '' LIMIT 1`),
  insertBase:
    sql(`INSERT INTO kb_bases (name, agent_id, description, created_at, updated_at, owner_id, visibility, allowed_json)
    VALUES ($1, $2, $3, $4, $4, $5, $6, $7) ON CONFLICT (agent_id, name) DO NOTHING`),
  setVisibility: sql("UPDATE kb_bases SET visibility = ?, allowed_json = ?, updated_at = ? WHERE id = ?"),
  base: sql(`SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.agent_id = ? AND b.name = ?`),
  withCounts: sql(`SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.id = ?`),
  visibleBases: sql({
    sqlite: `SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.agent_id IN ('', ?) ORDER BY b.name`,
    postgres: `SELECT ${BASE_COLUMNS} FROM kb_bases b WHERE b.agent_id IN ('', ?) ORDER BY b.name COLLATE "C"`,
  }),
  agentBases: sql({
    sqlite: `SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.agent_id IN ('', ?) ${BY_NAME.sqlite}`,
    postgres: `SELECT ${BASE_COUNTS} FROM kb_bases b WHERE b.agent_id IN ('', ?) ${BY_NAME.postgres}`,
  }),
  allBases: sql({
    sqlite: `SELECT ${BASE_COUNTS} FROM kb_bases b ${BY_NAME.sqlite}`,
    postgres: `SELECT ${BASE_COUNTS} FROM kb_bases b ${BY_NAME.postgres}`,
  }),
  baseCount: sql("SELECT count(*) AS n FROM kb_bases"),
  documentBySource: sql(`${DOCUMENTS} WHERE d.kb_id = ? AND d.source = ?`),
  documentById: sql(`${DOCUMENTS} WHERE d.kb_id = ? AND d.id = ?`),
  documents: sql({
    sqlite: `${DOCUMENTS} WHERE d.kb_id = ? ORDER BY d.source`,
    postgres: `${DOCUMENTS} WHERE d.kb_id = ? ORDER BY d.source COLLATE "C"`,
  }),
  childrenOf: sql(`SELECT c.id, c.parent_id, c.document_id, c.text, c.section, c.seq FROM kb_parent_chunks p
    JOIN kb_child_chunks c ON c.parent_id = p.id WHERE p.document_id = ? ORDER BY c.id`),
  children: sql({ sqlite: `${CHILDREN} (${IDS.sqlite})`, postgres: `${CHILDREN} (${IDS.postgres})` }),
  passages: sql({ sqlite: `${PASSAGES} (${IDS.sqlite})`, postgres: `${PASSAGES} (${IDS.postgres})` }),
  counts: sql(
    "SELECT count(*) AS documents, CAST(coalesce(sum(chunk_count), 0) AS BIGINT) AS chunks FROM kb_documents",
  ),
  withVectors: sql(
    "SELECT count(*) AS n FROM kb_child_chunks WHERE embedding_model = ? AND embedding IS NOT NULL",
  ),
  versions: sql({
    sqlite: `SELECT id, version FROM kb_bases WHERE id IN (${IDS.sqlite})`,
    postgres: `SELECT id, version FROM kb_bases WHERE id IN (${IDS.postgres})`,
  }),
} as const;

const READ = "read";

/** The reads (and the base creation) both knowledge repositories share. */
export abstract class KnowledgeReads {
  constructor(
    protected readonly sqlDb: SqlDatabase,
    protected readonly now: () => number,
  ) {}

  findBase(name: string, agentId?: string): Promise<BaseRow | undefined> {
    return this.sqlDb.one<BaseRow>(READ, SQL.findBase, [name, agentKey(agentId)]);
  }

  /** The base, created (owned by `visible.ownerId`, seen as it says) when it is not there yet. */
  async ensureBase(
    name: string,
    agentId?: string,
    description = "",
    visible: Visible = {},
  ): Promise<BaseRow> {
    await this.sqlDb.run("write to", SQL.insertBase, [
      name,
      agentKey(agentId),
      description,
      this.now(),
      ...visibilityParams(visible),
    ]);
    const row = await this.sqlDb.one<BaseRow>(READ, SQL.base, [agentKey(agentId), name]);
    if (!row) {
      throw new DimsumError(
        "internal",
        `the knowledge base "${name}" was removed while it was being created`,
        {
          retryable: true,
        },
      );
    }
    return row;
  }

  /** Changes who sees a base (its owner stays). */
  async setVisibility(id: number, visible: Visible): Promise<void> {
    const [, visibility, allowed] = visibilityParams(visible);
    await this.sqlDb.run("write to", SQL.setVisibility, [visibility, allowed, this.now(), id]);
  }

  async withCounts(row: BaseRow): Promise<BaseRow> {
    return (await this.sqlDb.one<BaseRow>(READ, SQL.withCounts, [row.id])) ?? row;
  }

  visibleBases(agentId: string | undefined): Promise<BaseRow[]> {
    return this.sqlDb.many<BaseRow>(READ, SQL.visibleBases, [agentKey(agentId)]);
  }

  listBases(agentId: string | null): Promise<BaseRow[]> {
    return agentId === null
      ? this.sqlDb.many<BaseRow>(READ, SQL.allBases)
      : this.sqlDb.many<BaseRow>(READ, SQL.agentBases, [agentId]);
  }

  async baseCount(): Promise<number> {
    return (await this.sqlDb.one<{ n: number }>(READ, SQL.baseCount))?.n ?? 0;
  }

  documentBySource(kbId: number, source: string): Promise<DocumentRow | undefined> {
    return this.sqlDb.one<DocumentRow>(READ, SQL.documentBySource, [kbId, source]);
  }

  documentById(kbId: number, id: number): Promise<DocumentRow | undefined> {
    return this.sqlDb.one<DocumentRow>(READ, SQL.documentById, [kbId, id]);
  }

  documents(kbId: number): Promise<DocumentRow[]> {
    return this.sqlDb.many<DocumentRow>(READ, SQL.documents, [kbId]);
  }

  childrenOf(documentId: number): Promise<StoredChild[]> {
    return this.sqlDb.many<StoredChild>(READ, SQL.childrenOf, [documentId]);
  }

  async children(ids: readonly number[]): Promise<ChildRow[]> {
    return ids.length === 0 ? [] : this.sqlDb.many<ChildRow>(READ, SQL.children, [JSON.stringify(ids)]);
  }

  async passages(ids: readonly number[]): Promise<PassageRow[]> {
    return ids.length === 0 ? [] : this.sqlDb.many<PassageRow>(READ, SQL.passages, [JSON.stringify(ids)]);
  }

  async counts(
    model: string | undefined,
  ): Promise<{ documents: number; chunks: number; withVectors: number }> {
    const totals = await this.sqlDb.one<{ documents: number; chunks: number }>(READ, SQL.counts);
    const withVectors = model
      ? ((await this.sqlDb.one<{ n: number }>(READ, SQL.withVectors, [model]))?.n ?? 0)
      : 0;
    return { documents: totals?.documents ?? 0, chunks: totals?.chunks ?? 0, withVectors };
  }

  async baseVersions(kbIds: readonly number[]): Promise<Map<number, number>> {
    if (kbIds.length === 0) return new Map();
    const rows = await this.sqlDb.many<{ id: number; version: number }>(READ, SQL.versions, [
      JSON.stringify(kbIds),
    ]);
    return new Map(rows.map((r) => [r.id, r.version] as const));
  }
}
