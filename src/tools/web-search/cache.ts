/** A small in-memory cache of search answers: time-limited, size-bounded, least recently used out first. */
import type { SearchResult } from "./types.js";

export interface CachedAnswer {
  engine: string;
  results: SearchResult[];
}

interface Entry {
  answer: CachedAnswer;
  expiresAt: number;
}

/** The cache key: the query as a person means it (case, spacing, Unicode forms ignored) plus the limit. */
export function cacheKey(query: string, maxResults: number): string {
  const normalized = query.normalize("NFKC").replace(/\s+/g, " ").trim().toLowerCase();
  return `${maxResults}\u0000${normalized}`;
}

/** Answers kept for `ttlMs`, at most `maxEntries` of them. A TTL of 0 keeps nothing. */
export class SearchCache {
  readonly #entries = new Map<string, Entry>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(ttlMs: number, maxEntries: number, now: () => number) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = Math.max(1, maxEntries);
    this.#now = now;
  }

  /** The live answer for `key`, refreshed as most recently used; undefined when absent or expired. */
  get(key: string): CachedAnswer | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    if (entry.expiresAt <= this.#now()) return undefined;
    this.#entries.set(key, entry);
    return entry.answer;
  }

  /** Stores an answer, evicting the least recently used ones beyond the size limit. */
  set(key: string, answer: CachedAnswer): void {
    if (this.#ttlMs <= 0) return;
    this.#entries.delete(key);
    this.#entries.set(key, { answer, expiresAt: this.#now() + this.#ttlMs });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
