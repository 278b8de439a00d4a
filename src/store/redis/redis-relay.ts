/**
 * A message relay between the instances sharing one database, over Redis pub/sub
 * (`DIMSUM_REDIS_URL=redis://…`). Messages are JSON, tagged with the sending instance so each
 * instance skips its own; one publishing connection keeps them in send order. Pub/sub delivers to
 * whoever is connected: what must survive (messages, runs, flows) is in the database, the relay
 * carries only what is live (token deltas, tool events, run lifecycle) and small commands.
 * The connections come from redis-connection.ts.
 */
import { randomUUID } from "node:crypto";
import type { Redis as RedisClient } from "ioredis";
import { DimsumError } from "../../errors.js";
import { redactUrl } from "../redact-url.js";
import { connectRedis, redisUnreachable } from "./redis-connection.js";

export interface MessageRelay<T> {
  /** This instance's id (random per process). */
  readonly instanceId: string;
  /** Sends a message to every other instance. Never throws; a lost connection is reported. */
  publish(message: T): void;
  /** Receives the other instances' messages, in the order each sent them; returns the unsubscribe. */
  subscribe(listener: (message: T) => void): () => void;
  close(): Promise<void>;
}

export interface RedisRelayOptions {
  /** The pub/sub channel (default `dimsum:team`); instances of one team share it. */
  channel?: string;
  /** Connection problems after the start (Redis restarted, network gone), reported once per outage. */
  onError?: (err: DimsumError) => void;
}

interface Envelope<T> {
  from: string;
  message: T;
}

/** Connects (two connections: one publishes, one listens); throws a `config` DimsumError when it cannot. */
export async function openRedisRelay<T>(
  url: string,
  options: RedisRelayOptions = {},
): Promise<MessageRelay<T>> {
  const label = redactUrl(url);
  const channel = options.channel ?? "dimsum:team";
  const instanceId = randomUUID();
  const publisher = await connectRedis(url);
  let subscriber: RedisClient;
  try {
    subscriber = await connectRedis(url);
    await subscriber.subscribe(channel);
  } catch (err) {
    publisher.disconnect();
    throw err instanceof DimsumError ? err : redisUnreachable(url, err);
  }
  const listeners = new Set<(message: T) => void>();
  let down = false;
  const report = (err: unknown) => {
    if (down) return;
    down = true;
    options.onError?.(
      new DimsumError(
        "internal",
        `Lost the connection to Redis at ${label}: live events from other instances pause until it is back (${err instanceof Error ? err.message : String(err)}).`,
        {
          hint: "check that Redis is running and reachable",
          retryable: true,
          cause: err,
        },
      ),
    );
  };
  for (const client of [publisher, subscriber]) {
    client.on("error", report);
    client.on("ready", () => {
      down = false;
    });
  }
  subscriber.on("message", (from: string, raw: string) => {
    if (from !== channel) return;
    let envelope: Envelope<T>;
    try {
      envelope = JSON.parse(raw) as Envelope<T>;
    } catch {
      return;
    }
    if (envelope.from === instanceId) return;
    for (const listener of listeners) {
      try {
        listener(envelope.message);
      } catch (err) {
        report(err);
      }
    }
  });
  return {
    instanceId,
    publish(message) {
      const envelope: Envelope<T> = { from: instanceId, message };
      publisher.publish(channel, JSON.stringify(envelope)).catch(report);
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      listeners.clear();
      await Promise.allSettled([subscriber.quit(), publisher.quit()]);
    },
  };
}
