import { describe, expect, it } from "vitest";
import { CachedRead } from "../../src/shared/cached-read.js";

describe("CachedRead", () => {
  it("reads once for every caller until invalidated, then reads again", async () => {
    let reads = 0;
    const cached = new CachedRead(async () => ++reads);
    const [a, b] = await Promise.all([cached.get(), cached.get()]);
    expect([a, b, reads]).toEqual([1, 1, 1]);
    cached.invalidate();
    expect(await cached.get()).toBe(2);
  });

  it("does not keep a failed read: the next get reads again", async () => {
    let reads = 0;
    const cached = new CachedRead(async () => {
      reads++;
      if (reads === 1) throw new Error("database busy");
      return "ok";
    });
    await expect(cached.get()).rejects.toThrow("database busy");
    expect(await cached.get()).toBe("ok");
    expect(reads).toBe(2);
  });
});
