/**
 * A value read once and shared until `invalidate`: every caller meanwhile gets the same promise. A read
 * that fails is not kept, so the next `get` reads again instead of repeating the failure.
 */
export class CachedRead<T> {
  #value: Promise<T> | undefined;

  constructor(private readonly read: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.#value) {
      const read = this.read();
      this.#value = read;
      read.catch(() => {
        if (this.#value === read) this.#value = undefined;
      });
    }
    return this.#value;
  }

  /** Forgets the value (changed here or on another instance): the next `get` reads it again. */
  invalidate(): void {
    this.#value = undefined;
  }
}
