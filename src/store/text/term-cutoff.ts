/**
 * The common-terms cutoff of the BM25 indexes (memories, knowledge chunks). FTS5 scores every row a
 * query matches, so a query of common terms would cost tens of milliseconds on a big index. Like
 * Lucene's common-terms cutoff, terms are looked up in the FTS vocabulary first and the most frequent
 * are dropped once the expected work passes `maxPostings`: they carry the least IDF.
 */

// Counts only steer pruning, so slightly stale ones are fine: FTS5 computes a count by walking the
// term's posting list, which for common terms costs more than the search saves.
const DF_REFRESH_WRITES = 500;
const DF_CACHE_TERMS = 20_000;

/** Document frequencies from a short-lived cache, and the terms a query keeps. */
export class TermCutoff {
  private readonly cache = new Map<string, { df: number; stamp: number }>();
  private writes = 0;

  /** `lookup` reads a term's document count from the FTS vocabulary (undefined when absent). */
  constructor(
    private readonly lookup: (term: string) => number | undefined,
    readonly maxPostings: number,
  ) {}

  /** Counts one indexed document; cached counts are refreshed after enough of them. */
  wrote(): void {
    this.writes++;
  }

  /** True when the term's count is not cached (or is stale): `documentFrequency` would look it up. */
  needsLookup(term: string): boolean {
    const cached = this.cache.get(term);
    return !cached || this.writes - cached.stamp >= DF_REFRESH_WRITES;
  }

  /** How many documents contain the term. */
  documentFrequency(term: string): number {
    const cached = this.cache.get(term);
    if (cached && this.writes - cached.stamp < DF_REFRESH_WRITES) return cached.df;
    const df = this.lookup(term) ?? 0;
    // Zero is never cached: the term may arrive with the next write and must be searched for then.
    if (df === 0) return 0;
    if (this.cache.size >= DF_CACHE_TERMS) this.cache.clear();
    this.cache.set(term, { df, stamp: this.writes });
    return df;
  }

  /**
   * The rarest terms whose document counts add up to at most `maxPostings` (always at least one;
   * terms no document contains cost nothing and stay), with the postings they add up to.
   */
  plan(terms: readonly string[]): { kept: string[]; postings: number } {
    if (!Number.isFinite(this.maxPostings)) return { kept: [...terms], postings: 0 };
    const counted = terms
      .map((term) => ({ term, df: this.documentFrequency(term) }))
      .sort((a, b) => a.df - b.df);
    const kept: string[] = [];
    let postings = 0;
    for (const { term, df } of counted) {
      if (kept.length > 0 && postings + df > this.maxPostings) break;
      kept.push(term);
      postings += df;
    }
    return { kept, postings };
  }
}
