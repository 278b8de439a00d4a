/** The part every fake platform shares on top of its FakePlatformServer: starting, and what tests call. */
import type { IncomingMessage } from "node:http";
import {
  type FakeHandler,
  FakePlatformServer,
  type FakeReply,
  type Outage,
  reply,
} from "./fake-platform-server.js";

/** How a fake answers: JSON calls, and multipart uploads when it takes them. */
export interface FakeRoutes<T> {
  handle: (fake: T, ...request: Parameters<FakeHandler>) => ReturnType<FakeHandler>;
  upload?: (fake: T, req: IncomingMessage, bytes: Buffer) => FakeReply | Promise<FakeReply>;
}

/**
 * Starts a server and the fake `create` builds on it; requests go to its routes (503 in the moment
 * before the fake exists).
 */
export async function startFake<T>(
  create: (server: FakePlatformServer) => T,
  routes: FakeRoutes<T>,
): Promise<T> {
  let fake: T | undefined;
  const server = await FakePlatformServer.start((req, body, closed, bytes) => {
    if (fake === undefined) return reply(503, {});
    const multipart = (req.headers["content-type"] ?? "").startsWith("multipart/form-data");
    if (multipart && routes.upload) return routes.upload(fake, req, bytes);
    return routes.handle(fake, req, body, closed, bytes);
  });
  fake = create(server);
  return fake;
}

/** What every fake platform gives its tests: the address, the outage switch, waiting and closing. */
export abstract class FakePlatform {
  protected readonly server: FakePlatformServer;

  protected constructor(server: FakePlatformServer) {
    this.server = server;
  }

  /** Base URL to configure as the connector's `baseUrl`. */
  get url(): string {
    return this.server.url;
  }

  /** Requests answered 502 during outages. */
  get outageHits(): number {
    return this.server.outageHits;
  }

  /** Makes calls fail with 502, refuses connections, or works again. */
  outage(mode: Outage): Promise<void> {
    return this.server.outage(mode);
  }

  /** Waits until `test()` holds (checked after every call). */
  waitUntil(test: () => boolean, what: string, timeoutMs?: number): Promise<void> {
    return this.server.waitUntil(test, what, timeoutMs);
  }

  close(): Promise<void> {
    return this.server.close();
  }
}
