import { describe, expect, it } from "vitest";
import { parallelScanner } from "../../src/memory/vectors/parallel-scan.js";
import { QuantizedVectorIndex } from "../../src/memory/vectors/quantized-index.js";

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const DIMS = 64;
const ROWS = 20_001; // odd, and five blocks of 4,096 rows

function build(parallelMinRows: number, random: () => number) {
  const index = new QuantizedVectorIndex<number>(DIMS, { parallelMinRows });
  for (let i = 0; i < ROWS; i++)
    index.upsert(
      i,
      Float32Array.from({ length: DIMS }, () => random() * 2 - 1),
      i % 7,
    );
  return index;
}

describe("vector scans shared with a worker thread", () => {
  it("find exactly what a scan on one thread finds, with filters", () => {
    const alone = build(Number.POSITIVE_INFINITY, seeded(11));
    const shared = build(1_000, seeded(11));
    const random = seeded(5);
    for (let q = 0; q < 20; q++) {
      const query = Float32Array.from({ length: DIMS }, () => random() * 2 - 1);
      const accept = q % 2 === 0 ? undefined : (kind: number) => kind === q % 7;
      expect(shared.search(query, 25, accept)).toEqual(alone.search(query, 25, accept));
    }
  });

  it("let the worker take blocks while this thread does other work", () => {
    const scanner = parallelScanner();
    expect(scanner, "this Node has worker threads and shared WebAssembly memory").toBeDefined();
    const index = build(1_000, seeded(3));
    const reference = build(Number.POSITIVE_INFINITY, seeded(3));
    const query = Float32Array.from({ length: DIMS }, (_, i) => Math.sin(i));
    const before = scanner!.stats().worker;
    const pending = index.beginSearch(query, 10);
    // Busy on this thread (as during the BM25 query) until the worker has scanned something.
    const deadline = Date.now() + 5_000;
    while (scanner!.stats().worker === before && Date.now() < deadline) {}
    expect(scanner!.stats().worker).toBeGreaterThan(before);
    expect(pending.result()).toEqual(reference.search(query, 10));
  });

  it("finish a pending scan before the index changes or another index scans", () => {
    const a = build(1_000, seeded(21));
    const b = build(1_000, seeded(22));
    const aRef = build(Number.POSITIVE_INFINITY, seeded(21));
    const bRef = build(Number.POSITIVE_INFINITY, seeded(22));
    const query = Float32Array.from({ length: DIMS }, (_, i) => Math.cos(i * 3));
    const fromA = a.beginSearch(query, 5);
    const fromB = b.beginSearch(query, 5);
    const expectedA = aRef.search(query, 5);
    // The best row of `a` is replaced before its pending result is taken: the result predates it.
    a.upsert(
      expectedA[0]!.id,
      Float32Array.from(query, (x) => -x),
      0,
    );
    expect(fromA.result()).toEqual(expectedA);
    expect(fromB.result()).toEqual(bRef.search(query, 5));
    expect(a.search(query, 5)[0]!.id).not.toBe(expectedA[0]!.id);
    // A second search on the same index settles the first.
    const first = b.beginSearch(query, 3);
    const second = b.beginSearch(
      Float32Array.from(query, (x) => -x),
      3,
    );
    expect(first.result()).toEqual(bRef.search(query, 3));
    expect(second.result()).toEqual(
      bRef.search(
        Float32Array.from(query, (x) => -x),
        3,
      ),
    );
  });
});
