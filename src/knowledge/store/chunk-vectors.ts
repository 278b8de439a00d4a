/**
 * Child-chunk vectors in memory for fast search: one int8 index per base (the memory layer's
 * QuantizedVectorIndex with its SIMD dot kernel), loaded from the stored Float32 vectors on first use
 * and reloaded when the base's `version` moved (any write, by any process or instance). The versions
 * are read once per search, so several server instances sharing one PostgreSQL database never search
 * a stale index: the cost is one small query per search.
 */
import { QuantizedVectorIndex, type VectorHit } from "../../memory/vectors/quantized-index.js";
import type { ChunkVectorSource, WriteReport } from "./knowledge-repository.js";

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
  /** Loads in flight, keyed by base, version and size, so concurrent searches load a base once. */
  private readonly loading = new Map<string, Promise<Entry>>();

  constructor(
    private readonly source: ChunkVectorSource,
    private readonly model: string,
    private readonly maxBases = 16,
  ) {}

  /** The index of a base for `dims`-dimensional vectors, current with the database. */
  async index(kbId: number, dims: number, version?: number): Promise<QuantizedVectorIndex<ChunkMeta>> {
    const current = version ?? (await this.source.baseVersions([kbId])).get(kbId) ?? 0;
    const entry = this.entries.get(kbId);
    if (entry && entry.version === current && entry.index.dims === dims) {
      this.entries.delete(kbId);
      this.entries.set(kbId, entry);
      return entry.index;
    }
    const key = `${kbId}:${current}:${dims}`;
    let load = this.loading.get(key);
    if (!load) {
      load = this.load(kbId, dims, current).finally(() => this.loading.delete(key));
      this.loading.set(key, load);
    }
    return (await load).index;
  }

  private async load(kbId: number, dims: number, version: number): Promise<Entry> {
    // The version was read before the rows: the index may hold newer rows than its version says,
    // which only costs a reload, never a stale answer.
    const index = new QuantizedVectorIndex<ChunkMeta>(dims);
    await this.source.loadVectors(kbId, this.model, dims, (id, documentId, vector) =>
      index.upsert(id, vector, { documentId }),
    );
    const entry = { version, index };
    this.entries.delete(kbId);
    this.entries.set(kbId, entry);
    while (this.entries.size > this.maxBases) this.entries.delete(this.entries.keys().next().value as number);
    return entry;
  }

  /** The `limit` nearest child chunks across the bases, best first; `documents` restricts to those. */
  async search(
    kbIds: readonly number[],
    query: Float32Array,
    limit: number,
    documents?: ReadonlySet<number>,
  ): Promise<Array<VectorHit<ChunkMeta>>> {
    const accept = documents ? (meta: ChunkMeta) => documents.has(meta.documentId) : undefined;
    const versions = await this.source.baseVersions(kbIds);
    const indexes = await Promise.all(
      kbIds.map((kbId) => this.index(kbId, query.length, versions.get(kbId) ?? 0)),
    );
    const hits = indexes.flatMap((index) => index.search(query, limit, accept));
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
