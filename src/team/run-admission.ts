/**
 * When a queued chat answer may start on this instance. An answer spends most of its life waiting —
 * for the model's first token and stream, for a person's approval, for a remote agent — and waiting
 * costs memory, not CPU. So answers are not counted against a small number of slots: one starts at
 * once unless the process is busy (the event loop's median delay over its bound while the loop is
 * more than 90 % busy with this process's own work), short of memory
 * (the heap over its share of V8's limit), or already holds `maxLive` answers (a fixed backstop, for
 * memory). Queued answers start in order as soon as none of these holds; the queue's length and wait
 * are in `stats()`.
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";

/** How busy and how full the process is now. */
export interface LoadReading {
  /** Median event-loop delay over the last window, ms (0 when idle). */
  loopDelayMs: number;
  /**
   * Share of the last window the event loop spent running this process's work (not waiting for I/O):
   * near 1 when the process itself is CPU-bound; low when its delay comes from other processes on the
   * machine taking the CPU.
   */
  loopUtilization: number;
  /** Heap used ÷ V8's heap size limit. */
  heapShare: number;
}

export interface AdmissionLimits {
  /** The backstop: answers live at once on this instance, whatever they are doing. */
  maxLive: number;
  /** No new answer starts while the loop's median delay is over this. */
  maxLoopDelayMs: number;
  /** No new answer starts while the heap is fuller than this share of its limit. */
  maxHeapShare: number;
}

/** Why a queued answer waits: the process is busy, short of memory, or at the backstop. */
export type Pressure = "cpu" | "memory" | "live";

/** The queue of answers waiting to start here, and what holds them. */
export interface RunQueueStats {
  /** Answers running (or waiting on a model, a person or another agent) on this instance. */
  live: number;
  /** Answers waiting to start. */
  queued: number;
  /** How long the oldest queued answer has waited, ms (0 when none). */
  oldestWaitMs: number;
  /** Wait before starting over the last answers that started here (most 0), ms. */
  waitP50Ms: number;
  waitP99Ms: number;
  /** Answers started since the process began, and of them those that had to wait. */
  started: number;
  startedAfterWaiting: number;
  /** What holds the queue now; undefined: nothing (new answers start at once). */
  pressure: Pressure | undefined;
  load: LoadReading;
  limits: AdmissionLimits;
}

/** Over this loop utilization the process counts as busy with its own work (with the delay over its bound). */
export const BUSY_UTILIZATION = 0.9;

/** The defaults: a backstop far above a team's peak, a loop delay that still streams smoothly. */
export const DEFAULT_ADMISSION: AdmissionLimits = { maxLive: 1000, maxLoopDelayMs: 50, maxHeapShare: 0.85 };

/** Reads the process's load (window of the loop delay); `close` stops sampling. */
export interface LoadProbe {
  read(): LoadReading;
  close(): void;
}

const WINDOW_MS = 250;
const RESOLUTION_MS = 10;

/**
 * The event loop's delay over rolling windows of 250 ms (the median, so one GC pause does not stop
 * admissions) and the heap's fill, read from the running process.
 */
export function processLoadProbe(): LoadProbe {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  let reading: LoadReading = { loopDelayMs: 0, loopUtilization: 0, heapShare: heapShare() };
  let utilization = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    // The histogram holds the timer's interval (resolution + delay); nothing sampled: a blocked loop.
    const median = histogram.count > 0 ? histogram.percentile(50) / 1e6 - RESOLUTION_MS : WINDOW_MS;
    const window = performance.eventLoopUtilization(utilization);
    utilization = performance.eventLoopUtilization();
    reading = {
      loopDelayMs: Math.max(0, median),
      loopUtilization: window.utilization,
      heapShare: heapShare(),
    };
    histogram.reset();
  }, WINDOW_MS);
  timer.unref();
  return {
    read: () => reading,
    close: () => {
      clearInterval(timer);
      histogram.disable();
    },
  };
}

function heapShare(): number {
  const heap = getHeapStatistics();
  return heap.used_heap_size / heap.heap_size_limit;
}

/** Waits kept for the percentiles. */
const WAIT_SAMPLES = 1000;
/** How often a blocked queue looks at the load again. */
const RECHECK_MS = 50;

/** Admits answers by the process's load and the backstop; FIFO for those that wait. */
export class RunAdmission {
  readonly #limits: AdmissionLimits;
  readonly #probe: LoadProbe;
  readonly #now: () => number;
  readonly #queue: Array<{ since: number; admit: () => void }> = [];
  readonly #waits: number[] = [];
  #live = 0;
  #started = 0;
  #startedAfterWaiting = 0;
  #recheck: NodeJS.Timeout | undefined;

  constructor(limits: AdmissionLimits, probe: LoadProbe = processLoadProbe(), now: () => number = Date.now) {
    this.#limits = limits;
    this.#probe = probe;
    this.#now = now;
  }

  /** What would hold a new answer now; undefined: it starts at once. */
  pressure(): Pressure | undefined {
    if (this.#live >= this.#limits.maxLive) return "live";
    const load = this.#probe.read();
    if (load.heapShare > this.#limits.maxHeapShare) return "memory";
    // Late and busy with its own work: a loop that is late only because other processes hold the CPU
    // would not serve queued answers any sooner by holding them.
    if (load.loopDelayMs > this.#limits.maxLoopDelayMs && load.loopUtilization > BUSY_UTILIZATION)
      return "cpu";
    return undefined;
  }

  /** Takes a place now when nothing holds it and nobody is queued; false otherwise. */
  tryEnter(): boolean {
    if (this.#queue.length > 0 || this.pressure() !== undefined) return false;
    this.#take(0);
    return true;
  }

  /**
   * Resolves once the answer may start (at once when nothing holds it); `leave` when it ends. Rejects
   * with the signal's reason, its place given up, when `signal` aborts while it is queued.
   */
  enter(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.tryEnter()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const since = this.#now();
      const onAbort = () => {
        const at = this.#queue.indexOf(entry);
        if (at >= 0) this.#queue.splice(at, 1);
        reject(signal?.reason);
      };
      const entry = {
        since,
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          this.#take(this.#now() - since);
          resolve();
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queue.push(entry);
      this.#schedule();
    });
  }

  /** An admitted answer ended: its place goes to the next queued one when nothing else holds it. */
  leave(): void {
    this.#live = Math.max(0, this.#live - 1);
    this.#drain();
  }

  /** Starts queued answers while nothing holds them. */
  #drain(): void {
    while (this.#queue.length > 0 && this.pressure() === undefined) this.#queue.shift()?.admit();
    this.#schedule();
  }

  /** While answers are queued, looks at the load again soon (the load changes without any run ending). */
  #schedule(): void {
    if (this.#queue.length === 0 || this.#recheck) return;
    this.#recheck = setTimeout(() => {
      this.#recheck = undefined;
      this.#drain();
    }, RECHECK_MS);
    this.#recheck.unref();
  }

  #take(waitedMs: number): void {
    this.#live++;
    this.#started++;
    if (waitedMs > 0) this.#startedAfterWaiting++;
    this.#waits.push(waitedMs);
    if (this.#waits.length > WAIT_SAMPLES) this.#waits.shift();
  }

  stats(): RunQueueStats {
    const sorted = [...this.#waits].sort((a, b) => a - b);
    const at = (p: number) => (sorted.length === 0 ? 0 : (sorted[Math.ceil(p * sorted.length) - 1] ?? 0));
    const oldest = this.#queue[0];
    return {
      live: this.#live,
      queued: this.#queue.length,
      oldestWaitMs: oldest ? this.#now() - oldest.since : 0,
      waitP50Ms: at(0.5),
      waitP99Ms: at(0.99),
      started: this.#started,
      startedAfterWaiting: this.#startedAfterWaiting,
      pressure: this.pressure(),
      load: this.#probe.read(),
      limits: { ...this.#limits },
    };
  }

  /** Stops sampling the load; queued answers are left to their runs' cancellation. */
  close(): void {
    if (this.#recheck) clearTimeout(this.#recheck);
    this.#recheck = undefined;
    this.#probe.close();
  }
}
