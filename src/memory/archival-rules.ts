/**
 * What archival memory decides, whichever database holds it: the settings and their defaults, which
 * BM25 hits count as evidence, how the BM25 and vector lists fuse into ranked hits, how a new memory
 * folds into a near-duplicate, how near is near enough, and which memories are evicted. The SQLite
 * and PostgreSQL stores do the I/O around these pure functions, so both rank and merge alike.
 */

import { jaccard, MatchEvidence, normalizeText, queryTerms, termSet } from "../store/text/terms.js";
import { type CleanInput, mergedText } from "./input.js";
import {
  DEFAULT_SEARCH_WEIGHTS,
  evictionScore,
  reciprocalRankFusion,
  type SearchWeights,
  weightFactor,
} from "./ranking.js";
import { agentKey, type MemoryRow, sourceColumns, toMemoryRecord, vectorColumns } from "./rows.js";
import type { MemorySearchHit, MemoryType, RememberResult } from "./types.js";
import { cosine } from "./vectors/quantized-index.js";

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
  /** Work cap for a BM25 query, in postings (see term-cutoff.ts; default 3000). */
  maxPostings?: number;
  /** Depth of each ranked list before fusion (default 50). */
  candidates?: number;
  weights?: SearchWeights;
  /** Users whose vector indexes stay in memory (default 8). */
  cachedUsers?: number;
}

export const DEFAULT_MAX_POSTINGS = 3000;

/** Near-duplicate candidates looked at per list (BM25, vectors) before a write. */
export const DUPLICATE_CANDIDATES = 8;

/** The options with their defaults filled in. */
export interface ArchivalSettings {
  embeddingModel: string | undefined;
  now: () => number;
  mergeThreshold: number;
  textMergeThreshold: number;
  cap: number;
  maxPostings: number;
  candidates: number;
  weights: SearchWeights;
  cachedUsers: number;
}

export function archivalSettings(options: ArchivalOptions = {}): ArchivalSettings {
  return {
    embeddingModel: options.embeddingModel,
    now: options.now ?? Date.now,
    mergeThreshold: options.mergeThreshold ?? 0.85,
    textMergeThreshold: options.textMergeThreshold ?? 0.8,
    cap: Math.max(1, options.maxMemoriesPerUser ?? 10_000),
    maxPostings: options.maxPostings ?? DEFAULT_MAX_POSTINGS,
    candidates: Math.max(1, options.candidates ?? 50),
    weights: options.weights ?? DEFAULT_SEARCH_WEIGHTS,
    cachedUsers: options.cachedUsers ?? 8,
  };
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

/** A BM25 hit: FTS5-compatible relevance (higher is better) and the text, for the evidence check. */
export interface Bm25Hit {
  id: number;
  score: number;
  text: string;
}

/** Which memories a BM25 search may see. */
export interface Bm25Filter {
  userId: string;
  /** Restrict to shared memories plus this agent's. */
  agentId?: string | undefined;
  /** Restrict to exactly this agent key ('' = shared only); used by duplicate checks. */
  exactAgent?: string;
  type?: MemoryType | undefined;
}

/** The metadata vector indexes keep per memory, for filtering by agent and type. */
export interface VectorMeta {
  agentId: string;
  type: MemoryType;
}

/** Whether a vector index entry is visible to a search. */
export function vectorFilter(query: { agentId?: string | undefined; type?: MemoryType | undefined }) {
  const agent = query.agentId;
  return (meta: VectorMeta) =>
    (agent === undefined || meta.agentId === "" || meta.agentId === agent) &&
    (query.type === undefined || meta.type === query.type);
}

/** The BM25 hits (best first) that are evidence enough (see MatchEvidence), as a ranked id list. */
export function acceptedBm25(terms: readonly string[], matched: readonly Bm25Hit[]): string[] {
  // Hits that share only single CJK characters with the query need enough of them (terms.ts).
  const evidence = new MatchEvidence(terms);
  const best = matched[0]?.score ?? 0;
  return matched.filter((h) => evidence.accepts(h.text, h.score, best)).map((h) => String(h.id));
}

/** Ranked id lists (BM25, then vectors), the similarities of vector hits, ready for fusion. */
export interface RankedLists {
  bm25: string[];
  vector?: string[] | undefined;
  similarity: Map<string, number>;
}

/**
 * A search's lists: the BM25 hits that count as evidence, and the vector hits (when vectors were
 * searched) that clear the query's minimum similarity.
 */
export function rankedLists(
  query: ArchivalSearch,
  matched: readonly Bm25Hit[],
  vectorHits: readonly { id: number; score: number }[] | undefined,
): RankedLists {
  const lists: RankedLists = { bm25: acceptedBm25(query.terms, matched), similarity: new Map() };
  if (vectorHits) {
    const hits = vectorHits.filter((h) => h.score >= query.minSimilarity);
    for (const hit of hits) lists.similarity.set(String(hit.id), hit.score);
    lists.vector = hits.map((h) => String(h.id));
  }
  return lists;
}

/** The ids the fused result needs rows for; empty when nothing matched. */
export function fusedIds(lists: RankedLists): number[] {
  return [...reciprocalRankFusion(listsOf(lists)).keys()].map(Number);
}

function listsOf(lists: RankedLists): string[][] {
  return lists.vector ? [lists.bm25, lists.vector] : [lists.bm25];
}

/** Hits from the lists and the rows of their ids: RRF, weighted by recency, importance and use. */
export function fuseHits(
  lists: RankedLists,
  rows: readonly MemoryRow[],
  now: number,
  weights: SearchWeights,
  limit: number,
): MemorySearchHit[] {
  const fused = reciprocalRankFusion(listsOf(lists));
  const rankIn = (list: string[] | undefined, id: string) => {
    const at = list?.indexOf(id) ?? -1;
    return at >= 0 ? at + 1 : undefined;
  };
  const hits = rows.map((row): MemorySearchHit => {
    const memory = toMemoryRecord(row);
    const hit: MemorySearchHit = {
      memory,
      score: (fused.get(memory.id) ?? 0) * weightFactor(memory, now, weights),
    };
    const bm25Rank = rankIn(lists.bm25, memory.id);
    const vectorRank = rankIn(lists.vector, memory.id);
    if (bm25Rank !== undefined) hit.bm25Rank = bm25Rank;
    if (vectorRank !== undefined) hit.vectorRank = vectorRank;
    const sim = lists.similarity.get(memory.id);
    if (sim !== undefined) hit.similarity = sim;
    return hit;
  });
  return hits.sort((a, b) => b.score - a.score || Number(b.memory.id) - Number(a.memory.id)).slice(0, limit);
}

/** The new field values when `input` folds into the existing memory `row`. */
export interface MergeChange {
  text: string;
  /** False when the stored text stays (only tags, importance and confidence change). */
  textChanged: boolean;
  tagsJson: string;
  importance: number;
  confidence: number;
}

/**
 * The columns a merge that changed the text writes, in this order: text, tags_json, importance,
 * confidence, updated_at, the input's source (kept where it has none) and the new text's vector.
 */
export function mergedTextColumns(
  change: MergeChange,
  now: number,
  input: CleanInput,
  vector: Float32Array | undefined,
  model: string | undefined,
) {
  return [
    change.text,
    change.tagsJson,
    change.importance,
    change.confidence,
    now,
    ...sourceColumns(input),
    ...vectorColumns(vector, model),
  ] as const;
}

export function mergeChange(row: MemoryRow, input: CleanInput): MergeChange {
  const text = mergedText(row.text, input.text);
  return {
    text,
    textChanged: text !== row.text,
    tagsJson: JSON.stringify([...new Set([...toMemoryRecord(row).tags, ...input.tags])].slice(0, 20)),
    importance: Math.max(row.importance, input.importance),
    confidence: Math.max(row.confidence, input.confidence),
  };
}

/** Where a new memory's near-duplicates are looked for: its own agent's (or the shared) memories. */
export interface DuplicateSearch {
  agent: string;
  /** The BM25 search: its scope, terms and how many candidates. */
  filter: Bm25Filter;
  terms: string[];
  candidates: number;
  /** The vector search's filter. */
  sameAgent: (meta: VectorMeta) => boolean;
}

export function duplicateSearch(input: CleanInput): DuplicateSearch {
  const agent = agentKey(input.agentId);
  return {
    agent,
    filter: { userId: input.userId, exactAgent: agent },
    terms: queryTerms(input.text),
    candidates: DUPLICATE_CANDIDATES,
    sameAgent: (meta) => meta.agentId === agent,
  };
}

/** A stored memory close enough to merge into, and how close. */
export interface Duplicate {
  row: MemoryRow;
  similarity: number;
}

/**
 * The closest of the candidate memories (`ids`, read by `rowOf`) in the input's scope (`agent`) that is
 * near enough to merge the input into; `storedVector` reads a candidate's vector when it is needed.
 */
export function closestDuplicate(
  ids: Iterable<number>,
  rowOf: (id: number) => MemoryRow | undefined,
  agent: string,
  input: { text: string; vector: Float32Array | undefined },
  storedVector: (row: MemoryRow) => Float32Array | undefined,
  settings: ArchivalSettings,
): Duplicate | undefined {
  const probe = { normalized: normalizeText(input.text), terms: termSet(input.text), vector: input.vector };
  let best: Duplicate | undefined;
  for (const id of ids) {
    const row = rowOf(id);
    if (!row || row.agent_id !== agent) continue;
    const similarity = duplicateSimilarity(
      row,
      normalizeText(row.text),
      () => termSet(row.text),
      probe,
      () => storedVector(row),
      settings,
    );
    if (similarity !== undefined && (!best || similarity > best.similarity)) best = { row, similarity };
  }
  return best;
}

/** What remember says: the memory as stored, whether (and how closely) it merged, what was evicted. */
export function rememberResult(
  row: MemoryRow,
  duplicate: Duplicate | undefined,
  evicted: readonly number[],
): RememberResult {
  const memory = toMemoryRecord(row);
  const result: RememberResult = {
    id: memory.id,
    merged: duplicate !== undefined,
    memory,
    evicted: evicted.map(String),
  };
  if (duplicate) result.similarity = duplicate.similarity;
  return result;
}

/** What a near-duplicate check compares a stored memory with: the new text, its terms and vector. */
export interface DuplicateProbe {
  /** normalizeText of the new text. */
  normalized: string;
  /** termSet of the new text. */
  terms: Set<string>;
  vector: Float32Array | undefined;
}

/**
 * How similar a stored memory is to the probe, when close enough to merge: 1 for the same normalized
 * text; the cosine when both have vectors of this model and it clears the bar; else the term Jaccard
 * when that does; undefined otherwise. `storedVector` is read only when the cosine applies.
 */
export function duplicateSimilarity(
  row: MemoryRow,
  rowNormalized: string,
  rowTerms: () => Set<string>,
  probe: DuplicateProbe,
  storedVector: () => Float32Array | undefined,
  settings: ArchivalSettings,
): number | undefined {
  if (rowNormalized === probe.normalized) return 1;
  if (
    probe.vector &&
    row.embedding_model === settings.embeddingModel &&
    row.embedding_dims === probe.vector.length
  ) {
    const stored = storedVector();
    if (stored) {
      const cos = cosine(probe.vector, stored);
      if (cos >= settings.mergeThreshold) return cos;
    }
  }
  const overlap = jaccard(probe.terms, rowTerms());
  return overlap >= settings.textMergeThreshold ? overlap : undefined;
}

/** The facts eviction ranks a memory by. */
export interface EvictionRow {
  id: number;
  importance: number;
  access_count: number;
  updated_at: number;
  last_accessed_at: number | null;
}

/** The `excess` lowest-scoring memories, never `keep` (the one just written); lowest id first on ties. */
export function evictionVictims(
  rows: readonly EvictionRow[],
  excess: number,
  keep: number,
  now: number,
): number[] {
  if (excess <= 0) return [];
  return rows
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
}
