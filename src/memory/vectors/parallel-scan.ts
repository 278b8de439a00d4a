/**
 * A second core for big vector scans. The int8 matrix lives in shared WebAssembly memory; a scan is
 * cut into blocks of rows that this thread and one worker thread claim from a shared counter, each
 * running its own instance of the same SIMD kernel. The caller starts a scan, does other work (the
 * BM25 query), then joins: it claims whatever blocks are left and waits only for a block the worker
 * is in the middle of. When the worker is slow to wake (a busy machine) this thread simply does
 * every block itself, so a scan never takes longer than scanning alone.
 */
import { Worker } from "node:worker_threads";
import { type DotKernel, simdModule } from "./dot-kernel.js";
import type { WasmMemory } from "./wasm.js";

/** Rows per claimable block: even (the kernel works on row pairs), ~1 MB of int8 at 256 dims. */
const BLOCK_ROWS = 4096;
/** A join that waits longer than this for the worker gives up on it and scans alone from then on. */
const WORKER_STALL_MS = 2000;

/** Control words in a SharedArrayBuffer. */
const STATE = 0; // (generation << 20) | next unclaimed block
const DONE = 1; // blocks completed in the current generation
const SCANNED = 2; // blocks ever scanned, by this thread (2) and by the worker (3)

export interface ScanJob {
  /** Scan generation, so a late worker never claims blocks of a newer scan. */
  gen: number;
  blocks: number;
  blockRows: number;
  /** Rows to scan, even. */
  rows: number;
  mat: number;
  stride: number;
  query: number;
  out: number;
}

/**
 * Claims and scans blocks until none are left in the job's generation. Runs on both threads: the
 * worker gets this function's source, so it must use nothing but its arguments and `Atomics`.
 */
function claimBlocks(control: Int32Array, job: ScanJob, dot: DotKernel, tally: number): void {
  for (;;) {
    const state = Atomics.load(control, 0);
    if (state >>> 20 !== job.gen) return;
    const block = state & 0xfffff;
    if (block >= job.blocks) return;
    if (Atomics.compareExchange(control, 0, state, state + 1) !== state) continue;
    const first = block * job.blockRows;
    const rows = Math.min(job.blockRows, job.rows - first);
    dot(job.mat + first * job.stride, rows, job.stride, job.query, job.out + first * 4);
    Atomics.add(control, tally, 1);
    if (Atomics.add(control, 1, 1) + 1 === job.blocks) Atomics.notify(control, 1);
  }
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const control = new Int32Array(workerData.control);
const kernels = new Map();
const claimBlocks = ${claimBlocks.toString()};
parentPort.on("message", (m) => {
  if (m.type === "add") {
    kernels.set(m.id, new WebAssembly.Instance(m.module, { env: { memory: m.memory } }).exports.dot_i8);
  } else if (m.type === "forget") {
    kernels.delete(m.id);
  } else if (m.type === "scan") {
    const dot = kernels.get(m.id);
    if (dot) claimBlocks(control, m.job, dot, 3);
  }
});
`;

/** A started scan; `join` returns once every row's dot product is in the output area. */
export interface ScanHandle {
  join(): void;
}

interface ActiveScan {
  job: ScanJob;
  kernel: DotKernel;
}

/** One worker thread that helps whichever index is scanning; all calls come from one thread. */
export class ParallelScanner {
  private readonly control: Int32Array;
  private readonly ids = new WeakMap<WasmMemory, number>();
  private readonly forget = new FinalizationRegistry<number>((id) => {
    if (!this.broken) this.worker.postMessage({ type: "forget", id });
  });
  private nextId = 1;
  private generation = 0;
  private active: ActiveScan | undefined;
  private broken = false;

  private constructor(
    private readonly worker: Worker,
    control: SharedArrayBuffer,
  ) {
    this.control = new Int32Array(control);
    worker.unref();
    const stop = () => {
      this.broken = true;
    };
    worker.on("error", stop);
    worker.on("exit", stop);
  }

  /** Starts the worker; undefined where threads or shared WebAssembly memory are unavailable. */
  static create(): ParallelScanner | undefined {
    if (typeof SharedArrayBuffer === "undefined" || simdModule(true) === null) return undefined;
    try {
      const control = new SharedArrayBuffer(16);
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { control } });
      return new ParallelScanner(worker, control);
    } catch {
      return undefined;
    }
  }

  /** Blocks scanned so far by this thread and by the worker. */
  stats(): { here: number; worker: number } {
    return { here: Atomics.load(this.control, SCANNED), worker: Atomics.load(this.control, SCANNED + 1) };
  }

  get available(): boolean {
    return !this.broken;
  }

  /**
   * Starts scanning `rows` (even) rows of shared `memory` with the worker's help; the caller must
   * `join` before touching the matrix or output area. Any scan still running is joined first.
   */
  start(
    memory: WasmMemory,
    kernel: DotKernel,
    layout: { mat: number; rows: number; stride: number; query: number; out: number },
  ): ScanHandle {
    this.finishActive();
    this.generation = (this.generation + 1) & 0x7ff;
    const job: ScanJob = {
      ...layout,
      gen: this.generation,
      blockRows: BLOCK_ROWS,
      blocks: Math.ceil(layout.rows / BLOCK_ROWS),
    };
    Atomics.store(this.control, DONE, 0);
    Atomics.store(this.control, STATE, job.gen << 20);
    const active: ActiveScan = { job, kernel };
    this.active = active;
    if (!this.broken) this.worker.postMessage({ type: "scan", id: this.idOf(memory), job });
    return {
      join: () => {
        if (this.active === active) this.finishActive();
      },
    };
  }

  private finishActive(): void {
    const active = this.active;
    if (!active) return;
    this.active = undefined;
    const { job, kernel } = active;
    claimBlocks(this.control, job, kernel, SCANNED);
    const deadline = performance.now() + WORKER_STALL_MS;
    for (;;) {
      const done = Atomics.load(this.control, DONE);
      if (done >= job.blocks) return;
      const left = deadline - performance.now();
      if (left <= 0) break;
      Atomics.wait(this.control, DONE, done, left);
    }
    // The worker holds a block and does not finish it: scan everything here, and stop using it.
    this.broken = true;
    Atomics.store(this.control, STATE, 0x7ff << 20);
    kernel(job.mat, job.rows, job.stride, job.query, job.out);
  }

  /** The worker's id for a memory, sending the memory (and the kernel module) on first use. */
  private idOf(memory: WasmMemory): number {
    let id = this.ids.get(memory);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(memory, id);
      this.forget.register(memory, id);
      this.worker.postMessage({ type: "add", id, memory, module: simdModule(true) });
    }
    return id;
  }
}

let shared: ParallelScanner | null | undefined;

/** The process's scanner, started on first use; undefined where it cannot run. */
export function parallelScanner(): ParallelScanner | undefined {
  if (shared === undefined) shared = ParallelScanner.create() ?? null;
  return shared?.available ? shared : undefined;
}
