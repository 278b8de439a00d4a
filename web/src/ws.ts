/**
 * The live connection to `/ws`: subscribes to channels with `since` = the last message id seen, and
 * `runs` = the last event seq of each live run, so a reconnect (to this server instance or another)
 * resumes instead of replaying: the server sends the missed events of those runs once, in order, as
 * ordinary frames, then live ones. Reconnects with exponential backoff and jitter; sends an
 * application ping and treats a silent socket as dead. Socket creation and timers are injected so the
 * resume and backoff logic runs in plain Node tests.
 */
import type { ChannelMessage, ClientFrame, ServerFrame } from "./types.js";

/** A subscribe frame, with the runs it resumes: run id → the last agent event seq held. */
type SubscribeFrame = Extract<ClientFrame, { type: "subscribe" }> & { runs?: Record<string, number> };

/**
 * The server could not send all of a resumed run's missed events (it keeps a bounded log): those
 * from `resumesAt` on follow; the run itself should be loaded again (over HTTP).
 */
export interface RunGapFrame {
  type: "run_gap";
  channelId: string;
  runId: string;
  after: number;
  resumesAt?: number;
}

/** Runs one subscribe frame resumes at most (the server accepts 100). */
const MAX_RESUMED_RUNS = 100;

const ENDED = new Set(["done", "error", "cancelled"]);

export interface SocketHandlers {
  onOpen(): void;
  onMessage(data: string): void;
  onClose(code: number, reason: string): void;
}

/** The little of a WebSocket the client uses. */
export interface SocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type CreateSocket = (url: string, handlers: SocketHandlers) => SocketLike;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export type WsStatus = "idle" | "connecting" | "open" | "reconnecting" | "closed" | "unauthorized";

export interface WsStatusDetail {
  /** Reconnect attempts since the last successful open. */
  attempt: number;
  /** Delay before the next attempt, while reconnecting. */
  delayMs?: number;
  /** Close code of the socket that just ended. */
  code?: number;
  reason?: string;
}

export interface WsClientOptions {
  url: string;
  createSocket: CreateSocket;
  onFrame: (frame: ServerFrame) => void;
  onStatus?: (status: WsStatus, detail: WsStatusDetail) => void;
  /** The app's own idea of the last message id of a channel (e.g. from history loaded over HTTP). */
  sinceFor?: (channelId: string) => number | undefined;
  /**
   * The live runs of a channel the app shows, with the last agent event seq it applied of each (e.g.
   * from a run loaded over HTTP): what a (re)subscription resumes. Undefined: the runs this client saw
   * stream and not end.
   */
  runsFor?: (channelId: string) => Record<string, number> | undefined;
  /** A resumed run's missed events could not all be sent: the app should load the run again. */
  onRunGap?: (gap: RunGapFrame) => void;
  /**
   * Also hear, on every (re)connect, of new messages and approval requests in every channel one may
   * see (unread counts, notifications), without following them.
   */
  watch?: boolean;
  timers?: Timers;
  random?: () => number;
  heartbeatMs?: number;
  pongTimeoutMs?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
}

/** Close code the server uses for a missing or rejected session: reconnecting would not help. */
export const CLOSE_UNAUTHORIZED = 4401;
/** Close code the client uses for a socket that stopped answering pings. */
export const CLOSE_HEARTBEAT = 4000;

/**
 * Reconnect delays start at 250 ms and double up to 2 s (jittered to 1–2 s), so a client is back
 * within about 2 s of the server: a restart costs seconds, not the half minute a 30 s cap did.
 */
export const DEFAULT_BACKOFF_BASE_MS = 250;
export const DEFAULT_BACKOFF_MAX_MS = 2000;

/** Delay before reconnect attempt `attempt` (0-based): doubling from base, capped, with jitter. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random: () => number): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  // Jitter in [ceiling/2, ceiling] so a server restart is not met by every client at the same instant.
  return Math.round(ceiling * (0.5 + random() * 0.5));
}

const defaultTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof globalThis.setTimeout>),
};

function isFrame(value: unknown): value is ServerFrame {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

function isRunGap(value: unknown): value is RunGapFrame {
  const frame = value as Partial<RunGapFrame> | null;
  return (
    typeof frame === "object" &&
    frame !== null &&
    frame.type === "run_gap" &&
    typeof frame.channelId === "string" &&
    typeof frame.runId === "string" &&
    typeof frame.after === "number"
  );
}

/** Highest message id in a frame, if it carries messages. */
function frameMessageIds(frame: ServerFrame): { channelId: string; maxId: number } | undefined {
  if (frame.type === "message") return { channelId: frame.channelId, maxId: frame.message.id };
  if (frame.type === "backlog") {
    const maxId = frame.messages.reduce((max: number, m: ChannelMessage) => Math.max(max, m.id), 0);
    return maxId > 0 ? { channelId: frame.channelId, maxId } : undefined;
  }
  return undefined;
}

/** A self-healing subscription socket; create one per logged-in session. */
export class WsClient {
  private readonly options: WsClientOptions;
  private readonly timers: Timers;
  private readonly random: () => number;
  private readonly subscriptions = new Set<string>();
  private readonly lastSeen = new Map<string, number>();
  /** Channel → run → the last agent event seq received, for the runs that have not ended. */
  private readonly runSeqs = new Map<string, Map<string, number>>();
  private socket: SocketLike | undefined;
  /** Bumped per socket so late callbacks of a dropped socket are ignored. */
  private generation = 0;
  private isOpen = false;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: unknown;
  private pingTimer: unknown;
  private pongTimer: unknown;
  private currentStatus: WsStatus = "idle";

  constructor(options: WsClientOptions) {
    this.options = options;
    this.timers = options.timers ?? defaultTimers;
    this.random = options.random ?? Math.random;
  }

  /** The connection state, as last reported to `onStatus`. */
  get status(): WsStatus {
    return this.currentStatus;
  }

  /** Opens the connection (no-op when already started). */
  connect(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    this.openSocket();
  }

  /** Closes for good: no reconnects until `connect` is called again. */
  close(): void {
    this.stopped = true;
    this.clearTimer("reconnectTimer");
    this.dropSocket(1000, "client closed");
    this.setStatus("closed", {});
  }

  /** Follows a channel; on every (re)connect it is resubscribed from the last message seen. */
  subscribe(channelId: string): void {
    this.subscriptions.add(channelId);
    if (this.isOpen) this.sendSubscribe(channelId);
  }

  /** Stops following a channel. */
  unsubscribe(channelId: string): void {
    if (!this.subscriptions.delete(channelId)) return;
    this.runSeqs.delete(channelId);
    if (this.isOpen) this.send({ type: "unsubscribe", channelId });
  }

  /** The `since` a (re)subscription of this channel would send. */
  sinceFor(channelId: string): number | undefined {
    const own = this.lastSeen.get(channelId);
    const app = this.options.sinceFor?.(channelId);
    if (own === undefined) return app;
    return app === undefined ? own : Math.max(own, app);
  }

  /** The `runs` a (re)subscription of this channel would send (undefined: none). */
  runsFor(channelId: string): Record<string, number> | undefined {
    const own = this.runSeqs.get(channelId);
    const app = this.options.runsFor?.(channelId);
    const runs: Record<string, number> = {};
    let count = 0;
    const add = (runId: string, seq: number) => {
      if (count >= MAX_RESUMED_RUNS) return;
      runs[runId] = Math.max(seq, own?.get(runId) ?? 0);
      count++;
    };
    if (app) for (const [runId, seq] of Object.entries(app)) add(runId, seq);
    else if (own) for (const [runId, seq] of own) add(runId, seq);
    return count > 0 ? runs : undefined;
  }

  private openSocket(): void {
    const generation = ++this.generation;
    this.isOpen = false;
    this.setStatus(this.attempt === 0 ? "connecting" : "reconnecting", { attempt: this.attempt });
    const live = () => generation === this.generation && !this.stopped;
    try {
      this.socket = this.options.createSocket(this.options.url, {
        onOpen: () => {
          if (live()) this.handleOpen();
        },
        onMessage: (data) => {
          if (live()) this.handleMessage(data);
        },
        onClose: (code, reason) => {
          if (live()) this.handleClose(code, reason);
        },
      });
    } catch {
      this.handleClose(1006, "socket could not be created");
    }
  }

  private handleOpen(): void {
    this.isOpen = true;
    this.attempt = 0;
    this.setStatus("open", { attempt: 0 });
    if (this.options.watch) this.send({ type: "watch" });
    for (const channelId of this.subscriptions) this.sendSubscribe(channelId);
    this.armPing();
  }

  private handleMessage(data: string): void {
    // Any frame proves the socket is alive.
    if (this.pongTimer !== undefined) {
      this.clearTimer("pongTimer");
      this.armPing();
    }
    let frame: unknown;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (isRunGap(frame)) {
      this.options.onRunGap?.(frame);
      return;
    }
    if (!isFrame(frame) || frame.type === "pong") return;
    const seen = frameMessageIds(frame);
    if (seen) this.lastSeen.set(seen.channelId, Math.max(this.lastSeen.get(seen.channelId) ?? 0, seen.maxId));
    this.noteRun(frame);
    this.options.onFrame(frame);
  }

  private handleClose(code: number, reason: string): void {
    this.dropSocket();
    if (code === CLOSE_UNAUTHORIZED) {
      this.stopped = true;
      this.setStatus("unauthorized", { attempt: this.attempt, code, reason });
      return;
    }
    this.scheduleReconnect(code, reason);
  }

  private scheduleReconnect(code: number, reason: string): void {
    if (this.stopped) return;
    const delayMs = backoffDelay(
      this.attempt,
      this.options.backoffBaseMs ?? DEFAULT_BACKOFF_BASE_MS,
      this.options.backoffMaxMs ?? DEFAULT_BACKOFF_MAX_MS,
      this.random,
    );
    this.attempt += 1;
    this.setStatus("reconnecting", { attempt: this.attempt, delayMs, code, reason });
    this.clearTimer("reconnectTimer");
    this.reconnectTimer = this.timers.setTimeout(() => {
      this.reconnectTimer = undefined;
      if (!this.stopped) this.openSocket();
    }, delayMs);
  }

  private armPing(): void {
    this.clearTimer("pingTimer");
    this.pingTimer = this.timers.setTimeout(() => {
      this.pingTimer = undefined;
      if (!this.isOpen) return;
      this.send({ type: "ping" });
      this.pongTimer = this.timers.setTimeout(() => {
        this.pongTimer = undefined;
        this.dropSocket(CLOSE_HEARTBEAT, "no pong");
        this.scheduleReconnect(CLOSE_HEARTBEAT, "no pong");
      }, this.options.pongTimeoutMs ?? 10_000);
    }, this.options.heartbeatMs ?? 20_000);
  }

  /** Keeps the last seq of each followed run that streams, until it ends. */
  private noteRun(frame: ServerFrame): void {
    if (frame.type === "agent") {
      if (!this.subscriptions.has(frame.channelId)) return;
      let runs = this.runSeqs.get(frame.channelId);
      if (!runs) {
        runs = new Map();
        this.runSeqs.set(frame.channelId, runs);
      }
      runs.set(frame.runId, Math.max(frame.seq, runs.get(frame.runId) ?? 0));
    } else if (frame.type === "run" && ENDED.has(frame.run.status)) {
      this.runSeqs.get(frame.channelId)?.delete(frame.run.id);
    }
  }

  private sendSubscribe(channelId: string): void {
    const frame: SubscribeFrame = { type: "subscribe", channelId };
    const since = this.sinceFor(channelId);
    if (since !== undefined) frame.since = since;
    const runs = this.runsFor(channelId);
    if (runs) frame.runs = runs;
    this.send(frame);
  }

  private send(frame: ClientFrame | SubscribeFrame): void {
    if (!this.socket || !this.isOpen) return;
    try {
      this.socket.send(JSON.stringify(frame));
    } catch {
      // A socket that cannot send is about to report its close; the reconnect handles it.
    }
  }

  private dropSocket(code?: number, reason?: string): void {
    this.generation += 1;
    this.isOpen = false;
    this.clearTimer("pingTimer");
    this.clearTimer("pongTimer");
    const socket = this.socket;
    this.socket = undefined;
    if (socket && code !== undefined) {
      try {
        socket.close(code, reason);
      } catch {
        // Already closed.
      }
    }
  }

  private clearTimer(name: "reconnectTimer" | "pingTimer" | "pongTimer"): void {
    const handle = this[name];
    if (handle !== undefined) this.timers.clearTimeout(handle);
    this[name] = undefined;
  }

  private setStatus(status: WsStatus, detail: Partial<WsStatusDetail>): void {
    this.currentStatus = status;
    this.options.onStatus?.(status, { ...detail, attempt: detail.attempt ?? this.attempt });
  }
}
