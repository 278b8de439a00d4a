/**
 * Holds back a run's events until something that must be written first is done, while the run goes
 * on: `dimsum run` makes its first model call while the sandbox probe behind the shell notice runs,
 * rather than after it, and the notice still comes before any of the run's output.
 */
const READY: unique symbol = Symbol("ready");

/** Yields `events` in order, none before `ready` settles; a rejection of `ready` ends the run with it. */
export async function* heldUntil<T>(ready: Promise<unknown>, events: AsyncGenerator<T>): AsyncGenerator<T> {
  const readied: Promise<typeof READY> = ready.then(() => READY);
  const held: T[] = [];
  let next = events.next();
  let finished = false;
  try {
    for (;;) {
      const first = await Promise.race([next, readied]);
      if (first === READY) break;
      if (first.done) {
        finished = true;
        break;
      }
      held.push(first.value);
      next = events.next();
    }
    await readied;
    yield* held;
    if (finished) return;
    const step = await next;
    if (step.done) return;
    yield step.value;
    yield* events;
  } finally {
    await events.return(undefined);
  }
}
