/**
 * Archival memory on PostgreSQL: the same decisions as the SQLite store (../archival-rules.ts), with
 * SQL that stays correct when several instances write the same database. Every write of a user's
 * memories first locks the user's `memory_user_state` row (and bumps its version when vectors, texts
 * or types may change): writes of one user are serialized, always taking their locks in the same
 * order, and every instance's vector cache sees the new version. Vectors live as
 * BYTEA and are scanned in process (vectors/quantized-index.ts); an instance's cached index is
 * patched by its own writes and reloaded when the version moved under it.
 */
import type { PgDatabase, PgQueryable } from "../../store/postgres/pg-database.js";
import * as rules from "../archival-rules.js";
import type { CleanInput } from "../input.js";
import {
  agentKey,
  editedColumns,
  MEMORY_COLUMNS,
  type MemoryRow,
  memoryInputColumns,
  toMemoryRecord,
  vectorColumns,
} from "../rows.js";
import type { EditedFields, PendingWrite } from "../store-front.js";
import type { MemoryRecord, MemorySearchHit, MemoryType, RememberResult } from "../types.js";
import { blobToVector, vectorToBlob } from "../vectors/blob.js";
import { VersionedIndexCache } from "../vectors/index-cache.js";
import { QuantizedVectorIndex } from "../vectors/quantized-index.js";
import { PgBm25, postingsOf } from "./bm25.js";

/** One user's part of a write transaction. */
interface UserWrite {
  userId: string;
  /** The version before this transaction (`after` - 1). */
  before: number;
  after: number;
  count: number;
  /** This instance's index of the user, patched as the transaction writes; undefined when none. */
  index: QuantizedVectorIndex<rules.VectorMeta> | undefined;
}

interface VectorRow {
  id: number;
  agent_id: string;
  type: string;
  embedding: Buffer;
  version: number;
}

const COLUMNS = MEMORY_COLUMNS.replace(/\s+/g, " ");

/** Locks the user's state row without changing it (writes that leave vectors and texts alone). */
const LOCK_STATE = "SELECT version FROM memory_user_state WHERE user_id = $1 FOR UPDATE";

/** Locks the user's state row (creating it) and bumps its version; returns the new version and count. */
const LOCK_USER = `INSERT INTO memory_user_state (user_id, version, count, tokens) VALUES ($1, 1, 0, 0)
  ON CONFLICT (user_id) DO UPDATE SET version = memory_user_state.version + 1
  RETURNING version, count`;

export class PgArchival {
  private readonly settings: rules.ArchivalSettings;
  private readonly bm25: PgBm25;
  private readonly vectors: VersionedIndexCache<rules.VectorMeta> | undefined;

  constructor(
    private readonly db: PgDatabase,
    options: rules.ArchivalOptions = {},
  ) {
    this.settings = rules.archivalSettings(options);
    this.bm25 = new PgBm25(this.settings.maxPostings);
    this.vectors = options.embeddingModel
      ? new VersionedIndexCache<rules.VectorMeta>(this.settings.cachedUsers)
      : undefined;
  }

  /**
   * Writes the memories in one transaction, in order: each merges into a near-duplicate (unless its
   * `merge` is false) or is inserted, then the user's memories are evicted down to the cap. A batch
   * that cannot merge or evict is inserted with a few multi-row statements.
   */
  async write(pending: PendingWrite[]): Promise<RememberResult[]> {
    const userIds = [...new Set(pending.map((p) => p.input.userId))].sort();
    let users = new Map<string, UserWrite>();
    const results = await this.db.transaction(async (tx) => {
      users = new Map();
      // Locked in a fixed order, so two batches of the same users cannot deadlock.
      for (const userId of userIds) {
        const row = (await tx.one<{ version: number; count: number }>(LOCK_USER, [userId]))!;
        const before = row.version - 1;
        // Taken out of the cache while the transaction patches it: a rollback leaves it out.
        users.set(userId, {
          userId,
          before,
          after: row.version,
          count: row.count,
          index: this.vectors?.take(userId, before),
        });
      }
      const added = new Map<string, number>();
      for (const p of pending) added.set(p.input.userId, (added.get(p.input.userId) ?? 0) + 1);
      const bulk =
        pending.every((p) => !p.merge) &&
        [...users.values()].every((u) => u.count + (added.get(u.userId) ?? 0) <= this.settings.cap);
      if (bulk) return this.insertMany(tx, pending, users);
      const out: RememberResult[] = [];
      for (const p of pending) out.push(await this.rememberOne(tx, p, users.get(p.input.userId)!));
      return out;
    });
    for (const user of users.values()) if (user.index) this.vectors?.put(user.userId, user.after, user.index);
    return results;
  }

  /** Ranked hits: BM25 and vector lists fused with RRF, weighted by recency, importance and use. */
  async search(query: rules.ArchivalSearch): Promise<MemorySearchHit[]> {
    const state = await this.db.one<{ count: number; version: number }>(
      "SELECT count, version FROM memory_user_state WHERE user_id = $1",
      [query.userId],
    );
    // Most users of a busy server have no memories yet: one indexed read instead of a search.
    if (!state || state.count === 0) return [];
    const scope = { userId: query.userId, agentId: query.agentId, type: query.type };
    const index =
      query.vector && this.vectors
        ? await this.index(this.db, query.userId, state.version, query.vector.length)
        : undefined;
    // The vector scan starts first: on a big index a worker thread runs it during the BM25 query.
    const vectorSearch =
      query.vector && index
        ? index.beginSearch(query.vector, this.settings.candidates, rules.vectorFilter(query))
        : undefined;
    const matched =
      query.terms.length > 0
        ? await this.bm25.search(this.db, scope, query.terms, this.settings.candidates)
        : [];
    const lists = rules.rankedLists(query, matched, vectorSearch?.result());
    const ids = rules.fusedIds(lists);
    if (ids.length === 0) return [];
    const rows = await this.db.many<MemoryRow>(
      `SELECT ${COLUMNS} FROM memories WHERE user_id = $1 AND id = ANY($2::bigint[])`,
      [query.userId, ids],
    );
    return rules.fuseHits(lists, rows, this.settings.now(), this.settings.weights, query.limit);
  }

  async get(userId: string, id: number): Promise<MemoryRecord | undefined> {
    const row = await this.db.one<MemoryRow>(
      `SELECT ${COLUMNS} FROM memories WHERE id = $1 AND user_id = $2`,
      [id, userId],
    );
    return row && toMemoryRecord(row);
  }

  async list(
    userId: string,
    agentId: string | undefined,
    type: MemoryType | undefined,
    limit: number,
    offset: number,
  ): Promise<MemoryRecord[]> {
    const rows = await this.db.many<MemoryRow>(
      `SELECT ${COLUMNS} FROM memories
       WHERE user_id = $1 AND ($2::text IS NULL OR agent_id IN ('', $2)) AND ($3::text IS NULL OR type = $3)
       ORDER BY updated_at DESC, id DESC LIMIT $4 OFFSET $5`,
      [userId, agentId ?? null, type ?? null, limit, offset],
    );
    return rows.map(toMemoryRecord);
  }

  async count(userId: string): Promise<number> {
    const row = await this.db.one<{ count: number }>(
      "SELECT count FROM memory_user_state WHERE user_id = $1",
      [userId],
    );
    return row?.count ?? 0;
  }

  /**
   * Deletes one memory (its postings go with it) and moves the user's version on. Like every write of
   * a user's memories it locks the user's state row first, so writers never wait on each other in
   * opposite orders.
   */
  async forget(userId: string, id: number): Promise<boolean> {
    const version = await this.db.transaction(async (tx) => {
      if (!(await tx.one(LOCK_STATE, [userId]))) return undefined;
      const row = await tx.one<{ version: number }>(
        `WITH gone AS (DELETE FROM memories WHERE id = $1 AND user_id = $2 RETURNING id, fts_tokens),
         terms AS (DELETE FROM memory_terms WHERE memory_id IN (SELECT id FROM gone))
         UPDATE memory_user_state s SET version = s.version + 1, count = s.count - 1,
           tokens = s.tokens - gone.fts_tokens
         FROM gone WHERE s.user_id = $2 RETURNING s.version`,
        [id, userId],
      );
      return row?.version;
    });
    if (version === undefined) return false;
    this.vectors?.afterWrite(userId, version - 1, version, (index) => {
      index.remove(id);
      return true;
    });
    return true;
  }

  /**
   * A person's edit (see `MemoryBackend.edit`), under the user's lock with the version moved on; the
   * postings follow a new text or type, and this instance's cached index is dropped.
   */
  async edit(
    userId: string,
    id: number,
    next: EditedFields,
    vector: Float32Array | undefined,
  ): Promise<MemoryRecord | undefined> {
    this.vectors?.drop(userId);
    const updated = await this.db.transaction(async (tx) => {
      await tx.one(LOCK_USER, [userId]);
      const row = await tx.one<MemoryRow>(
        `SELECT ${COLUMNS} FROM memories WHERE id = $1 AND user_id = $2 FOR UPDATE`,
        [id, userId],
      );
      if (!row) return undefined;
      const keepVector = next.text === row.text;
      const sets = ["text = $3", "type = $4", "tags_json = $5", "importance = $6", "updated_at = $7"];
      const params: unknown[] = [id, userId, ...editedColumns(next, this.settings.now())];
      if (!keepVector) {
        params.push(
          vector ? vectorToBlob(vector) : null,
          vector ? (this.settings.embeddingModel ?? null) : null,
          vector ? vector.length : null,
        );
        sets.push("embedding = $8", "embedding_model = $9", "embedding_dims = $10");
      }
      const edited = await tx.one<MemoryRow>(
        `UPDATE memories SET ${sets.join(", ")} WHERE id = $1 AND user_id = $2 RETURNING ${COLUMNS}`,
        params,
      );
      if (!keepVector) await this.reindex(tx, edited!, next.text);
      else if (next.type !== row.type)
        await tx.run("UPDATE memory_terms SET type = $2 WHERE memory_id = $1", [id, next.type]);
      return edited;
    });
    this.vectors?.drop(userId);
    return updated && toMemoryRecord(updated);
  }

  /** Counts a use of each memory (an id given twice counts twice, as on SQLite). */
  async touch(userId: string, ids: readonly number[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (!(await tx.one(LOCK_STATE, [userId]))) return;
      await tx.run(
        `UPDATE memories m SET access_count = m.access_count + c.n, last_accessed_at = $1
         FROM (SELECT id, count(*)::int AS n FROM unnest($3::bigint[]) AS t (id) GROUP BY id) c
         WHERE m.id = c.id AND m.user_id = $2`,
        [this.settings.now(), userId, ids],
      );
    });
  }

  /** The user's vector index at `version` for `dims`-dimensional vectors: cached, or loaded. */
  private async index(
    db: PgQueryable,
    userId: string,
    version: number,
    dims: number,
  ): Promise<QuantizedVectorIndex<rules.VectorMeta>> {
    const cached = this.vectors?.get(userId, version, dims);
    if (cached) return cached;
    const index = new QuantizedVectorIndex<rules.VectorMeta>(dims);
    // The version is read in the same statement (the same snapshot) as the vectors.
    const rows = await db.many<VectorRow>(
      `SELECT id, agent_id, type, embedding,
         (SELECT version FROM memory_user_state WHERE user_id = $1) AS version
       FROM memories
       WHERE user_id = $1 AND embedding_model = $2 AND embedding_dims = $3 AND embedding IS NOT NULL`,
      [userId, this.settings.embeddingModel, dims],
    );
    for (const row of rows) {
      index.upsert(row.id, blobToVector(row.embedding), {
        agentId: row.agent_id,
        type: row.type as MemoryType,
      });
    }
    if (db === this.db) this.vectors?.put(userId, rows[0]?.version ?? version, index);
    return index;
  }

  /** Inserts a batch that neither merges nor evicts: ids first, then rows and postings in bulk. */
  private async insertMany(
    tx: PgQueryable,
    pending: PendingWrite[],
    users: Map<string, UserWrite>,
  ): Promise<RememberResult[]> {
    const ids = (
      await tx.many<{ id: number }>(
        "SELECT nextval(pg_get_serial_sequence('memories', 'id')) AS id FROM generate_series(1, $1)",
        [pending.length],
      )
    )
      .map((r) => r.id)
      .sort((a, b) => a - b);
    const now = this.settings.now();
    const postings = pending.map((p) => postingsOf(p.input.text));
    const model = this.settings.embeddingModel ?? null;
    const rows = await tx.many<MemoryRow>(
      `INSERT INTO memories (id, user_id, agent_id, type, text, tags_json, importance, confidence,
         source_session_id, source_run_id, created_at, updated_at, embedding, embedding_model, embedding_dims,
         fts_tokens)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
         $7::int[], $8::float8[], $9::text[], $10::text[], $11::bigint[], $11::bigint[], $12::bytea[],
         $13::text[], $14::int[], $15::int[])
       RETURNING ${COLUMNS}`,
      [
        ids,
        pending.map((p) => p.input.userId),
        pending.map((p) => agentKey(p.input.agentId)),
        pending.map((p) => p.input.type),
        pending.map((p) => p.input.text),
        pending.map((p) => JSON.stringify(p.input.tags)),
        pending.map((p) => p.input.importance),
        pending.map((p) => p.input.confidence),
        pending.map((p) => p.input.sourceSessionId ?? null),
        pending.map((p) => p.input.sourceRunId ?? null),
        pending.map(() => now),
        pending.map((p) => (p.vector ? vectorToBlob(p.vector) : null)),
        pending.map((p) => (p.vector ? model : null)),
        pending.map((p) => (p.vector ? p.vector.length : null)),
        postings.map((p) => p.tokens),
      ],
    );
    const memoryIds: number[] = [];
    const userIds: string[] = [];
    const agentIds: string[] = [];
    const types: string[] = [];
    const terms: string[] = [];
    const tfs: number[] = [];
    const docTokens: number[] = [];
    const tokens = new Map<string, number>();
    pending.forEach((p, i) => {
      const posting = postings[i]!;
      for (let t = 0; t < posting.terms.length; t++) {
        memoryIds.push(ids[i]!);
        userIds.push(p.input.userId);
        agentIds.push(agentKey(p.input.agentId));
        types.push(p.input.type);
        terms.push(posting.terms[t]!);
        tfs.push(posting.tfs[t]!);
        docTokens.push(posting.tokens);
      }
      tokens.set(p.input.userId, (tokens.get(p.input.userId) ?? 0) + posting.tokens);
    });
    if (terms.length > 0) {
      await tx.run(
        `INSERT INTO memory_terms (memory_id, user_id, agent_id, type, term, tf, doc_tokens)
         SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[])`,
        [memoryIds, userIds, agentIds, types, terms, tfs, docTokens],
      );
    }
    this.bm25.wrote(pending.length);
    for (const user of users.values()) {
      const added = pending.filter((p) => p.input.userId === user.userId).length;
      user.count += added;
      await tx.run("UPDATE memory_user_state SET count = $2, tokens = tokens + $3 WHERE user_id = $1", [
        user.userId,
        user.count,
        tokens.get(user.userId) ?? 0,
      ]);
    }
    const byId = new Map(rows.map((r) => [r.id, r]));
    return pending.map((p, i): RememberResult => {
      const id = ids[i]!;
      const user = users.get(p.input.userId)!;
      if (user.index && p.vector) {
        if (user.index.dims === p.vector.length)
          user.index.upsert(id, p.vector, { agentId: agentKey(p.input.agentId), type: p.input.type });
        else user.index = undefined;
      }
      const memory = toMemoryRecord(byId.get(id)!);
      return { id: memory.id, merged: false, memory, evicted: [] };
    });
  }

  /** Merges one input into a near-duplicate or inserts it, then evicts down to the cap. */
  private async rememberOne(tx: PgQueryable, p: PendingWrite, user: UserWrite): Promise<RememberResult> {
    const { input, vector } = p;
    const duplicate = p.merge ? await this.findDuplicate(tx, input, vector, user) : undefined;
    let row: MemoryRow;
    let vectorChange: "set" | "cleared" | "kept";
    if (duplicate) {
      const merged = await this.merge(tx, duplicate.row, input, vector);
      row = merged.row;
      vectorChange = merged.vectorChange;
    } else {
      row = await this.insert(tx, input, vector);
      user.count++;
      vectorChange = vector ? "set" : "kept";
    }
    const evicted = await this.evict(tx, user, row.id);
    const index = user.index;
    if (index) {
      for (const gone of evicted) index.remove(gone);
      if (vectorChange === "cleared") index.remove(row.id);
      if (vectorChange === "set" && vector) {
        if (index.dims !== vector.length) user.index = undefined;
        else
          index.upsert(row.id, vector, {
            agentId: agentKey(input.agentId),
            type: (duplicate?.row.type as MemoryType) ?? input.type,
          });
      }
    }
    return rules.rememberResult(row, duplicate, evicted);
  }

  private async insert(
    tx: PgQueryable,
    input: CleanInput,
    vector: Float32Array | undefined,
  ): Promise<MemoryRow> {
    const now = this.settings.now();
    const postings = postingsOf(input.text);
    const row = await tx.one<MemoryRow>(
      `WITH ins AS (
         INSERT INTO memories (user_id, agent_id, type, text, tags_json, importance, confidence,
           source_session_id, source_run_id, created_at, updated_at, embedding, embedding_model,
           embedding_dims, fts_tokens)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14)
         RETURNING ${COLUMNS}),
       terms AS (
         INSERT INTO memory_terms (memory_id, user_id, agent_id, type, term, tf, doc_tokens)
         SELECT ins.id, $1, $2, $3, t.term, t.tf, $14 FROM ins, unnest($15::text[], $16::int[]) AS t (term, tf)),
       state AS (
         UPDATE memory_user_state SET count = count + 1, tokens = tokens + $14 WHERE user_id = $1)
       SELECT * FROM ins`,
      [
        ...memoryInputColumns(input),
        now,
        ...vectorColumns(vector, this.settings.embeddingModel),
        postings.tokens,
        postings.terms,
        postings.tfs,
      ],
    );
    this.bm25.wrote();
    return row!;
  }

  /** Folds the input into an existing memory; says what happened to its vector. */
  private async merge(
    tx: PgQueryable,
    row: MemoryRow,
    input: CleanInput,
    vector: Float32Array | undefined,
  ): Promise<{ row: MemoryRow; vectorChange: "set" | "cleared" | "kept" }> {
    const change = rules.mergeChange(row, input);
    const now = this.settings.now();
    if (!change.textChanged) {
      const kept = await tx.one<MemoryRow>(
        `UPDATE memories SET tags_json = $2, importance = $3, confidence = $4, updated_at = $5
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [row.id, change.tagsJson, change.importance, change.confidence, now],
      );
      return { row: kept!, vectorChange: "kept" };
    }
    const merged = await tx.one<MemoryRow>(
      `UPDATE memories SET text = $2, tags_json = $3, importance = $4, confidence = $5, updated_at = $6,
         source_session_id = coalesce($7, source_session_id), source_run_id = coalesce($8, source_run_id),
         embedding = $9, embedding_model = $10, embedding_dims = $11
       WHERE id = $1 RETURNING ${COLUMNS}`,
      [row.id, ...rules.mergedTextColumns(change, now, input, vector, this.settings.embeddingModel)],
    );
    await this.reindex(tx, merged!, change.text);
    return { row: merged!, vectorChange: vector ? "set" : "cleared" };
  }

  /** Rewrites a memory's postings and length for a new text (the user's row is locked already). */
  private async reindex(tx: PgQueryable, row: MemoryRow, text: string): Promise<void> {
    const postings = postingsOf(text);
    await tx.run(
      `WITH old AS (SELECT fts_tokens FROM memories WHERE id = $1),
       gone AS (DELETE FROM memory_terms WHERE memory_id = $1 AND NOT (term = ANY($3::text[]))),
       put AS (
         INSERT INTO memory_terms (memory_id, user_id, agent_id, type, term, tf, doc_tokens)
         SELECT $1, $2, $6, $7, t.term, t.tf, $5 FROM unnest($3::text[], $4::int[]) AS t (term, tf)
         ON CONFLICT (memory_id, term) DO UPDATE SET tf = excluded.tf, doc_tokens = excluded.doc_tokens,
           type = excluded.type),
       state AS (
         UPDATE memory_user_state SET tokens = tokens + $5 - (SELECT fts_tokens FROM old) WHERE user_id = $2)
       UPDATE memories SET fts_tokens = $5 WHERE id = $1`,
      [row.id, row.user_id, postings.terms, postings.tfs, postings.tokens, row.agent_id, row.type],
    );
    this.bm25.wrote();
  }

  /** The most similar memory in the same scope that is close enough to merge into, if any. */
  private async findDuplicate(
    tx: PgQueryable,
    input: CleanInput,
    vector: Float32Array | undefined,
    user: UserWrite,
  ): Promise<rules.Duplicate | undefined> {
    const near = rules.duplicateSearch(input);
    const ids = new Set<number>();
    for (const hit of await this.bm25.search(tx, near.filter, near.terms, near.candidates)) ids.add(hit.id);
    if (vector && this.vectors) {
      if (!user.index || user.index.dims !== vector.length)
        user.index = await this.index(tx, input.userId, user.after, vector.length);
      for (const hit of user.index.search(vector, near.candidates, near.sameAgent)) ids.add(hit.id);
    }
    if (ids.size === 0) return undefined;
    const rows = await tx.many<MemoryRow & { embedding: Buffer | null }>(
      `SELECT ${COLUMNS}, CASE WHEN embedding_model = $3 AND embedding_dims = $4 THEN embedding END AS embedding
       FROM memories WHERE user_id = $1 AND id = ANY($2::bigint[])`,
      [input.userId, [...ids], this.settings.embeddingModel ?? null, vector?.length ?? null],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    const embeddings = new Map<MemoryRow, Buffer | null>();
    return rules.closestDuplicate(
      ids,
      (id) => {
        const found = byId.get(id);
        if (!found) return undefined;
        const { embedding, ...row } = found;
        embeddings.set(row, embedding);
        return row;
      },
      near.agent,
      { text: input.text, vector },
      (row) => {
        const embedding = embeddings.get(row);
        return embedding ? blobToVector(embedding) : undefined;
      },
      this.settings,
    );
  }

  /**
   * Deletes the lowest-scoring memories above the cap (never `keep`, the one just written), with their
   * postings, and moves the user's count and token total down.
   */
  private async evict(tx: PgQueryable, user: UserWrite, keep: number): Promise<number[]> {
    const excess = user.count - this.settings.cap;
    if (excess <= 0) return [];
    const rows = await tx.many<rules.EvictionRow>(
      "SELECT id, importance, access_count, updated_at, last_accessed_at FROM memories WHERE user_id = $1",
      [user.userId],
    );
    const victims = rules.evictionVictims(rows, excess, keep, this.settings.now());
    if (victims.length === 0) return [];
    await tx.run(
      `WITH gone AS (DELETE FROM memories WHERE user_id = $1 AND id = ANY($2::bigint[]) RETURNING id, fts_tokens),
       terms AS (DELETE FROM memory_terms WHERE memory_id IN (SELECT id FROM gone))
       UPDATE memory_user_state SET count = count - (SELECT count(*) FROM gone),
         tokens = tokens - (SELECT coalesce(sum(fts_tokens), 0) FROM gone)
       WHERE user_id = $1`,
      [user.userId, victims],
    );
    user.count -= victims.length;
    return victims;
  }
}
