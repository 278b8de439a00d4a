/**
 * Rate-limit state shared by the instances of one team, in Redis: the token buckets (the per-address
 * sign-in ceiling, message sending) and the per (address, username) login throttle. Without it each
 * instance counts on its own, and behind a load balancer N instances would allow N times the guesses.
 * Each update is one Lua script, so concurrent requests on several instances see one count.
 *
 * Redis unreachable: the caller falls back to its own in-memory state (still limited, per instance)
 * rather than refusing every sign-in; `onError` hears about it.
 */
import type { Redis as RedisClient } from "ioredis";
import { connectRedis } from "../../store/redis/redis-connection.js";

/** The limit state in Redis (see `openSharedLimits`). */
export interface SharedLimits {
  /** Takes a token of `bucket`'s bucket for `key`; resolves to the wait in ms (0: taken). */
  take(bucket: string, key: string, capacity: number, perMinute: number, now: number): Promise<number>;
  /**
   * Counts a login attempt of the pair as a failure unless it must wait; resolves to the time
   * (epoch ms) until which it must wait, or, when the attempt may go ahead, minus the failures
   * counted (this attempt included).
   */
  beginPair(key: string, policy: PairPolicy, now: number): Promise<number>;
  /** The password was right: the pair starts over. */
  clearPair(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface PairPolicy {
  freeFailures: number;
  baseDelayMs: number;
  maxDelayMs: number;
  forgetAfterMs: number;
}

const TAKE = `
local cap = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(b[1]) or cap
local updated = tonumber(b[2]) or now
tokens = math.min(cap, tokens + math.max(0, now - updated) * rate)
local wait = 0
if tokens >= 1 then tokens = tokens - 1 else wait = math.ceil((1 - tokens) / rate) end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(cap / rate) + 1000)
return tostring(wait)`;

const BEGIN_PAIR = `
local now = tonumber(ARGV[1])
local free = tonumber(ARGV[2])
local base = tonumber(ARGV[3])
local max = tonumber(ARGV[4])
local forget = tonumber(ARGV[5])
local s = redis.call('HMGET', KEYS[1], 'f', 'l', 'b')
local f = tonumber(s[1]) or 0
local l = tonumber(s[2]) or now
local blocked = tonumber(s[3]) or 0
if f > 0 and now - l >= forget then
  f = 0
  blocked = 0
end
if blocked > now then return tostring(blocked) end
f = f + 1
local over = f - free
if over >= 0 then blocked = now + math.min(max, base * 2 ^ math.min(over, 30)) end
redis.call('HSET', KEYS[1], 'f', tostring(f), 'l', tostring(now), 'b', tostring(blocked))
redis.call('PEXPIRE', KEYS[1], forget)
return tostring(-f)`;

const PREFIX = "dimsum:limits:";

/** The two scripts, run by their SHA once Redis knows them (ioredis `defineCommand`). */
interface ScriptedRedis extends RedisClient {
  dimsumTake(key: string, capacity: number, perMs: number, now: number): Promise<string>;
  dimsumBeginPair(
    key: string,
    now: number,
    free: number,
    base: number,
    max: number,
    forget: number,
  ): Promise<string>;
}

/** Connects to the Redis at `url`; throws a `config` DimsumError when it cannot. */
export async function openSharedLimits(url: string): Promise<SharedLimits> {
  // One try per command: a sign-in must not hang while Redis is away (the caller falls back).
  const client = await connectRedis(url, { failFast: true, purpose: "for the shared rate limits" });
  client.defineCommand("dimsumTake", { numberOfKeys: 1, lua: TAKE });
  client.defineCommand("dimsumBeginPair", { numberOfKeys: 1, lua: BEGIN_PAIR });
  const scripted = client as ScriptedRedis;
  return {
    async take(bucket, key, capacity, perMinute, now) {
      return Number(
        await scripted.dimsumTake(`${PREFIX}${bucket}:${key}`, capacity, perMinute / 60_000, now),
      );
    },
    async beginPair(key, policy, now) {
      const until = await scripted.dimsumBeginPair(
        `${PREFIX}login:${key}`,
        now,
        policy.freeFailures,
        policy.baseDelayMs,
        policy.maxDelayMs,
        policy.forgetAfterMs,
      );
      return Number(until);
    },
    async clearPair(key) {
      await client.del(`${PREFIX}login:${key}`);
    },
    async close() {
      client.disconnect();
    },
  };
}
