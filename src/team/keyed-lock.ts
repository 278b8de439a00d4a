/** Runs async sections one at a time per key (e.g. per flow), in call order; other keys run freely. */
export class KeyedLock {
  readonly #tails = new Map<string, Promise<void>>();

  /** Runs `body` once every earlier section of the same key has settled. */
  async run<T>(key: string, body: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(body);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    try {
      return await result;
    } finally {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}
