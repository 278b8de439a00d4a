/** The per (address, username) login throttle: free failures, then doubling delays up to a ceiling. */
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { LoginThrottle } from "../../src/server/security/login-throttle.js";

/** The Retry-After of a refused attempt, or 0 when it may go ahead. */
function waitOf(throttle: LoginThrottle, key: string, now: number): number {
  try {
    throttle.begin(key, "attempts", now);
    return 0;
  } catch (err) {
    if (!(err instanceof DimsumError) || err.code !== "rate_limited") throw err;
    return err.retryAfterSeconds ?? -1;
  }
}

describe("LoginThrottle", () => {
  it("lets the free failures through, then doubles the wait up to the ceiling", () => {
    const throttle = new LoginThrottle({ freeFailures: 2, baseDelayMs: 1000, maxDelayMs: 8000 });
    const key = LoginThrottle.key("10.0.0.1", "Alice");
    let now = 0;
    expect(waitOf(throttle, key, now)).toBe(0); // failure 1
    expect(waitOf(throttle, key, now)).toBe(0); // failure 2: the next one waits 1 s
    expect(waitOf(throttle, key, now)).toBe(1);
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      now += 100_000;
      expect(waitOf(throttle, key, now)).toBe(0);
      waits.push(waitOf(throttle, key, now));
    }
    expect(waits).toEqual([2, 4, 8, 8, 8]);
    expect(throttle.failuresOf(key)).toBe(7);
  });

  it("keeps pairs apart: another address, or another name, starts fresh", () => {
    const throttle = new LoginThrottle({ freeFailures: 1 });
    const attacker = LoginThrottle.key("203.0.113.9", "alice");
    expect(waitOf(throttle, attacker, 0)).toBe(0);
    expect(waitOf(throttle, attacker, 0)).toBeGreaterThan(0);
    expect(LoginThrottle.key("203.0.113.9", "ALICE")).toBe(attacker);
    expect(waitOf(throttle, LoginThrottle.key("198.51.100.7", "alice"), 0)).toBe(0);
    expect(waitOf(throttle, LoginThrottle.key("203.0.113.9", "bob"), 0)).toBe(0);
  });

  it("a success clears the pair; a long quiet spell forgets it", () => {
    const throttle = new LoginThrottle({ freeFailures: 1, forgetAfterMs: 60_000 });
    const key = LoginThrottle.key("10.0.0.2", "carol");
    throttle.begin(key, "attempts", 0);
    throttle.succeeded(key);
    expect(throttle.failuresOf(key)).toBe(0);
    expect(waitOf(throttle, key, 0)).toBe(0);
    expect(waitOf(throttle, key, 0)).toBeGreaterThan(0);
    expect(waitOf(throttle, key, 60_000)).toBe(0);
    expect(throttle.failuresOf(key)).toBe(1);
  });
});
