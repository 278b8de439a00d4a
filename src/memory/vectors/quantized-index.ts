/**
 * An in-memory vector index for brute-force cosine search: every row is L2-normalised, quantised to
 * int8 with its own scale, and kept in one WebAssembly memory so the SIMD kernel scans it in place.
 * Int8 cuts the bytes a scan reads by 4x against float32 (the scan is memory-bound); the rank error
 * this adds is far below what separates relevant from unrelated texts. Exact cosines, where they
 * matter (merging near-duplicates), are computed from the stored float32 vectors instead.
 */
import { type DotKernel, dotKernel, SHARED_MAX_PAGES } from "./dot-kernel.js";
import { parallelScanner, type ScanHandle } from "./parallel-scan.js";
import { TopK } from "./top-k.js";
import { createMemory, createSharedMemory, isShared, type WasmMemory } from "./wasm.js";

const PAGE = 65_536;
const INITIAL_ROWS = 64;
/** Below this many rows a scan takes under a millisecond and is not worth a second thread. */
const DEFAULT_PARALLEL_MIN_ROWS = 32_768;

export interface VectorHit<M> {
  id: number;
  /** Approximate cosine similarity (int8 dot product rescaled). */
  score: number;
  meta: M;
}

/** Scales v to unit length in place and returns it; a zero vector stays zero. */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

/** Exact cosine similarity of two vectors of the same length. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** A search whose scan may still be running; `result` finishes it (once) and returns the hits. */
export class PendingSearch<M> {
  private hits: Array<VectorHit<M>> | undefined;

  constructor(private compute: (() => Array<VectorHit<M>>) | undefined) {}

  result(): Array<VectorHit<M>> {
    if (!this.hits) {
      const compute = this.compute;
      this.compute = undefined;
      this.hits = compute ? compute() : [];
    }
    return this.hits;
  }
}

export interface QuantizedIndexOptions {
  /** Use the scalar JS kernel even where SIMD is available (tests). */
  forceJs?: boolean;
  /** Rows from which scans are shared with a worker thread (default 32,768; Infinity = never). */
  parallelMinRows?: number;
}

/** Holds rows of one dimensionality, each with an id and caller metadata (used to filter hits). */
export class QuantizedVectorIndex<M> {
  /** Bytes per row: dims rounded up to the 16-byte SIMD width, zero-padded. */
  readonly stride: number;
  private memory: WasmMemory;
  private kernel: DotKernel;
  private readonly forceJs: boolean;
  private readonly parallelMinRows: number;
  private pending: PendingSearch<M> | undefined;
  private capacity = 0;
  private readonly ids: number[] = [];
  private readonly metas: M[] = [];
  private scales = new Float32Array(0);
  private readonly rowOf = new Map<number, number>();

  constructor(
    readonly dims: number,
    options: QuantizedIndexOptions = {},
  ) {
    this.stride = Math.max(16, Math.ceil(dims / 16) * 16);
    this.forceJs = options.forceJs ?? false;
    this.parallelMinRows = options.parallelMinRows ?? DEFAULT_PARALLEL_MIN_ROWS;
    this.memory = createMemory();
    this.kernel = dotKernel(this.memory, this.forceJs);
    this.reserve(INITIAL_ROWS);
  }

  get size(): number {
    return this.ids.length;
  }

  has(id: number): boolean {
    return this.rowOf.has(id);
  }

  /** Adds a row, or replaces the vector and metadata of an existing id. */
  upsert(id: number, vector: Float32Array, meta: M): void {
    if (vector.length !== this.dims) {
      throw new RangeError(`vector has ${vector.length} dimensions; this index holds ${this.dims}`);
    }
    this.settle();
    let row = this.rowOf.get(id);
    if (row === undefined) {
      row = this.ids.length;
      if (row >= this.capacity) this.reserve(this.capacity * 2);
      this.ids.push(id);
      this.metas.push(meta);
      this.rowOf.set(id, row);
    } else {
      this.metas[row] = meta;
    }
    this.scales[row] = this.quantize(
      normalize(Float32Array.from(vector)),
      this.matrixOffset + row * this.stride,
    );
  }

  /** Removes a row by id (the last row moves into its slot); false when absent. */
  remove(id: number): boolean {
    const row = this.rowOf.get(id);
    if (row === undefined) return false;
    this.settle();
    const last = this.ids.length - 1;
    if (row !== last) {
      const bytes = new Uint8Array(this.memory.buffer);
      const from = this.matrixOffset + last * this.stride;
      bytes.copyWithin(this.matrixOffset + row * this.stride, from, from + this.stride);
      const movedId = this.ids[last]!;
      this.ids[row] = movedId;
      this.metas[row] = this.metas[last]!;
      this.scales[row] = this.scales[last]!;
      this.rowOf.set(movedId, row);
    }
    this.ids.pop();
    this.metas.pop();
    this.rowOf.delete(id);
    return true;
  }

  /** The k rows most similar to `query` among those `accept` lets through, best first. */
  search(query: Float32Array, k: number, accept?: (meta: M) => boolean): Array<VectorHit<M>> {
    return this.beginSearch(query, k, accept).result();
  }

  /**
   * Starts a search and returns before a big scan is done (a worker thread shares it), so the
   * caller can do other work meanwhile. Any change to the index, or another search, finishes it
   * first; `accept` runs when the result is taken.
   */
  beginSearch(query: Float32Array, k: number, accept?: (meta: M) => boolean): PendingSearch<M> {
    this.settle();
    const rows = this.ids.length;
    if (rows === 0 || k <= 0) return new PendingSearch<M>(undefined);
    const queryScale = this.quantize(normalize(Float32Array.from(query)), 0);
    const layout = {
      mat: this.matrixOffset,
      // The kernel works on pairs of rows; capacity is a power of two, so the spare row always exists.
      rows: rows + (rows & 1),
      stride: this.stride,
      query: 0,
      out: this.outOffset,
    };
    let scan: ScanHandle | undefined;
    const scanner = rows >= this.parallelMinRows && isShared(this.memory) ? parallelScanner() : undefined;
    if (scanner) scan = scanner.start(this.memory, this.kernel, layout);
    else this.kernel(layout.mat, layout.rows, layout.stride, layout.query, layout.out);
    const pending = new PendingSearch<M>(() => {
      if (this.pending === pending) this.pending = undefined;
      scan?.join();
      return this.select(rows, k, queryScale, accept);
    });
    this.pending = pending;
    return pending;
  }

  /** Finishes a search still in flight, before the matrix or output area changes. */
  private settle(): void {
    this.pending?.result();
  }

  /** The top k rows from the dot products in the output area. */
  private select(
    rows: number,
    k: number,
    queryScale: number,
    accept: ((meta: M) => boolean) | undefined,
  ): Array<VectorHit<M>> {
    const dots = new Int32Array(this.memory.buffer, this.outOffset, rows);
    const scales = this.scales;
    const metas = this.metas;
    const top = new TopK(k);
    // Locals and a cached threshold keep this loop over every row free of property lookups.
    let threshold = Number.NEGATIVE_INFINITY;
    for (let r = 0; r < rows; r++) {
      const score = dots[r]! * scales[r]!;
      if (score <= threshold) continue;
      if (accept && !accept(metas[r]!)) continue;
      top.push(r, score);
      threshold = top.threshold;
    }
    return top
      .sorted()
      .map(({ id: row, score }) => ({ id: this.ids[row]!, score: score * queryScale, meta: metas[row]! }));
  }

  private get matrixOffset(): number {
    return this.stride;
  }

  private get outOffset(): number {
    return this.matrixOffset + this.capacity * this.stride;
  }

  /** Writes the int8 form of a unit vector at `offset`; returns the scale that maps it back. */
  private quantize(v: Float32Array, offset: number): number {
    let maxAbs = 0;
    for (let i = 0; i < v.length; i++) maxAbs = Math.max(maxAbs, Math.abs(v[i]!));
    const target = new Int8Array(this.memory.buffer, offset, this.stride);
    target.fill(0);
    if (maxAbs === 0) return 0;
    const scale = maxAbs / 127;
    for (let i = 0; i < v.length; i++) target[i] = Math.round(v[i]! / scale);
    return scale;
  }

  private reserve(rows: number): void {
    const needed = this.stride + rows * this.stride + rows * 4;
    const have = this.memory.buffer.byteLength;
    if (rows >= this.parallelMinRows && !this.forceJs && !isShared(this.memory) && parallelScanner()) {
      this.moveToSharedMemory(Math.ceil(Math.max(needed, have) / PAGE));
    } else if (needed > have) {
      this.memory.grow(Math.ceil((needed - have) / PAGE));
    }
    const scales = new Float32Array(rows);
    scales.set(this.scales.subarray(0, Math.min(this.scales.length, rows)));
    this.scales = scales;
    this.capacity = rows;
  }

  /** Copies the matrix into memory a worker thread can scan too (once, when the index gets big). */
  private moveToSharedMemory(pages: number): void {
    const memory = createSharedMemory(pages, SHARED_MAX_PAGES);
    if (!memory) {
      const have = this.memory.buffer.byteLength;
      if (pages * PAGE > have) this.memory.grow(pages - have / PAGE);
      return;
    }
    new Uint8Array(memory.buffer).set(new Uint8Array(this.memory.buffer));
    this.memory = memory;
    this.kernel = dotKernel(memory, this.forceJs);
  }
}
