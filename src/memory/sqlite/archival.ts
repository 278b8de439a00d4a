/**
 * Archival memory on one SQLite connection: the synchronous core of remember (merge or insert,
 * then evict), hybrid search, and plain reads. Embedding happens before these calls, outside any
 * transaction, so a slow embedding API never holds the database lock.
 */
import type { Database } from "better-sqlite3";
import type { ArchivalOptions, ArchivalSearch, ArchivalSettings } from "../archival-rules.js";
import * as rules from "../archival-rules.js";
import type { CleanInput } from "../input.js";
import {
  agentKey,
  editedColumns,
  type MemoryRow,
  memoryInputColumns,
  toMemoryRecord,
  vectorColumns,
} from "../rows.js";
import type { ArchivalBackend } from "../store-front.js";
import type { MemoryRecord, MemorySearchHit, MemoryType, RememberResult } from "../types.js";
import { blobToVector, vectorToBlob } from "../vectors/blob.js";
import { type ArchivalStatements, prepareArchival } from "./archival-statements.js";
import { Bm25Index } from "./bm25.js";
import { VectorCache } from "./vector-cache.js";

export type { ArchivalOptions, ArchivalSearch } from "../archival-rules.js";

/** Archival memory operations; callers wrap them in transactions and error mapping. */
export class ArchivalMemory {
  private readonly sql: ArchivalStatements;
  private readonly bm25: Bm25Index;
  private readonly vectors: VectorCache | undefined;
  private readonly settings: ArchivalSettings;

  constructor(db: Database, options: ArchivalOptions = {}) {
    this.settings = rules.archivalSettings(options);
    this.sql = prepareArchival(db);
    this.bm25 = new Bm25Index(db, this.settings.maxPostings);
    this.vectors = options.embeddingModel
      ? new VectorCache(db, options.embeddingModel, this.settings.cachedUsers)
      : undefined;
  }

  /**
   * Merges the input into a near-duplicate (unless `merge` is false: bulk imports), or inserts it; then
   * evicts down to the cap. `vector` is unit length.
   */
  remember(input: CleanInput, vector: Float32Array | undefined, merge = true): RememberResult {
    const before = this.sql.version.get(input.userId) ?? 0;
    const duplicate = merge ? this.findDuplicate(input, vector) : undefined;
    let id: number;
    let vectorChange: "set" | "cleared" | "kept";
    if (duplicate) {
      id = duplicate.row.id;
      vectorChange = this.merge(duplicate.row, input, vector);
    } else {
      id = this.insert(input, vector);
      vectorChange = vector ? "set" : "kept";
    }
    const evicted = this.evict(input.userId, id);
    const after = this.sql.version.get(input.userId) ?? 0;
    this.vectors?.afterWrite(input.userId, before, after, (index) => {
      for (const gone of evicted) index.remove(gone);
      if (vectorChange === "cleared") index.remove(id);
      if (vectorChange !== "set" || !vector) return true;
      if (index.dims !== vector.length) return false;
      index.upsert(id, vector, {
        agentId: agentKey(input.agentId),
        type: (duplicate?.row.type as MemoryType) ?? input.type,
      });
      return true;
    });
    return rules.rememberResult(this.sql.byId.get(id, input.userId)!, duplicate, evicted);
  }

  /** Ranked hits: BM25 and vector lists fused with RRF, weighted by recency, importance and use. */
  search(query: ArchivalSearch): MemorySearchHit[] {
    // Most users of a busy server have no memories yet: one indexed read instead of a search.
    if (this.count(query.userId) === 0) return [];
    const scope = { userId: query.userId, agentId: query.agentId, type: query.type };
    // The vector scan starts first: on a big index a worker thread runs it during the BM25 query.
    const vectorSearch =
      query.vector && this.vectors
        ? this.vectors
            .index(query.userId, query.vector.length)
            .beginSearch(query.vector, this.settings.candidates, rules.vectorFilter(query))
        : undefined;
    const matched =
      query.terms.length > 0 ? this.bm25.search(scope, query.terms, this.settings.candidates) : [];
    const lists = rules.rankedLists(query, matched, vectorSearch?.result());
    const ids = rules.fusedIds(lists);
    if (ids.length === 0) return [];
    const rows = this.sql.byIds.all(query.userId, JSON.stringify(ids));
    return rules.fuseHits(lists, rows, this.settings.now(), this.settings.weights, query.limit);
  }

  get(userId: string, id: number): MemoryRecord | undefined {
    const row = this.sql.byId.get(id, userId);
    return row && toMemoryRecord(row);
  }

  /** A page of the user's memories (shared ones and `agentId`'s, of `type`), latest first. */
  list(...[userId, agentId, type, limit, offset]: Parameters<ArchivalBackend["list"]>): MemoryRecord[] {
    return this.sql.list
      .all({ user: userId, agent: agentId ?? null, type: type ?? null, limit, offset })
      .map(toMemoryRecord);
  }

  count(userId: string): number {
    return this.sql.count.get(userId) ?? 0;
  }

  /** Deletes one memory; the delete trigger drops its FTS row, the cache follows via the version. */
  forget(userId: string, id: number): boolean {
    const before = this.sql.version.get(userId) ?? 0;
    const removed = this.sql.remove.run(id, userId).changes > 0;
    if (removed) {
      const after = this.sql.version.get(userId) ?? 0;
      this.vectors?.afterWrite(userId, before, after, (index) => {
        index.remove(id);
        return true;
      });
    }
    return removed;
  }

  /**
   * A person's edit (see `MemoryBackend.edit`); the vector stays when the text did, and the user's
   * cached vector index is dropped, to be rebuilt on the next search.
   */
  edit(
    userId: string,
    id: number,
    next: { text: string; type: MemoryType; tags: string[]; importance: number },
    vector: Float32Array | undefined,
  ): MemoryRecord | undefined {
    const row = this.sql.byId.get(id, userId);
    if (!row) return undefined;
    const keepVector = next.text === row.text;
    const stored = keepVector ? this.sql.embeddingOf.get(id) : undefined;
    const embedding = keepVector ? (stored?.embedding ?? null) : vector ? vectorToBlob(vector) : null;
    const model = keepVector
      ? (row.embedding_model ?? null)
      : vector
        ? (this.settings.embeddingModel ?? null)
        : null;
    const dims = keepVector ? (row.embedding_dims ?? null) : vector ? vector.length : null;
    this.sql.edit.run(...editedColumns(next, this.settings.now()), embedding, model, dims, id, userId);
    if (!keepVector) this.bm25.put(id, next.text);
    this.vectors?.drop(userId);
    const updated = this.sql.byId.get(id, userId);
    return updated && toMemoryRecord(updated);
  }

  /** Forgets cached vector indexes, e.g. after a rolled-back transaction patched one. */
  dropCaches(): void {
    this.vectors?.clear();
  }

  touch(userId: string, ids: readonly number[]): void {
    const now = this.settings.now();
    for (const id of ids) this.sql.touch.run(now, id, userId);
  }

  private insert(input: CleanInput, vector: Float32Array | undefined): number {
    const now = this.settings.now();
    const result = this.sql.insert.run(
      ...memoryInputColumns(input),
      now,
      now,
      ...vectorColumns(vector, this.settings.embeddingModel),
    );
    const id = Number(result.lastInsertRowid);
    this.bm25.put(id, input.text);
    return id;
  }

  /** Folds the input into an existing memory; says what happened to its vector. */
  private merge(
    row: MemoryRow,
    input: CleanInput,
    vector: Float32Array | undefined,
  ): "set" | "cleared" | "kept" {
    const change = rules.mergeChange(row, input);
    const now = this.settings.now();
    if (!change.textChanged) {
      this.sql.mergeMeta.run(change.tagsJson, change.importance, change.confidence, now, row.id);
      return "kept";
    }
    this.sql.mergeText.run(
      ...rules.mergedTextColumns(change, now, input, vector, this.settings.embeddingModel),
      row.id,
    );
    this.bm25.put(row.id, change.text);
    return vector ? "set" : "cleared";
  }

  /** The most similar memory in the same scope that is close enough to merge into, if any. */
  private findDuplicate(input: CleanInput, vector: Float32Array | undefined): rules.Duplicate | undefined {
    const near = rules.duplicateSearch(input);
    const ids = new Set<number>();
    for (const hit of this.bm25.search(near.filter, near.terms, near.candidates)) ids.add(hit.id);
    if (vector && this.vectors) {
      const index = this.vectors.index(input.userId, vector.length);
      for (const hit of index.search(vector, near.candidates, near.sameAgent)) ids.add(hit.id);
    }
    return rules.closestDuplicate(
      ids,
      (id) => this.sql.byId.get(id, input.userId),
      near.agent,
      { text: input.text, vector },
      (row) => {
        const stored = this.sql.embeddingOf.get(row.id)?.embedding;
        return stored ? blobToVector(stored) : undefined;
      },
      this.settings,
    );
  }

  /** Deletes the lowest-scoring memories above the cap (never `keep`, the one just written). */
  private evict(userId: string, keep: number): number[] {
    const excess = this.count(userId) - this.settings.cap;
    if (excess <= 0) return [];
    const victims = rules.evictionVictims(
      this.sql.evictionRows.all(userId),
      excess,
      keep,
      this.settings.now(),
    );
    for (const id of victims) this.sql.remove.run(id, userId);
    return victims;
  }
}
