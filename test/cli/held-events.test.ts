/** heldUntil: a run goes on while something that must be written first finishes; its events wait. */
import { expect, it } from "vitest";
import { heldUntil } from "../../src/cli/held-events.js";

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: Error) => void } {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

it("runs the events on while waiting, then yields them all in order after what comes first", async () => {
  const log: string[] = [];
  const notice = deferred();
  async function* run() {
    for (const n of [1, 2, 3]) {
      log.push(`produced ${n}`);
      yield n;
    }
  }
  const seen: number[] = [];
  const consuming = (async () => {
    for await (const n of heldUntil(notice.promise, run())) {
      log.push(`yielded ${n}`);
      seen.push(n);
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 10));
  expect(log).toEqual(["produced 1", "produced 2", "produced 3"]);
  log.push("notice");
  notice.resolve();
  await consuming;
  expect(seen).toEqual([1, 2, 3]);
  expect(log.slice(3)).toEqual(["notice", "yielded 1", "yielded 2", "yielded 3"]);
});

it("passes on events that come after the wait, and the run's error", async () => {
  async function* run() {
    yield "first";
    await new Promise((resolve) => setTimeout(resolve, 10));
    yield "second";
    throw new Error("model down");
  }
  const seen: string[] = [];
  await expect(
    (async () => {
      for await (const event of heldUntil(Promise.resolve(), run())) seen.push(event);
    })(),
  ).rejects.toThrow("model down");
  expect(seen).toEqual(["first", "second"]);
});

it("ends the run when what comes first fails", async () => {
  let closed = false;
  async function* run() {
    try {
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        yield 1;
      }
    } finally {
      closed = true;
    }
  }
  const notice = deferred();
  setTimeout(() => notice.reject(new Error("stderr closed")), 5);
  const seen: number[] = [];
  await expect(
    (async () => {
      for await (const n of heldUntil(notice.promise, run())) seen.push(n);
    })(),
  ).rejects.toThrow("stderr closed");
  expect(seen).toEqual([]);
  expect(closed).toBe(true);
});
