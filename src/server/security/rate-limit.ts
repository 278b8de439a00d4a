/**
 * Token-bucket rate limits keyed by user or client IP: login attempts per IP (a ceiling per address)
 * and message sending (per user and per IP), plus the per (address, username) login throttle of
 * login-throttle.ts. Over a limit → 429 with `Retry-After`. Nothing here is keyed by username alone,
 * so no one can lock a person out by failing logins in their name from elsewhere.
 */
import type { MiddlewareHandler } from "hono";
import { DimsumError } from "../../errors.js";
import type { AppEnv } from "../context.js";
import { LoginThrottle, type LoginThrottleOptions } from "./login-throttle.js";
import type { SharedLimits } from "./shared-limits.js";

export interface BucketOptions {
  /** Burst size: requests allowed at once. */
  capacity: number;
  /** Tokens added back per minute. */
  perMinute: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  updatedAt: number;
}

/** Sweep idle buckets once the map grows past this, so memory stays bounded under address churn. */
const SWEEP_THRESHOLD = 10_000;

/** One limit: a token bucket per key. */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;

  /** With `shared`, the buckets are in Redis under `name` (here again when Redis fails). */
  constructor(
    readonly options: BucketOptions,
    private readonly shared?: { limits: SharedLimits; name: string; onError: (err: unknown) => void },
  ) {
    this.refillPerMs = options.perMinute / 60_000;
  }

  /** Takes one token for `key`; says how long to wait when none is left. */
  async take(key: string, now = Date.now()): Promise<TakeResult> {
    if (this.shared) {
      const { limits, name, onError } = this.shared;
      try {
        const wait = await limits.take(name, key, this.options.capacity, this.options.perMinute, now);
        return wait === 0
          ? { ok: true }
          : { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(wait / 1000)) };
      } catch (err) {
        onError(err);
      }
    }
    return this.takeHere(key, now);
  }

  private takeHere(key: string, now: number): TakeResult {
    const { capacity } = this.options;
    const bucket = this.buckets.get(key) ?? { tokens: capacity, updatedAt: now };
    bucket.tokens = Math.min(capacity, bucket.tokens + (now - bucket.updatedAt) * this.refillPerMs);
    bucket.updatedAt = now;
    if (!this.buckets.has(key)) {
      if (this.buckets.size >= SWEEP_THRESHOLD) this.sweep(now);
      this.buckets.set(key, bucket);
    }
    if (bucket.tokens < 1) {
      return {
        ok: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / this.refillPerMs / 1000)),
      };
    }
    bucket.tokens -= 1;
    return { ok: true };
  }

  /** Forgets buckets that have refilled completely (they behave exactly like absent ones). */
  private sweep(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.refillPerMs >= this.options.capacity) {
        this.buckets.delete(key);
      }
    }
  }
}

type BucketName = "loginPerIp" | "messagePerUser" | "messagePerIp";

export interface ServerRateLimits extends Record<BucketName, RateLimiter> {
  /** Growing delays after failed logins, per (address, username) pair. */
  loginPairs: LoginThrottle;
}

export type RateLimitConfig = Partial<Record<BucketName, BucketOptions>> & {
  loginPairs?: LoginThrottleOptions;
};

const defaults: Record<BucketName, BucketOptions> = {
  // Every login attempt from one address, whatever the username: the per-address ceiling.
  loginPerIp: { capacity: 10, perMinute: 10 },
  messagePerUser: { capacity: 30, perMinute: 30 },
  messagePerIp: { capacity: 120, perMinute: 120 },
};

/**
 * The server's limiters, defaults overridden by `config`; with `shared`, their counts are those of
 * every instance (Redis), and `onSharedError` hears when this instance had to count alone.
 */
export function createRateLimits(
  config: RateLimitConfig = {},
  shared?: SharedLimits,
  onSharedError: (err: unknown) => void = () => undefined,
): ServerRateLimits {
  const bucket = (name: BucketName) =>
    new RateLimiter(
      config[name] ?? defaults[name],
      shared ? { limits: shared, name, onError: onSharedError } : undefined,
    );
  return {
    loginPerIp: bucket("loginPerIp"),
    loginPairs: new LoginThrottle({
      ...config.loginPairs,
      ...(shared ? { shared, onSharedError } : {}),
    }),
    messagePerUser: bucket("messagePerUser"),
    messagePerIp: bucket("messagePerIp"),
  };
}

/** The 429 for a failed take. */
export function rateLimited(retryAfterSeconds: number, what: string): DimsumError {
  return new DimsumError("rate_limited", `too many ${what}; try again in ${retryAfterSeconds} s`, {
    retryAfterSeconds,
  });
}

/** Takes from every (limiter, key) pair; throws the 429 of the first that is empty. */
export async function enforce(checks: Array<[RateLimiter, string]>, what: string): Promise<void> {
  for (const [limiter, key] of checks) {
    const result = await limiter.take(key);
    if (!result.ok) throw rateLimited(result.retryAfterSeconds, what);
  }
}

/**
 * Limits message sending per user and per client IP. Put it on the message-posting route, after
 * authentication: `app.post("/api/channels/:id/messages", messageRateLimit, ...)`.
 */
export const messageRateLimit: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { limits } = c.get("services");
  const auth = c.get("auth");
  const checks: Array<[RateLimiter, string]> = [[limits.messagePerIp, c.get("clientIp")]];
  if (auth) checks.unshift([limits.messagePerUser, auth.user.id]);
  await enforce(checks, "messages");
  await next();
};
