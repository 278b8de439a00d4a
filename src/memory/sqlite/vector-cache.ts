/**
 * Per-user vector indexes in memory, loaded from the `embedding` BLOBs on first use and kept current
 * through `memory_user_state.version` (see vectors/index-cache.ts).
 */
import type { Database } from "better-sqlite3";
import type { VectorMeta } from "../archival-rules.js";
import type { MemoryType } from "../types.js";
import { blobToVector } from "../vectors/blob.js";
import { VersionedIndexCache } from "../vectors/index-cache.js";
import { QuantizedVectorIndex } from "../vectors/quantized-index.js";

interface VectorRow {
  id: number;
  agent_id: string;
  type: string;
  embedding: Buffer;
}

/** Vector indexes of the most recently used users for one embedding model. */
export class VectorCache {
  private readonly cache: VersionedIndexCache<VectorMeta>;
  private readonly versionOf;
  private readonly rowsOf;

  constructor(
    db: Database,
    private readonly model: string,
    maxUsers = 8,
  ) {
    this.cache = new VersionedIndexCache(maxUsers);
    this.versionOf = db
      .prepare<[string], number>("SELECT version FROM memory_user_state WHERE user_id = ?")
      .pluck();
    this.rowsOf = db.prepare<[string, string, number], VectorRow>(
      `SELECT id, agent_id, type, embedding FROM memories
       WHERE user_id = ? AND embedding_model = ? AND embedding_dims = ? AND embedding IS NOT NULL`,
    );
  }

  /** The user's stored version (0 before their first memory). */
  version(userId: string): number {
    return this.versionOf.get(userId) ?? 0;
  }

  /** The user's index for vectors of `dims` dimensions, current with the database. */
  index(userId: string, dims: number): QuantizedVectorIndex<VectorMeta> {
    const version = this.version(userId);
    const cached = this.cache.get(userId, version, dims);
    if (cached) return cached;
    const index = new QuantizedVectorIndex<VectorMeta>(dims);
    for (const row of this.rowsOf.iterate(userId, this.model, dims)) {
      index.upsert(row.id, blobToVector(row.embedding), {
        agentId: row.agent_id,
        type: row.type as MemoryType,
      });
    }
    this.cache.put(userId, version, index);
    return index;
  }

  /** See VersionedIndexCache.afterWrite. */
  afterWrite(
    userId: string,
    before: number,
    after: number,
    patch: (index: QuantizedVectorIndex<VectorMeta>) => boolean,
  ): void {
    this.cache.afterWrite(userId, before, after, patch);
  }

  /** Forgets the user's cached index; the next search loads it again. */
  drop(userId: string): void {
    this.cache.drop(userId);
  }

  /** Forgets every cached index. */
  clear(): void {
    this.cache.clear();
  }
}
