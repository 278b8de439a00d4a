/** Starting a fake's HTTP server for tests. */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Listens on a free port of 127.0.0.1 and resolves with it. Idle keep-alive sockets are kept longer
 * than any test, so a client never races the server closing one.
 */
export async function listenOnLoopback(server: Server): Promise<number> {
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  return (server.address() as AddressInfo).port;
}
