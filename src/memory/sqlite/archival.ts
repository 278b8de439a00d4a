/**
 * Archival memory on one SQLite connection: the synchronous core of remember (merge or insert,
 * then evict), hybrid search, and plain reads. Embedding happens before these calls, outside any
 * transaction, so a slow embedding API never holds the database lock.
 */
import type { Database } from "better-sqlite3";
import { type CleanInput, mergedText } from "../input.js";
import {
  DEFAULT_SEARCH_WEIGHTS,
  evictionScore,
  reciprocalRankFusion,
  type SearchWeights,
  weightFactor,
} from "../ranking.js";
import { jaccard, MatchEvidence, normalizeText, queryTerms, termSet } from "../text/terms.js";
import type { MemoryRecord, MemorySearchHit, MemoryType, RememberResult } from "../types.js";
import { blobToVector, vectorToBlob } from "../vectors/blob.js";
import { cosine } from "../vectors/quantized-index.js";
import { type ArchivalStatements, prepareArchival } from "./archival-statements.js";
import { Bm25Index, DEFAULT_MAX_POSTINGS } from "./bm25.js";
import { agentKey, type MemoryRow, toMemoryRecord } from "./rows.js";
import { VectorCache } from "./vector-cache.js";

export interface ArchivalOptions {
  /** Names the vectors written and searched; undefined means BM25 only. */
  embeddingModel?: string;
  now?: () => number;
  /** Cosine at or above which a new memory merges into an existing one (default 0.85). */
  mergeThreshold?: number;
  /** Term Jaccard at or above which texts count as near-duplicates (default 0.8). */
  textMergeThreshold?: number;
  /** Archival memories kept per user before the lowest-scoring are evicted (default 10,000). */
  maxMemoriesPerUser?: number;
  /** Work cap for a BM25 query, in postings (see bm25.ts; default 3000). */
  maxPostings?: number;
  /** Depth of each ranked list before fusion (default 50). */
  candidates?: number;
  weights?: SearchWeights;
  /** Users whose vector indexes stay in memory (default 8). */
  cachedUsers?: number;
}

export interface ArchivalSearch {
  userId: string;
  agentId?: string | undefined;
  type?: MemoryType | undefined;
  terms: string[];
  vector?: Float32Array | undefined;
  limit: number;
  minSimilarity: number;
}

interface Duplicate {
  row: MemoryRow;
  similarity: number;
}

const DUPLICATE_CANDIDATES = 8;

/** Archival memory operations; callers wrap them in transactions and error mapping. */
export class ArchivalMemory {
  private readonly sql: ArchivalStatements;
  private readonly bm25: Bm25Index;
  private readonly vectors: VectorCache | undefined;
  private readonly now: () => number;
  private readonly mergeThreshold: number;
  private readonly textMergeThreshold: number;
  private readonly cap: number;
  private readonly candidates: number;
  private readonly weights: SearchWeights;

  constructor(
    db: Database,
    private readonly options: ArchivalOptions = {},
  ) {
    this.sql = prepareArchival(db);
    this.bm25 = new Bm25Index(db, options.maxPostings ?? DEFAULT_MAX_POSTINGS);
    this.vectors = options.embeddingModel
      ? new VectorCache(db, options.embeddingModel, options.cachedUsers ?? 8)
      : undefined;
    this.now = options.now ?? Date.now;
    this.mergeThreshold = options.mergeThreshold ?? 0.85;
    this.textMergeThreshold = options.textMergeThreshold ?? 0.8;
    this.cap = Math.max(1, options.maxMemoriesPerUser ?? 10_000);
    this.candidates = Math.max(1, options.candidates ?? 50);
    this.weights = options.weights ?? DEFAULT_SEARCH_WEIGHTS;
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
    const memory = toMemoryRecord(this.sql.byId.get(id, input.userId)!);
    const result: RememberResult = {
      id: memory.id,
      merged: duplicate !== undefined,
      memory,
      evicted: evicted.map(String),
    };
    if (duplicate) result.similarity = duplicate.similarity;
    return result;
  }

  /** Ranked hits: BM25 and vector lists fused with RRF, weighted by recency, importance and use. */
  search(query: ArchivalSearch): MemorySearchHit[] {
    // Most users of a busy server have no memories yet: one indexed read instead of a search.
    if (this.count(query.userId) === 0) return [];
    const scope = { userId: query.userId, agentId: query.agentId, type: query.type };
    const agent = query.agentId;
    // The vector scan starts first: on a big index a worker thread runs it during the BM25 query.
    const vectorSearch =
      query.vector && this.vectors
        ? this.vectors
            .index(query.userId, query.vector.length)
            .beginSearch(
              query.vector,
              this.candidates,
              (meta) =>
                (agent === undefined || meta.agentId === "" || meta.agentId === agent) &&
                (query.type === undefined || meta.type === query.type),
            )
        : undefined;
    const matched = query.terms.length > 0 ? this.bm25.search(scope, query.terms, this.candidates) : [];
    // Hits that share only single CJK characters with the query need enough of them (terms.ts).
    const evidence = new MatchEvidence(query.terms);
    const best = matched[0]?.score ?? 0;
    const bm25 = matched.filter((h) => evidence.accepts(h.text, h.score, best));
    const lists = [bm25.map((h) => String(h.id))];
    const similarity = new Map<string, number>();
    if (vectorSearch) {
      const hits = vectorSearch.result().filter((h) => h.score >= query.minSimilarity);
      for (const hit of hits) similarity.set(String(hit.id), hit.score);
      lists.push(hits.map((h) => String(h.id)));
    }
    const fused = reciprocalRankFusion(lists);
    if (fused.size === 0) return [];
    const rows = this.sql.byIds.all(query.userId, JSON.stringify([...fused.keys()].map(Number)));
    const now = this.now();
    const rankIn = (list: string[] | undefined, id: string) => {
      const at = list?.indexOf(id) ?? -1;
      return at >= 0 ? at + 1 : undefined;
    };
    const hits = rows.map((row): MemorySearchHit => {
      const memory = toMemoryRecord(row);
      const hit: MemorySearchHit = {
        memory,
        score: (fused.get(memory.id) ?? 0) * weightFactor(memory, now, this.weights),
      };
      const bm25Rank = rankIn(lists[0], memory.id);
      const vectorRank = rankIn(lists[1], memory.id);
      if (bm25Rank !== undefined) hit.bm25Rank = bm25Rank;
      if (vectorRank !== undefined) hit.vectorRank = vectorRank;
      const sim = similarity.get(memory.id);
      if (sim !== undefined) hit.similarity = sim;
      return hit;
    });
    return hits
      .sort((a, b) => b.score - a.score || Number(b.memory.id) - Number(a.memory.id))
      .slice(0, query.limit);
  }

  get(userId: string, id: number): MemoryRecord | undefined {
    const row = this.sql.byId.get(id, userId);
    return row && toMemoryRecord(row);
  }

  list(
    userId: string,
    agentId: string | undefined,
    type: MemoryType | undefined,
    limit: number,
    offset: number,
  ) {
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
   * Replaces a memory's text, type, tags and importance as a person edited them; `vector` is the new
   * text's (unit length), or undefined to drop the old one when the text changed. The cached vector
   * index of the user is dropped and rebuilt on the next search.
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
        ? (this.options.embeddingModel ?? null)
        : null;
    const dims = keepVector ? (row.embedding_dims ?? null) : vector ? vector.length : null;
    this.sql.edit.run(
      next.text,
      next.type,
      JSON.stringify(next.tags),
      next.importance,
      this.now(),
      embedding,
      model,
      dims,
      id,
      userId,
    );
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
    const now = this.now();
    for (const id of ids) this.sql.touch.run(now, id, userId);
  }

  private insert(input: CleanInput, vector: Float32Array | undefined): number {
    const now = this.now();
    const result = this.sql.insert.run(
      input.userId,
      agentKey(input.agentId),
      input.type,
      input.text,
      JSON.stringify(input.tags),
      input.importance,
      input.confidence,
      input.sourceSessionId ?? null,
      input.sourceRunId ?? null,
      now,
      now,
      vector ? vectorToBlob(vector) : null,
      vector ? (this.options.embeddingModel ?? null) : null,
      vector ? vector.length : null,
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
    const tags = JSON.stringify([...new Set([...toMemoryRecord(row).tags, ...input.tags])].slice(0, 20));
    const importance = Math.max(row.importance, input.importance);
    const confidence = Math.max(row.confidence, input.confidence);
    const now = this.now();
    const text = mergedText(row.text, input.text);
    if (text === row.text) {
      this.sql.mergeMeta.run(tags, importance, confidence, now, row.id);
      return "kept";
    }
    this.sql.mergeText.run(
      text,
      tags,
      importance,
      confidence,
      now,
      input.sourceSessionId ?? null,
      input.sourceRunId ?? null,
      vector ? vectorToBlob(vector) : null,
      vector ? (this.options.embeddingModel ?? null) : null,
      vector ? vector.length : null,
      row.id,
    );
    this.bm25.put(row.id, text);
    return vector ? "set" : "cleared";
  }

  /** The most similar memory in the same scope that is close enough to merge into, if any. */
  private findDuplicate(input: CleanInput, vector: Float32Array | undefined): Duplicate | undefined {
    const agent = agentKey(input.agentId);
    const ids = new Set<number>();
    for (const hit of this.bm25.search(
      { userId: input.userId, exactAgent: agent },
      queryTerms(input.text),
      DUPLICATE_CANDIDATES,
    )) {
      ids.add(hit.id);
    }
    if (vector && this.vectors) {
      const index = this.vectors.index(input.userId, vector.length);
      for (const hit of index.search(vector, DUPLICATE_CANDIDATES, (meta) => meta.agentId === agent))
        ids.add(hit.id);
    }
    const normalized = normalizeText(input.text);
    const terms = termSet(input.text);
    let best: Duplicate | undefined;
    for (const id of ids) {
      const row = this.sql.byId.get(id, input.userId);
      if (!row || row.agent_id !== agent) continue;
      const similarity = this.similarity(row, normalized, terms, vector);
      if (similarity !== undefined && (!best || similarity > best.similarity)) best = { row, similarity };
    }
    return best;
  }

  /** Cosine when both have vectors of this model and it clears the bar; else Jaccard when that does. */
  private similarity(
    row: MemoryRow,
    normalized: string,
    terms: Set<string>,
    vector: Float32Array | undefined,
  ) {
    if (normalizeText(row.text) === normalized) return 1;
    if (
      vector &&
      row.embedding_model === this.options.embeddingModel &&
      row.embedding_dims === vector.length
    ) {
      const stored = this.sql.embeddingOf.get(row.id);
      if (stored?.embedding) {
        const cos = cosine(vector, blobToVector(stored.embedding));
        if (cos >= this.mergeThreshold) return cos;
      }
    }
    const overlap = jaccard(terms, termSet(row.text));
    return overlap >= this.textMergeThreshold ? overlap : undefined;
  }

  /** Deletes the lowest-scoring memories above the cap (never `keep`, the one just written). */
  private evict(userId: string, keep: number): number[] {
    const excess = this.count(userId) - this.cap;
    if (excess <= 0) return [];
    const now = this.now();
    const victims = this.sql.evictionRows
      .all(userId)
      .filter((r) => r.id !== keep)
      .map((r) => ({
        id: r.id,
        score: evictionScore(
          {
            importance: r.importance,
            accessCount: r.access_count,
            updatedAt: r.updated_at,
            lastAccessedAt: r.last_accessed_at ?? undefined,
          },
          now,
        ),
      }))
      .sort((a, b) => a.score - b.score || a.id - b.id)
      .slice(0, excess)
      .map((v) => v.id);
    for (const id of victims) this.sql.remove.run(id, userId);
    return victims;
  }
}
