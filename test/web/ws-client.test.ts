import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket, WebSocketServer } from "ws";
import type { ClientFrame, ServerFrame } from "../../web/src/types.js";
import {
  backoffDelay,
  CLOSE_UNAUTHORIZED,
  DEFAULT_BACKOFF_BASE_MS,
  DEFAULT_BACKOFF_MAX_MS,
  type SocketHandlers,
  type Timers,
  WsClient,
  type WsStatus,
} from "../../web/src/ws.js";
import { message } from "./fixtures.js";

/** Timers that only fire when the test says so. */
class ManualTimers implements Timers {
  private next = 1;
  readonly pending = new Map<number, { fn: () => void; ms: number }>();
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fn, ms });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  delays(): number[] {
    return [...this.pending.values()].map((t) => t.ms);
  }
  /** Fires the one pending timer with this delay. */
  fire(ms: number): void {
    const entry = [...this.pending.entries()].find(([, t]) => t.ms === ms);
    if (!entry) throw new Error(`no pending timer of ${ms} ms (pending: ${this.delays().join(", ")})`);
    this.pending.delete(entry[0]);
    entry[1].fn();
  }
}

class FakeSocket {
  readonly sent: ClientFrame[] = [];
  closedWith: { code?: number; reason?: string } | undefined;
  constructor(readonly handlers: SocketHandlers) {}
  send(data: string): void {
    this.sent.push(JSON.parse(data) as ClientFrame);
  }
  close(code?: number, reason?: string): void {
    this.closedWith = { code, reason };
  }
  receive(frame: ServerFrame | { type: "pong" }): void {
    this.handlers.onMessage(JSON.stringify(frame));
  }
}

function setup(sinceFor?: (channelId: string) => number | undefined) {
  const timers = new ManualTimers();
  const sockets: FakeSocket[] = [];
  const frames: ServerFrame[] = [];
  const statuses: WsStatus[] = [];
  const client = new WsClient({
    url: "ws://test/ws",
    createSocket: (_url, handlers) => {
      const socket = new FakeSocket(handlers);
      sockets.push(socket);
      return socket;
    },
    onFrame: (frame) => frames.push(frame),
    onStatus: (status) => statuses.push(status),
    ...(sinceFor ? { sinceFor } : {}),
    timers,
    random: () => 1,
    heartbeatMs: 20_000,
    pongTimeoutMs: 10_000,
    backoffBaseMs: 500,
    backoffMaxMs: 4000,
  });
  const last = () => {
    const socket = sockets[sockets.length - 1];
    if (!socket) throw new Error("no socket yet");
    return socket;
  };
  return { client, timers, sockets, frames, statuses, last };
}

describe("backoffDelay", () => {
  it("doubles from the base up to the cap, with jitter between half and all of it", () => {
    expect([0, 1, 2, 3, 4, 10, 60].map((n) => backoffDelay(n, 500, 30_000, () => 1))).toEqual([
      500, 1000, 2000, 4000, 8000, 30_000, 30_000,
    ]);
    expect(backoffDelay(3, 500, 30_000, () => 0)).toBe(2000);
    expect(backoffDelay(3, 500, 30_000, () => 0.5)).toBe(3000);
  });

  it("by default starts small and never waits more than 2 s, so a restarted server is found quickly", () => {
    const delays = [0, 1, 2, 3, 4, 10, 60].map((n) =>
      backoffDelay(n, DEFAULT_BACKOFF_BASE_MS, DEFAULT_BACKOFF_MAX_MS, () => 1),
    );
    expect(delays).toEqual([250, 500, 1000, 2000, 2000, 2000, 2000]);
    expect(DEFAULT_BACKOFF_MAX_MS).toBeLessThanOrEqual(5000);
  });
});

describe("WsClient with a fake socket", () => {
  it("subscribes on open with the app's since, and only once open", () => {
    const { client, last, statuses } = setup((id) => (id === "c1" ? 41 : undefined));
    client.subscribe("c1");
    client.connect();
    expect(statuses).toEqual(["connecting"]);
    expect(last().sent).toEqual([]);
    last().handlers.onOpen();
    client.subscribe("c2");
    expect(last().sent).toEqual([
      { type: "subscribe", channelId: "c1", since: 41 },
      { type: "subscribe", channelId: "c2" },
    ]);
    client.unsubscribe("c2");
    client.unsubscribe("c2");
    expect(last().sent.slice(2)).toEqual([{ type: "unsubscribe", channelId: "c2" }]);
    expect(statuses).toEqual(["connecting", "open"]);
  });

  it("resumes after a drop from the last message it saw, with growing backoff", () => {
    const { client, timers, sockets, last, frames, statuses } = setup(() => 3);
    client.subscribe("c1");
    client.connect();
    last().handlers.onOpen();
    last().receive({ type: "backlog", channelId: "c1", messages: [message(4), message(5)] });
    last().receive({ type: "message", channelId: "c1", message: message(9) });
    expect(frames.map((f) => f.type)).toEqual(["backlog", "message"]);

    last().handlers.onClose(1006, "gone");
    expect(timers.delays()).toEqual([500]);
    timers.fire(500);
    expect(sockets).toHaveLength(2);
    // The second attempt fails too: the delay doubles.
    last().handlers.onClose(1006, "refused");
    expect(timers.delays()).toEqual([1000]);
    timers.fire(1000);
    last().handlers.onOpen();
    expect(last().sent).toEqual([{ type: "subscribe", channelId: "c1", since: 9 }]);
    expect(statuses).toEqual([
      "connecting",
      "open",
      "reconnecting",
      "reconnecting",
      "reconnecting",
      "reconnecting",
      "open",
    ]);

    // A successful open resets the backoff.
    last().handlers.onClose(4408, "too slow");
    expect(timers.delays()).toEqual([500]);
  });

  it("prefers the app's since when it is ahead of what the socket saw", () => {
    let appSince = 2;
    const { client, timers, last } = setup(() => appSince);
    client.subscribe("c1");
    client.connect();
    last().handlers.onOpen();
    last().receive({ type: "message", channelId: "c1", message: message(5) });
    appSince = 12;
    last().handlers.onClose(1006, "");
    timers.fire(500);
    last().handlers.onOpen();
    expect(last().sent).toEqual([{ type: "subscribe", channelId: "c1", since: 12 }]);
    expect(client.sinceFor("c1")).toBe(12);
  });

  it("pings on the heartbeat and reconnects when no answer comes", () => {
    const { client, timers, sockets, last } = setup();
    client.connect();
    last().handlers.onOpen();
    expect(timers.delays()).toEqual([20_000]);
    timers.fire(20_000);
    expect(last().sent).toEqual([{ type: "ping" }]);
    expect(timers.delays()).toEqual([10_000]);
    // Pong arrives: the next ping is scheduled, nothing is dropped, and the pong is not forwarded.
    last().receive({ type: "pong" });
    expect(timers.delays()).toEqual([20_000]);
    timers.fire(20_000);
    timers.fire(10_000);
    const dead = sockets[0];
    expect(dead?.closedWith?.code).toBe(4000);
    expect(timers.delays()).toEqual([500]);
    // Late events of the dead socket are ignored.
    dead?.handlers.onMessage(JSON.stringify({ type: "message", channelId: "c1", message: message(1) }));
    dead?.handlers.onClose(4000, "no pong");
    expect(timers.delays()).toEqual([500]);
    timers.fire(500);
    expect(sockets).toHaveLength(2);
  });

  it("any frame counts as an answer to the ping", () => {
    const { client, timers, last, frames } = setup();
    client.connect();
    last().handlers.onOpen();
    timers.fire(20_000);
    last().receive({
      type: "agent",
      channelId: "c1",
      runId: "r",
      seq: 1,
      event: { type: "text_delta", runId: "r", text: "x" },
    });
    expect(timers.delays()).toEqual([20_000]);
    expect(frames).toHaveLength(1);
  });

  it("stops for good on 4401 (session refused) and on close()", () => {
    const a = setup();
    a.client.connect();
    a.last().handlers.onOpen();
    a.last().handlers.onClose(CLOSE_UNAUTHORIZED, "unauthenticated");
    expect(a.statuses.at(-1)).toBe("unauthorized");
    expect(a.timers.delays()).toEqual([]);

    const b = setup();
    b.client.connect();
    b.last().handlers.onOpen();
    b.client.close();
    expect(b.last().closedWith?.code).toBe(1000);
    b.last().handlers.onClose(1000, "client closed");
    expect(b.timers.delays()).toEqual([]);
    expect(b.statuses.at(-1)).toBe("closed");
  });

  it("ignores frames that are not JSON objects with a type", () => {
    const { client, last, frames } = setup();
    client.connect();
    last().handlers.onOpen();
    last().handlers.onMessage("not json");
    last().handlers.onMessage("42");
    last().handlers.onMessage('{"no":"type"}');
    expect(frames).toEqual([]);
  });
});

describe("WsClient against a real WebSocket server", () => {
  let server: WebSocketServer | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });

  it("merges backlog after a server-side drop: resubscribes with since = last id, no duplicates", async () => {
    const stored = [message(1), message(2), message(3)];
    const subscribes: ClientFrame[] = [];
    server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    let connections = 0;
    server.on("connection", (socket) => {
      connections += 1;
      const connection = connections;
      socket.on("message", (data) => {
        const frame = JSON.parse(String(data)) as ClientFrame;
        if (frame.type !== "subscribe") return;
        subscribes.push(frame);
        const since = frame.since ?? 0;
        socket.send(
          JSON.stringify({
            type: "backlog",
            channelId: frame.channelId,
            messages: stored.filter((m) => m.id > since),
          }),
        );
        if (connection === 1) {
          // Two more messages are stored while the client is away.
          stored.push(message(4), message(5));
          socket.terminate();
        }
      });
    });
    await new Promise<void>((resolve) => server?.once("listening", () => resolve()));
    const { port } = server.address() as AddressInfo;

    const received: number[] = [];
    let done: () => void = () => undefined;
    const finished = new Promise<void>((resolve) => {
      done = resolve;
    });
    const client = new WsClient({
      url: `ws://127.0.0.1:${port}/ws`,
      createSocket: (url, handlers) => {
        const ws = new WebSocket(url);
        ws.on("open", () => handlers.onOpen());
        ws.on("message", (data) => handlers.onMessage(String(data)));
        ws.on("close", (code, reason) => handlers.onClose(code, String(reason)));
        ws.on("error", () => undefined);
        return { send: (data) => ws.send(data), close: (code, reason) => ws.close(code, reason) };
      },
      onFrame: (frame) => {
        if (frame.type === "backlog") received.push(...frame.messages.map((m) => m.id));
        if (received.length >= 5) done();
      },
      backoffBaseMs: 1,
      backoffMaxMs: 5,
    });
    client.subscribe("c1");
    client.connect();
    await finished;
    client.close();
    expect(received).toEqual([1, 2, 3, 4, 5]);
    expect(subscribes).toEqual([
      { type: "subscribe", channelId: "c1" },
      { type: "subscribe", channelId: "c1", since: 3 },
    ]);
  });
});
