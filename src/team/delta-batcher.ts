/**
 * Merges a run's text or reasoning deltas that arrive within one turn of the event loop into one
 * agent event. A model stream often delivers several chunks per network read; each would otherwise
 * cost an event, a JSON frame and a socket write per watching client. Order is kept: a delta of the
 * other kind, or any other event of the run (`flush` first), ends the batch.
 */
import type { AgentEvent } from "../agent/events.js";

type DeltaEvent = Extract<AgentEvent, { type: "text_delta" | "reasoning_delta" }>;

export class DeltaBatcher {
  #pending: DeltaEvent | undefined;
  #scheduled: NodeJS.Immediate | undefined;

  constructor(private readonly emit: (event: DeltaEvent) => void) {}

  push(event: DeltaEvent): void {
    if (this.#pending !== undefined && this.#pending.type !== event.type) this.flush();
    this.#pending = this.#pending
      ? { ...this.#pending, text: this.#pending.text + event.text }
      : { ...event };
    this.#scheduled ??= setImmediate(() => this.flush());
  }

  /** Emits the batch now (before any other event of the run, and at its end). */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined && pending.text !== "") this.emit(pending);
  }
}
