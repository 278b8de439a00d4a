/**
 * One Redis connection for the relays and the shared rate limits (`DIMSUM_REDIS_URL`). `ioredis`
 * is CommonJS and loads on the first connection, where it is installed (the CLI bundle leaves it
 * out). An unreachable server is a `config` error naming the fix, without the URL's password.
 */
import { createRequire } from "node:module";
import type { Redis as RedisClient } from "ioredis";
import { DimsumError } from "../../errors.js";
import { redactUrl } from "../redact-url.js";

export interface RedisConnectOptions {
  /**
   * false (default): commands wait for a reconnect (a publish during a short outage is sent when
   * Redis is back). true: a command fails after one try, for callers that have a fallback.
   */
  failFast?: boolean;
  /** What the connection is for, in the error ("for the shared rate limits"). */
  purpose?: string;
}

/** The error for a Redis that cannot be reached at `url`. */
export function redisUnreachable(url: string, err: unknown, purpose?: string): DimsumError {
  const detail = err instanceof Error ? err.message : String(err);
  return new DimsumError(
    "config",
    `Could not reach Redis at ${redactUrl(url)}${purpose ? ` ${purpose}` : ""} (${detail}).`,
    { hint: "start Redis, or fix DIMSUM_REDIS_URL", retryable: true, cause: err },
  );
}

/** Connects; throws the `config` DimsumError of `redisUnreachable` when it cannot. */
export async function connectRedis(url: string, options: RedisConnectOptions = {}): Promise<RedisClient> {
  const { Redis } = createRequire(import.meta.url)("ioredis") as typeof import("ioredis");
  const client = new Redis(url, {
    lazyConnect: true,
    // Commands of one event-loop turn (a run's token deltas, …) leave in one write.
    enableAutoPipelining: true,
    ...(options.failFast
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false }
      : { maxRetriesPerRequest: null }),
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    return client;
  } catch (err) {
    client.disconnect();
    throw redisUnreachable(url, err, options.purpose);
  }
}
