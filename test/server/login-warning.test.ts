/**
 * Sign-in warns of its pause before it comes and never refuses a right password once the pause it
 * announced is over (issue 34, item 11): each wrong password says how many attempts are left; the
 * one that starts the pause says how long it lasts (also as Retry-After); a right password waits
 * exactly that long and is let in. The throttle counts the same in one process and in Redis.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoginThrottle } from "../../src/server/security/login-throttle.js";
import { openSharedLimits, type SharedLimits } from "../../src/server/security/shared-limits.js";
import { REDIS_URL, redisAvailable } from "../support/redis.js";
import { call, startServer, withUsers } from "./helpers.js";

let shared: SharedLimits | undefined;
beforeAll(async () => {
  if (redisAvailable) shared = await openSharedLimits(REDIS_URL);
});
afterAll(async () => {
  await shared?.close();
});

describe("LoginThrottle's count of failures", () => {
  for (const [kind, skip] of [
    ["in one process", false],
    ["shared in Redis", !redisAvailable],
  ] as const) {
    it.skipIf(skip)(`${kind}: says the attempts left, then the pause to come`, async () => {
      const throttle = new LoginThrottle({
        freeFailures: 3,
        baseDelayMs: 1000,
        ...(kind === "shared in Redis" && shared ? { shared } : {}),
      });
      const key = LoginThrottle.key(`10.0.0.${randomUUID()}`, "alice");
      const outlooks = [];
      for (let i = 0; i < 3; i++)
        outlooks.push(throttle.outlook(await throttle.begin(key, "attempts", 1_000)));
      expect(outlooks).toEqual([{ attemptsLeft: 2 }, { attemptsLeft: 1 }, { waitSeconds: 1 }]);
    });
  }
});

describe("POST /api/auth/login", () => {
  it("warns before the pause, says how long it lasts, and lets the right password in after it", async () => {
    const { url } = await startServer({
      rateLimits: { loginPairs: { freeFailures: 3, baseDelayMs: 1000, maxDelayMs: 60_000 } },
    });
    await withUsers(url);
    const login = (password: string) =>
      call(url, "/api/auth/login", { body: { username: "alice", password } });
    const said: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await login("wrong-password");
      expect(res.status).toBe(401);
      said.push(((await res.json()) as { error: { message: string } }).error.message);
      if (i === 2) expect(res.headers.get("retry-after")).toBe("1");
    }
    expect(said).toEqual([
      "wrong username or password; 2 attempts left before sign-in pauses",
      "wrong username or password; 1 attempt left before sign-in pauses",
      "wrong username or password; sign-in is paused for 1 s",
    ]);
    // During the pause even the right password waits…
    const early = await login("owner-password-1");
    expect(early.status).toBe(429);
    // …and once the announced pause is over it is let in.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await login("owner-password-1")).status).toBe(200);
  });
});
