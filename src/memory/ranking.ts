/**
 * How memories are ranked and which are evicted first. All formulas live here.
 *
 * Search: Reciprocal Rank Fusion of the BM25 list and the vector list,
 *   rrf(d) = Σ_lists 1 / (k + rank_list(d)),  k = 60, ranks from 1; absent from a list adds 0;
 * then weighted by how fresh, important and used the memory is:
 *   score(d) = rrf(d) · (0.7 + 0.1·recency + 0.15·importance + 0.05·access)
 * so relevance decides and the weights (a factor between 0.7 and 1.0) break near-ties.
 *
 * Eviction (lowest goes first; core memory is never evicted):
 *   keep(d) = 0.3·recency + 0.4·importance + 0.3·access
 *
 * With: recency = 0.5 ^ (days since max(updatedAt, lastAccessedAt) / 30)   (half-life 30 days)
 *       importance = importance / 10                                        (1..10 -> 0.1..1)
 *       access = min(1, ln(1 + accessCount) / ln(1 + 32))                   (saturates at 32 uses)
 */

export const RRF_K = 60;
export const RECENCY_HALF_LIFE_DAYS = 30;
const ACCESS_SATURATION = 32;
const DAY_MS = 86_400_000;

export interface SearchWeights {
  /** Part of the factor that every result gets (relevance only). */
  base: number;
  recency: number;
  importance: number;
  access: number;
}

export const DEFAULT_SEARCH_WEIGHTS: Readonly<SearchWeights> = Object.freeze({
  base: 0.7,
  recency: 0.1,
  importance: 0.15,
  access: 0.05,
});

export const EVICTION_WEIGHTS = Object.freeze({ recency: 0.3, importance: 0.4, access: 0.3 });

/** The fields ranking looks at. */
export interface RankingFacts {
  importance: number;
  accessCount: number;
  updatedAt: number;
  lastAccessedAt?: number | undefined;
}

/** 1 for something touched now, 0.5 after 30 days, 0.25 after 60. */
export function recencyOf(facts: RankingFacts, now: number): number {
  const last = Math.max(facts.updatedAt, facts.lastAccessedAt ?? 0);
  const days = Math.max(0, now - last) / DAY_MS;
  return 0.5 ** (days / RECENCY_HALF_LIFE_DAYS);
}

/** Use count mapped to 0..1 on a log scale. */
export function accessOf(facts: RankingFacts): number {
  return Math.min(1, Math.log1p(Math.max(0, facts.accessCount)) / Math.log1p(ACCESS_SATURATION));
}

/** Importance 1..10 mapped to 0.1..1. */
export function importanceOf(facts: RankingFacts): number {
  return Math.min(10, Math.max(1, facts.importance)) / 10;
}

/** RRF scores of ids from ranked lists (best first); an id's ranks in each list it appears in add up. */
export function reciprocalRankFusion(
  lists: ReadonlyArray<readonly string[]>,
  k = RRF_K,
): Map<string, number> {
  const scores = new Map<string, number>();
  for (const list of lists) {
    list.forEach((id, index) => {
      scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1));
    });
  }
  return scores;
}

/** The factor (base..1) that weights a fused relevance score. */
export function weightFactor(
  facts: RankingFacts,
  now: number,
  weights: SearchWeights = DEFAULT_SEARCH_WEIGHTS,
): number {
  return (
    weights.base +
    weights.recency * recencyOf(facts, now) +
    weights.importance * importanceOf(facts) +
    weights.access * accessOf(facts)
  );
}

/** How much a memory deserves to stay; the lowest is evicted first. */
export function evictionScore(facts: RankingFacts, now: number): number {
  return (
    EVICTION_WEIGHTS.recency * recencyOf(facts, now) +
    EVICTION_WEIGHTS.importance * importanceOf(facts) +
    EVICTION_WEIGHTS.access * accessOf(facts)
  );
}
