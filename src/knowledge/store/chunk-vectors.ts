/**
 * Child-chunk vectors in memory for fast search: one int8 index per base (the memory layer's
 * QuantizedVectorIndex with its SIMD dot kernel), loaded from the Float32 BLOBs on first use and
 * reloaded when the base's `version` moved (any write, by any process).
 */
import type { Database } from "better-sqlite3";
import { blobToVector } from "../../memory/vectors/blob.js";
import { QuantizedVectorIndex, type VectorHit } from "../../memory/vectors/quantized-index.js";
import type { WriteReport } from "./knowledge-repository.js";

export interface ChunkMeta {
  documentId: number;
}

interface Entry {
  version: number;
  index: QuantizedVectorIndex<ChunkMeta>;
}

/** Per-base vector indexes for one embedding model, the most recently used `maxBases` kept. */
export class ChunkVectors {
  private readonly entries = new Map<number, Entry>();
  private readonly versionOf;
  private readonly rowsOf;

  constructor(
    db: Database,
    private readonly model: string,
    private readonly maxBases = 16,
  ) {
    this.versionOf = db.prepare<[number], number>("SELECT version FROM kb_bases WHERE id = ?").pluck();
    this.rowsOf = db.prepare<
      [number, string, number],
      { id: number; document_id: number; embedding: Buffer }
    >(
      `SELECT id, document_id, embedding FROM kb_child_chunks
       WHERE kb_id = ? AND embedding_model = ? AND embedding_dims = ? AND embedding IS NOT NULL`,
    );
  }

  /** The index of a base for `dims`-dimensional vectors, current with the database. */
  index(kbId: number, dims: number): QuantizedVectorIndex<ChunkMeta> {
    const version = this.versionOf.get(kbId) ?? 0;
    const entry = this.entries.get(kbId);
    if (entry && entry.version === version && entry.index.dims === dims) {
      this.entries.delete(kbId);
      this.entries.set(kbId, entry);
      return entry.index;
    }
    const index = new QuantizedVectorIndex<ChunkMeta>(dims);
    for (const row of this.rowsOf.iterate(kbId, this.model, dims)) {
      index.upsert(row.id, blobToVector(row.embedding), { documentId: row.document_id });
    }
    this.entries.delete(kbId);
    this.entries.set(kbId, { version, index });
    while (this.entries.size > this.maxBases) this.entries.delete(this.entries.keys().next().value as number);
    return index;
  }

  /** The `limit` nearest child chunks across the bases, best first; `documents` restricts to those. */
  search(
    kbIds: readonly number[],
    query: Float32Array,
    limit: number,
    documents?: ReadonlySet<number>,
  ): Array<VectorHit<ChunkMeta>> {
    const accept = documents ? (meta: ChunkMeta) => documents.has(meta.documentId) : undefined;
    const hits = kbIds.flatMap((kbId) => this.index(kbId, query.length).search(query, limit, accept));
    return hits.sort((a, b) => b.score - a.score || a.id - b.id).slice(0, limit);
  }

  /**
   * After this process wrote to a base: patch its loaded index when it was current before the
   * write (`before`), otherwise drop it so the next search reloads.
   */
  afterWrite(report: WriteReport): void {
    const entry = this.entries.get(report.kbId);
    if (!entry) return;
    if (entry.version !== report.before) {
      this.entries.delete(report.kbId);
      return;
    }
    for (const id of report.removedChildIds) entry.index.remove(id);
    for (const added of report.addedVectors) {
      if (added.vector.length !== entry.index.dims) {
        this.entries.delete(report.kbId);
        return;
      }
      entry.index.upsert(added.id, added.vector, { documentId: added.documentId });
    }
    entry.version = report.after;
  }

  /** Forgets every loaded index. */
  clear(): void {
    this.entries.clear();
  }
}
