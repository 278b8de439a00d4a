/** A clock tests move by hand: timers fire in time order as `advanceTo` passes their instants. */
import type { Clock } from "../../src/schedules/types.js";

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, Timer>();

  constructor(start: number | string) {
    this.#now = typeof start === "string" ? Date.parse(start) : start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): unknown {
    const seq = ++this.#seq;
    this.#timers.set(seq, { at: this.#now + Math.max(0, ms), seq, fn });
    return seq;
  }

  clearTimer(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.#timers.size;
  }

  /**
   * Moves time to `to` (epoch ms or ISO), firing every timer due on the way at its own instant. Work
   * a timer started gets a turn of the event loop before the next timer fires, as it would in real
   * time (a run that ends at once is over before the next one is due).
   */
  async advanceTo(to: number | string): Promise<void> {
    const target = typeof to === "string" ? Date.parse(to) : to;
    for (;;) {
      const next = [...this.#timers.values()]
        .filter((t) => t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next) break;
      this.#timers.delete(next.seq);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.#now = Math.max(this.#now, target);
  }

  /** Moves time forward by `ms`. */
  advance(ms: number): Promise<void> {
    return this.advanceTo(this.#now + ms);
  }
}
