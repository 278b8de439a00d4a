/**
 * Merges a run's token deltas that arrive within one turn of the event loop into one event. A model
 * stream often delivers several chunks per network read; each would otherwise cost an event, a JSON
 * frame and a socket write per watching client. Order is kept: a delta of the other kind, or any
 * other event of the run (`flush` first), ends the batch.
 */
export type DeltaKind = "delta" | "reasoning";

export class DeltaBatcher {
  #kind: DeltaKind | undefined;
  #text = "";
  #scheduled: NodeJS.Immediate | undefined;

  constructor(private readonly emit: (kind: DeltaKind, text: string) => void) {}

  push(kind: DeltaKind, text: string): void {
    if (this.#kind !== undefined && this.#kind !== kind) this.flush();
    this.#kind = kind;
    this.#text += text;
    this.#scheduled ??= setImmediate(() => this.flush());
  }

  /** Emits the batch now (before any other event of the run, and at its end). */
  flush(): void {
    if (this.#scheduled) clearImmediate(this.#scheduled);
    this.#scheduled = undefined;
    const kind = this.#kind;
    const text = this.#text;
    this.#kind = undefined;
    this.#text = "";
    if (kind !== undefined && text !== "") this.emit(kind, text);
  }
}
