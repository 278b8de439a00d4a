/**
 * The retrieval pipeline over child chunks:
 *   1. BM25 (FTS5) and vector search, in parallel: the query embedding request is in flight while
 *      BM25 runs;
 *   2. RRF fusion and expansion to parent chunks, de-duplicated;
 *   3. optional reranking of the top N parents by a model, under a deadline; on any failure the
 *      fused order stands and the trace says why.
 */
import { DimsumError, toDimsumError } from "../../errors.js";
import type { Embedder } from "../../memory/types.js";
import { queryTerms } from "../../store/text/terms.js";
import type { ChunkVectors } from "../store/chunk-vectors.js";
import type { KnowledgeRepository } from "../store/knowledge-repository.js";
import type { BaseRow, PassageRow } from "../store/rows.js";
import type {
  KnowledgeSearchQuery,
  KnowledgeSearchResult,
  Passage,
  Reranker,
  RetrievalTrace,
} from "../types.js";
import { type FusedParent, fuseToParents } from "./fuse.js";
import { withDeadline } from "./rerank.js";

export interface SearchContext {
  repo: KnowledgeRepository;
  embedder?: Embedder | undefined;
  vectors?: ChunkVectors | undefined;
  reranker?: Reranker | undefined;
  rrfK: number;
  /** Depth of each ranked child list before fusion. */
  candidates: number;
  rerankTopN: number;
  rerankTimeoutMs: number;
  /** Vector hits below this cosine are dropped before fusion. */
  minSimilarity: number;
}

export const MAX_TOP_K = 100;

interface VectorOutcome {
  ids: number[];
  ms: number;
}

function elapsed(since: number): number {
  return Math.round((performance.now() - since) * 100) / 100;
}

/** Orders parents by reranker score (unscored ones after, in fused order); returns the new order. */
function applyScores(parents: FusedParent[], scores: Map<string, number>): FusedParent[] {
  const scored = parents.map((p, i) => ({ p, i, s: scores.get(String(p.parentId)) }));
  return scored.sort((a, b) => (b.s ?? -1) - (a.s ?? -1) || a.i - b.i).map((x) => x.p);
}

/**
 * The passage of a parent chunk. Its section is the one of its best-matching child: a parent can
 * span several short sections, and the match sits under the child's heading.
 */
function toPassage(
  parent: FusedParent,
  row: PassageRow,
  rerankScore: number | undefined,
  sectionOf: ReadonlyMap<number, string | null>,
): Passage {
  const citation: Passage["citation"] = {
    kb: row.kb_name,
    documentId: String(row.document_id),
    title: row.title,
    source: row.source,
    mime: row.mime,
    chunkId: String(row.id),
    matchedChunkIds: parent.childIds.map(String),
  };
  const best = parent.childIds[0];
  const section = (best === undefined ? undefined : sectionOf.get(best)) ?? row.section;
  if (section !== null) citation.section = section;
  if (row.page_start !== null) citation.pageStart = row.page_start;
  if (row.page_end !== null) citation.pageEnd = row.page_end;
  const passage: Passage = {
    text: row.text,
    citation,
    score: rerankScore ?? parent.fusedScore,
    fusedScore: parent.fusedScore,
  };
  if (parent.bm25Rank !== undefined) passage.bm25Rank = parent.bm25Rank;
  if (parent.vectorRank !== undefined) passage.vectorRank = parent.vectorRank;
  if (rerankScore !== undefined) passage.rerankScore = rerankScore;
  return passage;
}

/**
 * Searches the given bases. A failing vector search or reranker degrades the result (and the trace
 * says so); only cancellation and database errors throw.
 */
export async function searchChunks(
  ctx: SearchContext,
  bases: readonly BaseRow[],
  query: KnowledgeSearchQuery,
): Promise<KnowledgeSearchResult> {
  const started = performance.now();
  const signal = query.signal;
  const topK = Math.min(MAX_TOP_K, Math.max(1, Math.floor(query.topK ?? 5)));
  const candidates = Math.max(ctx.candidates, topK * 3);
  const kbIds = bases.map((b) => b.id);
  const trace: RetrievalTrace = {
    mode: "bm25",
    bases: bases.map((b) => b.name),
    bm25: { hits: 0, ms: 0, terms: [] },
    rrfK: ctx.rrfK,
    fused: 0,
    parents: 0,
    rerank: { status: "skipped" },
    warnings: [],
    ms: 0,
  };
  if (bases.length === 0) {
    trace.warnings.push("no knowledge base to search");
    return { passages: [], trace };
  }
  const filter = query.filter && (query.filter.path || query.filter.mime) ? query.filter : undefined;
  const documentIds = filter ? await ctx.repo.filteredDocuments(kbIds, filter) : undefined;
  const documentSet = documentIds ? new Set(documentIds) : undefined;

  // Stage 1. The embedding request starts first so it overlaps the BM25 query.
  let vectorWork: Promise<VectorOutcome> | undefined;
  const { embedder, vectors } = ctx;
  const useBm25 = query.retrievers !== "vector";
  const useVectors = query.retrievers !== "bm25";
  if (!embedder && query.retrievers === "vector") {
    trace.warnings.push("vector search asked for, but no embedding model is configured");
  }
  if (useVectors && embedder && vectors && documentIds?.length !== 0) {
    const vectorStarted = performance.now();
    vectorWork = Promise.resolve()
      .then(() => embedder.embed([query.query], signal))
      .then(async ([vector]) => {
        if (!vector) throw new DimsumError("provider_unavailable", "the embedding API returned no vector");
        const hits = (await vectors.search(kbIds, vector, candidates, documentSet)).filter(
          (h) => h.score >= ctx.minSimilarity,
        );
        return { ids: hits.map((h) => h.id), ms: elapsed(vectorStarted) };
      });
    vectorWork.catch(() => {});
  }
  const bm25Started = performance.now();
  const terms = queryTerms(query.query);
  const bm25 = useBm25 ? await ctx.repo.searchText(terms, candidates, kbIds, documentIds) : [];
  trace.bm25 = { hits: bm25.length, ms: elapsed(bm25Started), terms };
  let vectorIds: number[] = [];
  if (vectorWork) {
    try {
      const outcome = await vectorWork;
      vectorIds = outcome.ids;
      trace.vector = { hits: outcome.ids.length, ms: outcome.ms, model: embedder!.model };
      trace.mode = useBm25 ? "hybrid" : "vector";
    } catch (err) {
      if (signal?.aborted) throw new DimsumError("aborted", "The search was cancelled.", { cause: err });
      const reason = toDimsumError(err).toLine();
      trace.vector = { error: reason };
      trace.warnings.push(`vector search failed, BM25 alone served this query: ${reason}`);
    }
  }

  // Stage 2.
  const childIds = [...new Set([...bm25.map((h) => h.id), ...vectorIds])];
  const children = await ctx.repo.children(childIds);
  const parentOf = new Map(children.map((c) => [c.id, c.parent_id] as const));
  const sectionOf = new Map(children.map((c) => [c.id, c.section] as const));
  const fusion = fuseToParents(
    bm25.map((h) => h.id),
    vectorIds,
    parentOf,
    ctx.rrfK,
  );
  trace.fused = fusion.children;
  trace.parents = fusion.parents.length;
  let ordered = fusion.parents;

  // Stage 3.
  const rerankN = Math.min(ordered.length, Math.max(ctx.rerankTopN, topK));
  const wanted = ordered.slice(0, Math.max(topK, ctx.reranker ? rerankN : 0));
  const rows = new Map(
    (await ctx.repo.passages(wanted.map((p) => p.parentId))).map((r) => [r.id, r] as const),
  );
  let scores: Map<string, number> | undefined;
  const reranker = ctx.reranker;
  if (reranker && query.rerank !== false && rerankN > 1) {
    const head = ordered.slice(0, rerankN);
    const rerankStarted = performance.now();
    try {
      scores = await withDeadline(
        (deadlineSignal) =>
          reranker.rerank(
            query.query,
            head.map((p) => ({ id: String(p.parentId), text: rows.get(p.parentId)?.text ?? "" })),
            deadlineSignal,
          ),
        ctx.rerankTimeoutMs,
        signal,
      );
      ordered = [...applyScores(head, scores), ...ordered.slice(rerankN)];
      trace.rerank = { status: "ok", candidates: head.length, ms: elapsed(rerankStarted) };
    } catch (err) {
      if (signal?.aborted) throw new DimsumError("aborted", "The search was cancelled.", { cause: err });
      const reason = toDimsumError(err).toLine();
      scores = undefined;
      trace.rerank = { status: "failed", reason, candidates: head.length, ms: elapsed(rerankStarted) };
      trace.warnings.push(`reranking failed, fused order kept: ${reason}`);
    }
  } else if (reranker && query.rerank !== false) {
    trace.rerank = { status: "skipped", reason: "fewer than two passages" };
  } else {
    trace.rerank = {
      status: "skipped",
      reason: reranker ? "turned off for this query" : "no reranker configured",
    };
  }

  const passages: Passage[] = [];
  for (const parent of ordered) {
    if (passages.length >= topK) break;
    const row = rows.get(parent.parentId);
    if (row) passages.push(toPassage(parent, row, scores?.get(String(parent.parentId)), sectionOf));
  }
  trace.ms = elapsed(started);
  return { passages, trace };
}
