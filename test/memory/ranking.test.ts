import { describe, expect, it } from "vitest";
import {
  accessOf,
  evictionScore,
  recencyOf,
  reciprocalRankFusion,
  weightFactor,
} from "../../src/memory/ranking.js";

const DAY = 86_400_000;
const now = 1_800_000_000_000;

describe("reciprocal rank fusion", () => {
  it("adds 1/(60 + rank) over the lists (hand-checked)", () => {
    // BM25 ranks a, b, c; vectors rank c, a, d.
    const fused = reciprocalRankFusion([
      ["a", "b", "c"],
      ["c", "a", "d"],
    ]);
    // a: 1/61 + 1/62 = 0.032522; c: 1/63 + 1/61 = 0.032266; b: 1/62 = 0.016129; d: 1/63 = 0.015873.
    expect(fused.get("a")).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(fused.get("c")).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(fused.get("b")).toBeCloseTo(1 / 62, 12);
    expect(fused.get("d")).toBeCloseTo(1 / 63, 12);
    const order = [...fused].sort((x, y) => y[1] - x[1]).map(([id]) => id);
    expect(order).toEqual(["a", "c", "b", "d"]);
  });

  it("uses k = 60 unless told otherwise", () => {
    expect(reciprocalRankFusion([["x"]]).get("x")).toBe(1 / 61);
    expect(reciprocalRankFusion([["x"]], 0).get("x")).toBe(1);
  });
});

describe("weights", () => {
  it("halves recency every 30 days, counting the later of update and access", () => {
    expect(recencyOf({ importance: 5, accessCount: 0, updatedAt: now }, now)).toBe(1);
    expect(recencyOf({ importance: 5, accessCount: 0, updatedAt: now - 30 * DAY }, now)).toBeCloseTo(0.5, 12);
    expect(recencyOf({ importance: 5, accessCount: 0, updatedAt: now - 60 * DAY }, now)).toBeCloseTo(
      0.25,
      12,
    );
    expect(
      recencyOf(
        { importance: 5, accessCount: 0, updatedAt: now - 60 * DAY, lastAccessedAt: now - 30 * DAY },
        now,
      ),
    ).toBeCloseTo(0.5, 12);
  });

  it("saturates access at 32 uses on a log scale", () => {
    expect(accessOf({ importance: 5, accessCount: 0, updatedAt: now })).toBe(0);
    expect(accessOf({ importance: 5, accessCount: 32, updatedAt: now })).toBe(1);
    expect(accessOf({ importance: 5, accessCount: 500, updatedAt: now })).toBe(1);
    expect(accessOf({ importance: 5, accessCount: 3, updatedAt: now })).toBeCloseTo(
      Math.log(4) / Math.log(33),
      12,
    );
  });

  it("weights fused scores by a factor between 0.7 and 1", () => {
    expect(weightFactor({ importance: 10, accessCount: 32, updatedAt: now }, now)).toBeCloseTo(1, 12);
    expect(weightFactor({ importance: 1, accessCount: 0, updatedAt: now - 3650 * DAY }, now)).toBeCloseTo(
      0.715,
      3,
    );
    // 0.7 + 0.1·0.5 + 0.15·0.5 + 0.05·0
    expect(weightFactor({ importance: 5, accessCount: 0, updatedAt: now - 30 * DAY }, now)).toBeCloseTo(
      0.825,
      12,
    );
  });

  it("scores eviction as recency 30% + importance 40% + access 30%", () => {
    // 0.3·1 + 0.4·0.2 + 0.3·0
    expect(evictionScore({ importance: 2, accessCount: 0, updatedAt: now }, now)).toBeCloseTo(0.38, 12);
    // 0.3·0.25 + 0.4·0.9 + 0.3·1
    expect(evictionScore({ importance: 9, accessCount: 40, updatedAt: now - 60 * DAY }, now)).toBeCloseTo(
      0.735,
      12,
    );
  });
});
