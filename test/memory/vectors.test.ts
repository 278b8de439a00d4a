import { describe, expect, it } from "vitest";
import { blobToVector, vectorToBlob } from "../../src/memory/vectors/blob.js";
import { dotKernel, jsDotKernel, simdAvailable } from "../../src/memory/vectors/dot-kernel.js";
import { cosine, QuantizedVectorIndex } from "../../src/memory/vectors/quantized-index.js";
import { TopK } from "../../src/memory/vectors/top-k.js";
import { createMemory } from "../../src/memory/vectors/wasm.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";

function seeded(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function randomVector(dims: number, random: () => number): Float32Array {
  return Float32Array.from({ length: dims }, () => random() * 2 - 1);
}

describe("int8 dot kernel", () => {
  it("has WebAssembly SIMD on this Node", () => {
    expect(simdAvailable()).toBe(true);
  });

  it("gives the same int32 dot products as the scalar loop", () => {
    const random = seeded(3);
    const memory = createMemory();
    memory.grow(2);
    const rows = 500;
    const dims = 64;
    const bytes = new Int8Array(memory.buffer);
    for (let i = 0; i < dims * (rows + 1); i++) bytes[i] = Math.floor(random() * 256) - 128;
    const out = dims * (rows + 1);
    dotKernel(memory)(dims, rows, dims, 0, out);
    const simd = Array.from(new Int32Array(memory.buffer, out, rows));
    jsDotKernel(memory)(dims, rows, dims, 0, out);
    expect(simd).toEqual(Array.from(new Int32Array(memory.buffer, out, rows)));
    expect(new Set(simd).size).toBeGreaterThan(400);
  });

  it("ranks within quantisation error of the exact cosine, with either kernel", () => {
    const random = seeded(1);
    const dims = 48;
    for (const forceJs of [false, true]) {
      const index = new QuantizedVectorIndex<number>(dims, { forceJs });
      const vectors = Array.from({ length: 300 }, () => randomVector(dims, random));
      for (const [i, v] of vectors.entries()) index.upsert(i + 1, v, i);
      const query = randomVector(dims, random);
      const hits = index.search(query, 300);
      expect(hits).toHaveLength(300);
      for (const hit of hits)
        expect(Math.abs(hit.score - cosine(query, vectors[hit.meta]!))).toBeLessThan(0.02);
    }
  });

  it("the scalar kernel computes exact int8 dot products", () => {
    const memory = createMemory();
    const bytes = new Int8Array(memory.buffer);
    // query at 0 (16 bytes), two rows at 16 and 32, output at 48.
    bytes.set([1, -2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 127], 0);
    bytes.set([4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 16);
    bytes.set([-1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -128], 32);
    jsDotKernel(memory)(16, 2, 16, 0, 48);
    expect(Array.from(new Int32Array(memory.buffer, 48, 2))).toEqual([
      4 - 10 + 18 + 127,
      -1 + 2 - 3 - 127 * 128,
    ]);
  });
});

describe("QuantizedVectorIndex", () => {
  it("ranks like exact cosine, filters by metadata, and follows updates and removals", () => {
    const texts = [
      "the user prefers dark roast coffee",
      "the user drinks green tea in the afternoon",
      "meeting with the dentist on friday",
      "prefers espresso coffee with oat milk",
      "用户喜欢喝咖啡",
    ];
    const index = new QuantizedVectorIndex<{ kind: string }>(96);
    for (const [i, t] of texts.entries())
      index.upsert(i + 1, hashEmbedding(t, 96), { kind: i === 3 ? "b" : "a" });
    const query = hashEmbedding("coffee preference", 96);
    const exact = texts
      .map((t, i) => ({ id: i + 1, score: cosine(query, hashEmbedding(t, 96)) }))
      .sort((a, b) => b.score - a.score);
    expect(index.search(query, 2).map((h) => h.id)).toEqual(exact.slice(0, 2).map((e) => e.id));
    expect(index.search(query, 5, (m) => m.kind === "b").map((h) => h.id)).toEqual([4]);

    expect(index.remove(1)).toBe(true);
    expect(index.remove(1)).toBe(false);
    expect(index.size).toBe(4);
    expect(index.search(query, 5).map((h) => h.id)).not.toContain(1);
    // The row moved into the freed slot is still found under its own id.
    index.upsert(3, hashEmbedding("dark roast coffee every morning", 96), { kind: "a" });
    expect(index.search(hashEmbedding("dark roast coffee", 96), 1)[0]?.id).toBe(3);
  });

  it("grows past its first allocation and pads odd dimensions", () => {
    const random = seeded(7);
    const index = new QuantizedVectorIndex<number>(20);
    const vectors = Array.from({ length: 1000 }, () => randomVector(20, random));
    for (const [i, v] of vectors.entries()) index.upsert(i, v, i);
    expect(index.stride).toBe(32);
    const target = vectors[777]!;
    expect(index.search(target, 1)[0]).toMatchObject({ id: 777 });
    expect(() => index.upsert(5000, new Float32Array(3), 0)).toThrow(/3 dimensions; this index holds 20/);
  });
});

describe("helpers", () => {
  it("round-trips vectors through BLOB bytes, even unaligned", () => {
    const v = Float32Array.from([0.5, -1.25, 3e-8]);
    const blob = vectorToBlob(v);
    const unaligned = Buffer.concat([Buffer.from([9]), blob]).subarray(1);
    expect(Array.from(blobToVector(unaligned))).toEqual(Array.from(v));
  });

  it("TopK keeps the k best, best first", () => {
    const top = new TopK(3);
    for (const [id, score] of [5, 1, 9, 7, 3, 8].entries()) top.push(id, score);
    expect(top.sorted()).toEqual([
      { id: 2, score: 9 },
      { id: 5, score: 8 },
      { id: 3, score: 7 },
    ]);
  });
});
