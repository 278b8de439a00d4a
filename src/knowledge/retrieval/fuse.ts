/**
 * Stage 2 of retrieval: Reciprocal Rank Fusion of the child-chunk lists (the memory layer's RRF),
 * then expansion to parent chunks. A parent takes the best score of its matching children and
 * appears once, so several hits inside one passage never crowd out other passages.
 */
import { RRF_K, reciprocalRankFusion } from "../../memory/ranking.js";

export interface FusedParent {
  parentId: number;
  fusedScore: number;
  /** Matching children, best first. */
  childIds: number[];
  /** Best 1-based rank of any of its children in the BM25 list. */
  bm25Rank?: number;
  vectorRank?: number;
}

export interface Fusion {
  /** Distinct children across both lists. */
  children: number;
  parents: FusedParent[];
}

function ranks(list: readonly number[]): Map<number, number> {
  const out = new Map<number, number>();
  list.forEach((id, i) => {
    if (!out.has(id)) out.set(id, i + 1);
  });
  return out;
}

/** Fuses ranked child lists (best first) with RRF and groups them by parent, best parent first. */
export function fuseToParents(
  bm25: readonly number[],
  vector: readonly number[],
  parentOf: ReadonlyMap<number, number>,
  k = RRF_K,
): Fusion {
  const lists = [bm25.map(String)];
  if (vector.length > 0) lists.push(vector.map(String));
  const fused = reciprocalRankFusion(lists, k);
  const bm25Ranks = ranks(bm25);
  const vectorRanks = ranks(vector);
  const children = [...fused.entries()]
    .map(([id, score]) => ({ id: Number(id), score }))
    .sort((a, b) => b.score - a.score || a.id - b.id);
  const parents = new Map<number, FusedParent>();
  for (const child of children) {
    const parentId = parentOf.get(child.id);
    if (parentId === undefined) continue;
    let parent = parents.get(parentId);
    if (!parent) {
      parent = { parentId, fusedScore: child.score, childIds: [] };
      parents.set(parentId, parent);
    }
    parent.childIds.push(child.id);
    const b = bm25Ranks.get(child.id);
    if (b !== undefined && (parent.bm25Rank === undefined || b < parent.bm25Rank)) parent.bm25Rank = b;
    const v = vectorRanks.get(child.id);
    if (v !== undefined && (parent.vectorRank === undefined || v < parent.vectorRank)) parent.vectorRank = v;
  }
  // Children came best first, so parents were created in order of their best child.
  return { children: children.length, parents: [...parents.values()] };
}
