/**
 * Per-user vector indexes in memory, loaded from the `embedding` BLOBs on first use. Each remembers
 * the user's `memory_user_state.version` it reflects: a write by this process patches the index in
 * place; a write by anyone else (another process on the same file) shows up as a version it did not
 * expect, and the index is reloaded.
 */
import type { Database } from "better-sqlite3";
import type { MemoryType } from "../types.js";
import { blobToVector } from "../vectors/blob.js";
import { QuantizedVectorIndex } from "../vectors/quantized-index.js";

export interface VectorMeta {
  agentId: string;
  type: MemoryType;
}

interface Entry {
  version: number;
  index: QuantizedVectorIndex<VectorMeta>;
}

interface VectorRow {
  id: number;
  agent_id: string;
  type: string;
  embedding: Buffer;
}

/** Vector indexes of the most recently used users for one embedding model. */
export class VectorCache {
  private readonly entries = new Map<string, Entry>();
  private readonly versionOf;
  private readonly rowsOf;

  constructor(
    db: Database,
    private readonly model: string,
    private readonly maxUsers = 8,
  ) {
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
    const entry = this.entries.get(userId);
    if (entry && entry.version === version && entry.index.dims === dims) {
      // Re-inserting moves the user to the back of the LRU order.
      this.entries.delete(userId);
      this.entries.set(userId, entry);
      return entry.index;
    }
    const index = new QuantizedVectorIndex<VectorMeta>(dims);
    for (const row of this.rowsOf.iterate(userId, this.model, dims)) {
      index.upsert(row.id, blobToVector(row.embedding), {
        agentId: row.agent_id,
        type: row.type as MemoryType,
      });
    }
    this.entries.delete(userId);
    this.entries.set(userId, { version, index });
    while (this.entries.size > this.maxUsers) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return index;
  }

  /**
   * After this process changed the user's memories (moving the version from `before` to `after`):
   * patch a cached index that was current, or drop one that was not (or that `patch` gives up on).
   */
  afterWrite(
    userId: string,
    before: number,
    after: number,
    patch: (index: QuantizedVectorIndex<VectorMeta>) => boolean,
  ): void {
    const entry = this.entries.get(userId);
    if (!entry) return;
    if (entry.version !== before || !patch(entry.index)) {
      this.entries.delete(userId);
      return;
    }
    entry.version = after;
  }

  /** Forgets the user's cached index; the next search loads it again. */
  drop(userId: string): void {
    this.entries.delete(userId);
  }

  /** Forgets every cached index. */
  clear(): void {
    this.entries.clear();
  }
}
