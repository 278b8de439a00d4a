/**
 * In-memory vector indexes of the most recently used owners (users, knowledge bases), each tagged with
 * the version of the owner's data it reflects. Whoever writes the data bumps a version stored beside
 * it (a row that every instance reads), so a reader holding another version knows to reload: a write
 * by this process patches the index in place; a write by anyone else shows up as a version it did
 * not expect. The loading is the backend's (SQLite statements, PostgreSQL queries).
 */
import type { QuantizedVectorIndex } from "./quantized-index.js";

interface Entry<M> {
  version: number;
  index: QuantizedVectorIndex<M>;
}

/** Owner id → (version, index), least recently used dropped beyond `maxOwners`. */
export class VersionedIndexCache<M> {
  private readonly entries = new Map<string, Entry<M>>();

  constructor(private readonly maxOwners = 8) {}

  /** The cached index when it reflects `version` and has `dims` dimensions (and marks it used). */
  get(owner: string, version: number, dims: number): QuantizedVectorIndex<M> | undefined {
    const entry = this.entries.get(owner);
    if (!entry || entry.version !== version || entry.index.dims !== dims) return undefined;
    // Re-inserting moves the owner to the back of the LRU order.
    this.entries.delete(owner);
    this.entries.set(owner, entry);
    return entry.index;
  }

  /**
   * Caches `index` as the owner's at `version`, unless an index of a newer version is already there
   * (a slow load finishing after a write that this process made).
   */
  put(owner: string, version: number, index: QuantizedVectorIndex<M>): void {
    const seen = this.entries.get(owner);
    if (seen && seen.version > version) return;
    this.entries.delete(owner);
    this.entries.set(owner, { version, index });
    while (this.entries.size > this.maxOwners) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }

  /** Removes and returns the owner's index if it reflects `version` (a writer takes it to patch). */
  take(owner: string, version: number): QuantizedVectorIndex<M> | undefined {
    const entry = this.entries.get(owner);
    this.entries.delete(owner);
    return entry && entry.version === version ? entry.index : undefined;
  }

  /**
   * After this process changed the owner's data (moving the version from `before` to `after`):
   * patch a cached index that was current, or drop one that was not (or that `patch` gives up on).
   */
  afterWrite(
    owner: string,
    before: number,
    after: number,
    patch: (index: QuantizedVectorIndex<M>) => boolean,
  ): void {
    const entry = this.entries.get(owner);
    if (!entry) return;
    if (entry.version !== before || !patch(entry.index)) {
      this.entries.delete(owner);
      return;
    }
    entry.version = after;
  }

  /** Forgets the owner's cached index; the next search loads it again. */
  drop(owner: string): void {
    this.entries.delete(owner);
  }

  /** Forgets every cached index. */
  clear(): void {
    this.entries.clear();
  }
}
