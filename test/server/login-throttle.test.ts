/**
 * The per (address, username) login throttle: free failures, then doubling delays up to a ceiling;
 * the same in one process and with the counts in Redis, where two instances count together; and the
 * token buckets shared the same way. A Redis that fails leaves each instance counting alone.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { LoginThrottle, type LoginThrottleOptions } from "../../src/server/security/login-throttle.js";
import { RateLimiter } from "../../src/server/security/rate-limit.js";
import { openSharedLimits, type SharedLimits } from "../../src/server/security/shared-limits.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";

/** The Retry-After of a refused attempt, or 0 when it may go ahead. */
async function waitOf(throttle: LoginThrottle, key: string, now: number): Promise<number> {
  try {
    await throttle.begin(key, "attempts", now);
    return 0;
  } catch (err) {
    if (!(err instanceof DimsumError) || err.code !== "rate_limited") throw err;
    return err.retryAfterSeconds ?? -1;
  }
}

let shared: SharedLimits | undefined;
beforeAll(async () => {
  if (redisAvailable) shared = await openSharedLimits(REDIS_URL);
});
afterAll(async () => {
  await shared?.close();
});

const kinds = [
  { kind: "in one process", make: (o: LoginThrottleOptions) => new LoginThrottle(o), skip: false },
  {
    kind: "shared in Redis",
    make: (o: LoginThrottleOptions) => new LoginThrottle({ ...o, ...(shared ? { shared } : {}) }),
    skip: !redisAvailable,
  },
];

for (const { kind, make, skip } of kinds) {
  // Keys unique per run: the Redis counts outlive a test run.
  const address = (n: number) => `10.${n}.0.${randomUUID()}`;

  describe.skipIf(skip)(`LoginThrottle ${kind}`, () => {
    it("lets the free failures through, then doubles the wait up to the ceiling", async () => {
      const throttle = make({ freeFailures: 2, baseDelayMs: 1000, maxDelayMs: 8000 });
      const key = LoginThrottle.key(address(1), "Alice");
      let now = 1_000_000;
      expect(await waitOf(throttle, key, now)).toBe(0); // failure 1
      expect(await waitOf(throttle, key, now)).toBe(0); // failure 2: the next one waits 1 s
      expect(await waitOf(throttle, key, now)).toBe(1);
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) {
        now += 100_000;
        expect(await waitOf(throttle, key, now)).toBe(0);
        waits.push(await waitOf(throttle, key, now));
      }
      expect(waits).toEqual([2, 4, 8, 8, 8]);
    });

    it("keeps pairs apart: another address, or another name, starts fresh", async () => {
      const throttle = make({ freeFailures: 1 });
      const ip = address(2);
      const attacker = LoginThrottle.key(ip, "alice");
      expect(await waitOf(throttle, attacker, 1000)).toBe(0);
      expect(await waitOf(throttle, attacker, 1000)).toBeGreaterThan(0);
      expect(LoginThrottle.key(ip, "ALICE")).toBe(attacker);
      expect(await waitOf(throttle, LoginThrottle.key(address(3), "alice"), 1000)).toBe(0);
      expect(await waitOf(throttle, LoginThrottle.key(ip, "bob"), 1000)).toBe(0);
    });

    it("a success clears the pair; a long quiet spell forgets it", async () => {
      const throttle = make({ freeFailures: 1, forgetAfterMs: 60_000 });
      const key = LoginThrottle.key(address(4), "carol");
      await throttle.begin(key, "attempts", 1000);
      await throttle.succeeded(key);
      expect(await waitOf(throttle, key, 1000)).toBe(0);
      expect(await waitOf(throttle, key, 1000)).toBeGreaterThan(0);
      expect(await waitOf(throttle, key, 61_000)).toBe(0);
      expect(await waitOf(throttle, key, 61_000)).toBeGreaterThan(0);
    });
  });
}

describe.skipIf(!redisAvailable)("limits shared by two instances in Redis", () => {
  it("counts one pair's failures on both instances together", async () => {
    const [a, b] = [0, 1].map(() => new LoginThrottle({ freeFailures: 3, baseDelayMs: 5000, shared }));
    const key = LoginThrottle.key(`192.0.2.${randomUUID()}`, "dave");
    expect(await waitOf(a as LoginThrottle, key, 1000)).toBe(0);
    expect(await waitOf(b as LoginThrottle, key, 1000)).toBe(0);
    expect(await waitOf(a as LoginThrottle, key, 1000)).toBe(0);
    // Three failures across the two: the fourth attempt waits, on either instance.
    expect(await waitOf(b as LoginThrottle, key, 1000)).toBe(5);
    expect(await waitOf(a as LoginThrottle, key, 1000)).toBe(5);
    // A success on one clears the pair for both.
    await (b as LoginThrottle).succeeded(key);
    expect(await waitOf(a as LoginThrottle, key, 1000)).toBe(0);
  });

  it("shares a token bucket: the per-address ceiling holds across instances", async () => {
    const limits = shared as SharedLimits;
    const bucket = `test-${randomUUID()}`;
    const [a, b] = [0, 1].map(
      () =>
        new RateLimiter({ capacity: 4, perMinute: 60 }, { limits, name: bucket, onError: () => undefined }),
    );
    const taken: boolean[] = [];
    for (let i = 0; i < 6; i++) taken.push((await (i % 2 ? b : a)?.take("203.0.113.1", 10_000))?.ok === true);
    expect(taken).toEqual([true, true, true, true, false, false]);
    // One token a second comes back, for both.
    expect(await a?.take("203.0.113.1", 11_000)).toEqual({ ok: true });
    expect(await b?.take("203.0.113.1", 11_000)).toEqual({ ok: false, retryAfterSeconds: 1 });
  });

  it("counts here when Redis fails, and says so", async () => {
    const broken: SharedLimits = {
      take: () => Promise.reject(new Error("connection lost")),
      beginPair: () => Promise.reject(new Error("connection lost")),
      clearPair: () => Promise.reject(new Error("connection lost")),
      close: async () => undefined,
    };
    const errors: unknown[] = [];
    const throttle = new LoginThrottle({
      freeFailures: 1,
      shared: broken,
      onSharedError: (e) => errors.push(e),
    });
    const key = LoginThrottle.key("198.51.100.1", "erin");
    expect(await waitOf(throttle, key, 1000)).toBe(0);
    expect(await waitOf(throttle, key, 1000)).toBeGreaterThan(0);
    expect(errors.length).toBe(2);
    const limiter = new RateLimiter(
      { capacity: 1, perMinute: 1 },
      { limits: broken, name: "x", onError: (e) => errors.push(e) },
    );
    expect(await limiter.take("k", 0)).toEqual({ ok: true });
    expect((await limiter.take("k", 0)).ok).toBe(false);
  });
});
