/**
 * The WebSocket endpoint `/ws`: authenticates each connection (session cookie on a same-origin
 * upgrade, or a first `{"type":"auth","token"}` frame), keeps them alive with pings, and fans team
 * events out to the clients following each channel (and the new messages and approval requests of
 * the channels a client watches). A slow client is closed (4408), never waited for.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";
import type { TeamEvent } from "../../team/types.js";
import type { AuthEvent, AuthEvents, SessionEndReason } from "../auth/auth-events.js";
import type { ServerLog } from "../context.js";
import { HubClient, type HubClientLimits, type WsIdentity } from "./hub-client.js";
import { CloseCode, clientFrameSchema, type ServerFrame, type TeamEventSource } from "./protocol.js";
import type { RunReplaySource } from "./run-event-log.js";

type MaybePromise<T> = T | Promise<T>;

/** How the hub recognises callers; the server wires it to its session store (which may be remote). */
export interface WsAuthenticator {
  /** From the upgrade request itself (the session cookie, when the Origin is this server). */
  fromUpgrade(request: IncomingMessage): MaybePromise<WsIdentity | undefined>;
  /** From the token in an `auth` frame. */
  fromToken(token: string): MaybePromise<WsIdentity | undefined>;
}

export interface WsHubOptions extends Partial<HubClientLimits> {
  /** Ping interval; a client that misses two pongs in a row is dropped (default 25 s). */
  heartbeatMs?: number;
  /** Time to send the `auth` frame before the socket is closed with 4401 (default 5 s). */
  authTimeoutMs?: number;
  /** Largest client frame accepted (default 64 KiB). */
  maxPayloadBytes?: number;
  path?: string;
  /**
   * The instance's log of live runs' events (see run-event-log.ts): a socket that subscribes with the
   * last seq it has of runs gets the ones it missed from here. None: they are reported as gaps.
   */
  runs?: RunReplaySource;
}

const defaultLimits: HubClientLimits = {
  maxBufferedBytes: 1024 * 1024,
  maxPendingEvents: 10_000,
  maxQueuedFrames: 64,
  maxSubscriptions: 1000,
  initialBacklog: 50,
};

const SESSION_END_REASONS: Record<SessionEndReason, string> = {
  logout: "signed out",
  revoked: "session revoked",
  password_changed: "password changed",
  account_disabled: "account disabled",
};

function text(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/** Routes team events to WebSocket clients. */
export class WsHub {
  private readonly wss: WebSocketServer;
  private readonly clients = new Set<HubClient>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly limits: HubClientLimits;
  private readonly authTimeoutMs: number;
  private readonly path: string;
  private readonly runs: RunReplaySource | undefined;
  private droppedSlow = 0;
  private closing = false;
  /** Clients whose login is being re-checked right now. */
  private readonly checking = new Set<HubClient>();
  private readonly stopAuthEvents: (() => void) | undefined;
  // One JSON encoding per event, however many clients receive it.
  private readonly encoded = new WeakMap<object, string>();
  private readonly serialize = (frame: TeamEvent | ServerFrame): string => {
    let json = this.encoded.get(frame);
    if (json === undefined) {
      json = JSON.stringify(frame);
      this.encoded.set(frame, json);
    }
    return json;
  };

  constructor(
    private readonly source: TeamEventSource | undefined,
    private readonly auth: WsAuthenticator,
    private readonly log: ServerLog,
    options: WsHubOptions = {},
    /** The auth layer's changes (role, sessions, deletion); the hub applies them to open sockets at once. */
    authEvents?: AuthEvents,
  ) {
    this.limits = {
      maxBufferedBytes: options.maxBufferedBytes ?? defaultLimits.maxBufferedBytes,
      maxPendingEvents: options.maxPendingEvents ?? defaultLimits.maxPendingEvents,
      maxQueuedFrames: options.maxQueuedFrames ?? defaultLimits.maxQueuedFrames,
      maxSubscriptions: options.maxSubscriptions ?? defaultLimits.maxSubscriptions,
      initialBacklog: options.initialBacklog ?? defaultLimits.initialBacklog,
    };
    this.authTimeoutMs = options.authTimeoutMs ?? 5000;
    this.path = options.path ?? "/ws";
    this.runs = options.runs;
    this.wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      maxPayload: options.maxPayloadBytes ?? 64 * 1024,
      perMessageDeflate: false,
    });
    this.heartbeat = setInterval(() => this.beat(), options.heartbeatMs ?? 25_000);
    this.heartbeat.unref();
    this.stopAuthEvents = authEvents?.on((event) => this.applyAuthEvent(event));
  }

  /** Closes the sockets of ended sessions and deleted accounts; re-authorises those whose role changed. */
  private applyAuthEvent(event: AuthEvent): void {
    switch (event.type) {
      case "sessions_ended": {
        const ended = new Set(event.sessionIds);
        const reason = SESSION_END_REASONS[event.reason];
        for (const client of this.clients) {
          const identity = client.identity;
          if (identity?.sessionId !== undefined && ended.has(identity.sessionId))
            client.close(CloseCode.unauthenticated, reason);
        }
        return;
      }
      case "user_deleted":
        for (const client of this.clients)
          if (client.identity?.actor.userId === event.userId)
            client.close(CloseCode.unauthenticated, "account deleted");
        return;
      case "role_changed":
        for (const client of this.clients)
          if (client.identity?.actor.userId === event.userId) client.reauthorize(event.role);
        return;
      case "password_changed":
        // The sessions it ends arrive as their own event; the socket of the session kept stays.
        return;
    }
  }

  /** Connected sockets (signed in or still authenticating) and clients dropped for being too slow. */
  stats(): { clients: number; droppedSlow: number } {
    return { clients: this.clients.size, droppedSlow: this.droppedSlow };
  }

  /** The node server's `upgrade` handler: accepts `/ws`, refuses every other path. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    if (path !== this.path) {
      socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      return;
    }
    // Nothing else listens to the socket while its session is looked up: a failure just ends it.
    const onError = () => socket.destroy();
    socket.on("error", onError);
    void this.identify(() => this.auth.fromUpgrade(request), "authenticating the upgrade").then(
      (identity) => {
        socket.off("error", onError);
        if (socket.destroyed || this.closing) {
          socket.destroy();
          return;
        }
        this.wss.handleUpgrade(request, socket, head, (ws) => this.accept(ws, identity, socket));
      },
    );
  }

  /** The identity `lookup` finds; undefined (and logged) when it fails. */
  private async identify(
    lookup: () => MaybePromise<WsIdentity | undefined>,
    what: string,
  ): Promise<WsIdentity | undefined> {
    try {
      return await lookup();
    } catch (err) {
      this.log.error(`WebSocket: ${what} failed`, err);
      return undefined;
    }
  }

  private accept(ws: WebSocket, identity: WsIdentity | undefined, socket: Duplex): void {
    const client = new HubClient(ws, socket, {
      source: this.source,
      limits: this.limits,
      serialize: this.serialize,
      log: this.log,
      runs: this.runs,
      onTooSlow: () => {
        this.droppedSlow++;
      },
    });
    this.clients.add(client);
    ws.on("pong", () => {
      client.missedPongs = 0;
    });
    ws.on("error", (err) => this.log.warn(`WebSocket: ${err.message}`));
    ws.on("close", () => {
      client.dispose();
      this.clients.delete(client);
    });
    if (identity) {
      client.signIn(identity);
      ws.on("message", (data, isBinary) => this.receive(client, data, isBinary));
      return;
    }
    const timer = setTimeout(() => {
      if (!client.identity) client.close(CloseCode.unauthenticated, "authentication timeout");
    }, this.authTimeoutMs);
    timer.unref();
    ws.once("close", () => clearTimeout(timer));
    // Frames sent right behind the auth frame wait for its answer, then run in order.
    let waiting: Array<[RawData, boolean]> | undefined;
    ws.on("message", (data, isBinary) => {
      if (client.identity) return this.receive(client, data, isBinary);
      if (waiting) {
        if (waiting.length < this.limits.maxQueuedFrames) waiting.push([data, isBinary]);
        else client.send({ type: "error", message: "too many frames before authentication finished" });
        return;
      }
      clearTimeout(timer);
      const parsed = isBinary ? undefined : clientFrameSchema.safeParse(safeJson(text(data)));
      const frame = parsed?.success ? parsed.data : undefined;
      if (frame?.type !== "auth") {
        client.close(CloseCode.unauthenticated, "unauthenticated");
        return;
      }
      const queued: Array<[RawData, boolean]> = [];
      waiting = queued;
      void this.identify(() => this.auth.fromToken(frame.token), "authenticating a token").then((found) => {
        if (client.isClosed) return;
        if (!found) {
          client.close(CloseCode.unauthenticated, "unauthenticated");
          return;
        }
        client.signIn(found);
        for (const [queuedData, queuedBinary] of queued.splice(0))
          this.receive(client, queuedData, queuedBinary);
      });
    });
  }

  private receive(client: HubClient, data: RawData, isBinary: boolean): void {
    if (isBinary) {
      client.send({ type: "error", message: "bad frame: binary frames are not supported" });
      return;
    }
    client.receive(text(data));
  }

  private beat(): void {
    for (const client of this.clients) {
      if (client.identity && !this.checking.has(client)) void this.recheck(client, client.identity);
      if (client.missedPongs >= 2) {
        client.dispose();
        client.ws.terminate();
        continue;
      }
      client.missedPongs++;
      try {
        client.ws.ping();
      } catch {
        // The socket is already closing; its close event cleans up.
      }
    }
  }

  /**
   * Whether the login behind a socket still stands and with which role, read from the store (a
   * fallback for changes the auth events did not carry, e.g. made by another server instance).
   * One check per client at a time, so a slow database cannot pile them up.
   */
  private async recheck(client: HubClient, identity: WsIdentity): Promise<void> {
    this.checking.add(client);
    try {
      if (!(await identity.isValid())) {
        client.close(CloseCode.unauthenticated, "session ended");
        return;
      }
      const role = await identity.currentRole?.();
      if (role !== undefined) client.reauthorize(role);
    } catch (err) {
      // The store is unreachable: keep the socket (its next heartbeat checks again).
      this.log.warn(
        `WebSocket: re-checking a session failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    } finally {
      this.checking.delete(client);
    }
  }

  /** Closes every connection (1001) and stops the heartbeat; resolves when all sockets are gone. */
  async close(timeoutMs = 1000): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    this.stopAuthEvents?.();
    for (const client of this.clients) client.close(CloseCode.goingAway, "server shutting down");
    const deadline = Date.now() + timeoutMs;
    while (this.clients.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const client of this.clients) client.ws.terminate();
    this.clients.clear();
    this.wss.close();
  }
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
