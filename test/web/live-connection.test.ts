import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiClient } from "../../web/src/api.js";
import { LiveConnection } from "../../web/src/live.js";
import { appReducer, initialAppState } from "../../web/src/state/app.js";
import { createStore } from "../../web/src/state/store.js";
import type { ClientFrame, ServerFrame } from "../../web/src/types.js";
import type { SocketHandlers } from "../../web/src/ws.js";
import { channel, flow, message, run } from "./fixtures.js";

const requests: string[] = [];
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const json = (body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.url === "/api/runs/r-old") return json(run("r-old", { status: "done", flowId: "f1" }));
    if (req.url === "/api/runs/r-live") return json(run("r-live", { status: "done" }));
    if (req.url === "/api/flows/f1") return json(flow("f1", { status: "paused" }));
    if (req.url === "/api/channels")
      return json([
        { ...channel("c1"), unread: 0 },
        { ...channel("c2"), unread: 5 },
      ]);
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { code: "not_found", message: req.url } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** Resolves once `check` passes (HTTP look-ups are asynchronous). */
async function eventually(check: () => void): Promise<void> {
  for (let i = 0; ; i += 1) {
    try {
      check();
      return;
    } catch (err) {
      if (i > 200) throw err;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}

function setup() {
  const store = createStore(appReducer, initialAppState());
  store.dispatch({
    type: "auth",
    auth: { phase: "ready", user: { id: "u1", username: "ana", role: "member" } },
  });
  const sockets: Array<{ handlers: SocketHandlers; sent: ClientFrame[] }> = [];
  let unauthorized = 0;
  const reasons: string[] = [];
  const lost: string[] = [];
  const live = new LiveConnection(new ApiClient({ baseUrl }), store, {
    url: "ws://test/ws",
    createSocket: (_url, handlers) => {
      const socket = { handlers, sent: [] as ClientFrame[] };
      sockets.push(socket);
      return { send: (data) => socket.sent.push(JSON.parse(data) as ClientFrame), close: () => undefined };
    },
    onUnauthorized: (reason) => {
      unauthorized += 1;
      reasons.push(reason);
    },
    onChannelLost: (channelId) => lost.push(channelId),
  });
  const socket = () => {
    const s = sockets[sockets.length - 1];
    if (!s) throw new Error("no socket");
    return s;
  };
  const receive = (frame: ServerFrame) => socket().handlers.onMessage(JSON.stringify(frame));
  return { store, live, sockets, socket, receive, unauthorized: () => unauthorized, reasons, lost };
}

describe("LiveConnection", () => {
  it("follows the open channel from its last loaded message and feeds frames to the store", () => {
    const { store, live, socket, receive } = setup();
    store.dispatch({ type: "open_channel", channelId: "c1" });
    store.dispatch({ type: "history", channelId: "c1", messages: [message(1), message(2)], hasOlder: false });
    live.follow("c1");
    live.start();
    socket().handlers.onOpen();
    // Every chat's activity is watched; the open one is followed.
    expect(socket().sent).toEqual([{ type: "watch" }, { type: "subscribe", channelId: "c1", since: 2 }]);
    receive({ type: "backlog", channelId: "c1", messages: [message(2), message(3)] });
    receive({
      type: "agent",
      channelId: "c1",
      runId: "r-live",
      seq: 1,
      event: { type: "text_delta", runId: "r-live", text: "hi" },
    });
    expect(store.getState().chat?.messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(store.getState().chat?.runs["r-live"]?.parts).toEqual([{ type: "text", text: "hi" }]);
    expect(store.getState().connection).toBe("open");
    live.follow("c2");
    expect(socket().sent.slice(2)).toEqual([
      { type: "unsubscribe", channelId: "c1" },
      { type: "subscribe", channelId: "c2" },
    ]);
    live.stop();
  });

  it("subscribes an empty, loaded channel from 0 so nothing posted meanwhile is missed", () => {
    const { store, live, socket } = setup();
    store.dispatch({ type: "open_channel", channelId: "c1" });
    store.dispatch({ type: "history", channelId: "c1", messages: [], hasOlder: false });
    live.follow("c1");
    live.start();
    socket().handlers.onOpen();
    expect(socket().sent).toEqual([{ type: "watch" }, { type: "subscribe", channelId: "c1", since: 0 }]);
    live.stop();
  });

  it("looks up runs first seen mid-stream, and the flow a run belongs to", async () => {
    const { store, live, socket, receive } = setup();
    store.dispatch({ type: "open_channel", channelId: "c1" });
    live.follow("c1");
    live.start();
    socket().handlers.onOpen();
    receive({
      type: "agent",
      channelId: "c1",
      runId: "r-old",
      seq: 1,
      event: { type: "tool_call", runId: "r-old", id: "x", name: "t", args: {} },
    });
    receive({
      type: "agent",
      channelId: "c1",
      runId: "r-old",
      seq: 2,
      event: { type: "text_delta", runId: "r-old", text: "more" },
    });
    await eventually(() => {
      expect(store.getState().chat?.runs["r-old"]?.run?.status).toBe("done");
      expect(store.getState().chat?.flows.f1?.status).toBe("paused");
    });
    // Each is fetched once, however many frames mention it.
    expect(requests.filter((r) => r === "GET /api/runs/r-old")).toHaveLength(1);
    expect(requests.filter((r) => r === "GET /api/flows/f1")).toHaveLength(1);
    live.stop();
  });

  it("after a reconnect refreshes the channel list and the runs that were still active", async () => {
    const { store, live, socket, sockets } = setup();
    store.dispatch({ type: "open_channel", channelId: "c1" });
    store.dispatch({ type: "run", run: run("r-live", { status: "running" }) });
    live.follow("c1");
    live.start();
    socket().handlers.onOpen();
    const before = requests.length;
    socket().handlers.onClose(1006, "network");
    expect(store.getState().connection).toBe("reconnecting");
    // The WsClient's real backoff timer (≤ 500 ms) opens the next socket.
    await eventually(() => expect(sockets).toHaveLength(2));
    socket().handlers.onOpen();
    await eventually(() => {
      expect(store.getState().chat?.runs["r-live"]?.run?.status).toBe("done");
      expect(store.getState().channels.list.find((c) => c.id === "c2")?.unread).toBe(5);
    });
    expect(requests.slice(before).sort()).toEqual(["GET /api/channels", "GET /api/runs/r-live"]);
    live.stop();
  });

  it("reports a refused session once and stops", () => {
    const { live, socket, unauthorized, store } = setup();
    live.start();
    socket().handlers.onClose(4401, "unauthenticated");
    expect(unauthorized()).toBe(1);
    expect(store.getState().connection).toBe("unauthorized");
    live.stop();
  });

  it("passes the server's close reason on with a refused session", () => {
    const { live, socket, reasons } = setup();
    live.start();
    socket().handlers.onClose(4401, "password changed");
    expect(reasons).toEqual(["password changed"]);
    live.stop();
  });

  it("on reauthorized takes the new role and fetches the channel list again", async () => {
    const { store, live, socket, receive } = setup();
    live.start();
    socket().handlers.onOpen();
    const before = requests.length;
    receive({ type: "reauthorized", user: { id: "u1", role: "admin" } });
    const auth = store.getState().auth;
    expect(auth.phase === "ready" && auth.user.role).toBe("admin");
    await eventually(() => expect(store.getState().channels.list.map((c) => c.id)).toEqual(["c1", "c2"]));
    expect(requests.slice(before)).toEqual(["GET /api/channels"]);
    live.stop();
  });

  it("on unsubscribed of the open channel leaves it, and does not ask for it again on a reconnect", async () => {
    const { store, live, socket, sockets, receive, lost } = setup();
    store.dispatch({ type: "open_channel", channelId: "c1" });
    live.follow("c1");
    live.start();
    socket().handlers.onOpen();
    receive({ type: "unsubscribed", channelId: "c1", message: "Channel not found", code: "not_found" });
    expect(lost).toEqual(["c1"]);
    expect(store.getState().chat).toBeUndefined();
    expect(store.getState().notices.map((n) => n.text)).toEqual(["You no longer have access to this chat."]);
    // A channel that is not open only leaves the list: nothing to leave.
    receive({ type: "unsubscribed", channelId: "c9", message: "Channel not found" });
    expect(lost).toEqual(["c1"]);
    socket().handlers.onClose(1006, "network");
    await eventually(() => expect(sockets).toHaveLength(2));
    socket().handlers.onOpen();
    expect(socket().sent.filter((f) => f.type === "subscribe")).toEqual([]);
    live.stop();
  });
});
