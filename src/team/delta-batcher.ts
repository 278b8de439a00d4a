/**
 * Merges a run's text or reasoning deltas into at most one agent event per frame budget. A model
 * streams a token every 12–33 ms (30–80 tokens/s), often several per network read; each event costs a
 * JSON frame and a socket write per watching client. The first delta after a quiet spell goes out in
 * the same turn of the event loop (merged with the rest of its read), so the first token is not
 * delayed; later ones wait until `frameMs` after the previous event. Order is kept: a delta of the
 * other kind, or any other event of the run (`flush` first), ends the batch.
 */
import type { AgentEvent } from "../agent/events.js";

type DeltaEvent = Extract<AgentEvent, { type: "text_delta" | "reasoning_delta" }>;

/** The default frame budget: 20 frames a second per answer, smooth to read, a few tokens per frame. */
export const DELTA_FRAME_MS = 50;

export class DeltaBatcher {
  #pending: DeltaEvent | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastEmit = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly emit: (event: DeltaEvent) => void,
    private readonly frameMs: number = DELTA_FRAME_MS,
  ) {}

  push(event: DeltaEvent): void {
    if (this.#pending !== undefined && this.#pending.type !== event.type) this.flush();
    this.#pending = this.#pending
      ? { ...this.#pending, text: this.#pending.text + event.text }
      : { ...event };
    if (this.#immediate !== undefined || this.#timer !== undefined) return;
    const wait = this.#lastEmit + this.frameMs - performance.now();
    if (wait > 0) this.#timer = setTimeout(() => this.flush(), wait);
    else this.#immediate = setImmediate(() => this.flush());
  }

  /** Emits the batch now (before any other event of the run, and at its end). */
  flush(): void {
    if (this.#immediate !== undefined) clearImmediate(this.#immediate);
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#immediate = undefined;
    this.#timer = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined && pending.text !== "") {
      this.#lastEmit = performance.now();
      this.emit(pending);
    }
  }
}
