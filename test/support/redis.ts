/**
 * Redis for tests, at DIMSUM_TEST_REDIS_URL (default the loopback server). Without a reachable server
 * the Redis suites are skipped, with a line saying how to run them; with CI set, an unreachable
 * server fails the run instead.
 */
import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";

export const REDIS_URL = process.env.DIMSUM_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

function ping(): Promise<boolean> {
  const url = new URL(REDIS_URL);
  return new Promise((resolve) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (data) => done(data.toString().startsWith("+PONG")));
  });
}

/** Whether the Redis suites run here (throws under CI when the server is unreachable). */
export const redisAvailable: boolean = await ping().then((ok) => {
  if (ok) return true;
  if (process.env.CI)
    throw new Error(`Redis is unreachable at ${REDIS_URL}; CI needs it for the Redis suites`);
  console.warn(
    `Skipping the Redis suites: no server at ${REDIS_URL}. Start Redis on 127.0.0.1:6379 or set DIMSUM_TEST_REDIS_URL to run them.`,
  );
  return false;
});

/** A pub/sub channel of this test alone, so parallel test files never hear each other. */
export function testChannel(): string {
  return `dimsum:test:${process.pid}:${randomBytes(4).toString("hex")}`;
}
