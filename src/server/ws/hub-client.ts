/**
 * One WebSocket connection: its identity, the channels it follows, and a bounded outgoing buffer.
 * Frames are handled one at a time, so a subscribe's backlog is always sent before that channel's
 * live events, and live events that raced with the backlog are neither lost nor duplicated. A
 * subscribe naming live runs with the last event seq the client has of each (`runs`) gets the events
 * it missed right after the backlog, from the instance's run log, then live ones: each once, in order.
 */
import type { Duplex } from "node:stream";
import { WebSocket } from "ws";
import type { Actor, RunStatus, TeamEvent } from "../../team/types.js";
import type { ServerLog } from "../context.js";
import { internalError, toApiError } from "../http/errors.js";
import {
  type ClientFrame,
  CloseCode,
  clientFrameSchema,
  type ServerFrame,
  type TeamEventSource,
} from "./protocol.js";
import type { RunReplaySource } from "./run-event-log.js";

/** A signed-in connection; `isValid` turns false once the login behind it is revoked. */
export interface WsIdentity {
  actor: Actor;
  /** The login session behind the socket: its revocation closes the socket at once. */
  sessionId?: string;
  isValid(): boolean | Promise<boolean>;
  /**
   * The account's role as stored now, read at each heartbeat: a fallback for changes that bypass
   * the auth events (another process writing the database). Absent: the role is never re-read.
   */
  currentRole?(): Actor["role"] | undefined | Promise<Actor["role"] | undefined>;
}

export interface HubClientLimits {
  /** Close the client (4408) when more than this many bytes wait to be sent. */
  maxBufferedBytes: number;
  /** Live events held while a channel's backlog loads; beyond this the client is too slow. */
  maxPendingEvents: number;
  /** Frames waiting to be handled; beyond this new frames are refused with an error frame. */
  maxQueuedFrames: number;
  maxSubscriptions: number;
  /** Messages in a backlog when the client gives no `since`. */
  initialBacklog: number;
}

interface Subscription {
  /** Events held while the backlog loads or the rights are checked again; undefined once live. */
  pending: TeamEvent[] | undefined;
  /** The rights this subscription was last checked against (none yet while it loads). */
  verifiedFor: Actor | undefined;
  /**
   * Runs the client resumed: run id → the last seq it has, so that their events it already has are
   * not sent again (a relayed event can reach this instance after the client saw it elsewhere). An
   * entry goes with the run's first newer event, or its end.
   */
  resume: Map<string, number> | undefined;
}

const ENDED: ReadonlySet<RunStatus> = new Set(["done", "error", "cancelled"]);

/** What a client is told about a refused subscription: refusals as they are, anything else generically. */
function describe(err: unknown, log: ServerLog): { message: string; code: string } {
  const known = toApiError(err);
  if (known) return { message: known.toLine(), code: known.code };
  log.error("WebSocket: checking a subscription failed", err);
  return { message: internalError().message, code: "internal" };
}

const NO_RUNS: ReadonlyMap<string, RunStatus> = new Map();

/**
 * The events of a channel the client watches but does not follow that it still hears of: each new
 * message (its unread count, notifications) and a run starting to wait for an approval; never a
 * run's stream.
 */
function isActivity(event: TeamEvent): boolean {
  if (event.type === "message") return true;
  return event.type === "agent" && event.event.type === "approval" && event.event.state === "requested";
}

/** Frames held for one write at the end of the turn, at most (bytes). */
const CORK_MAX_BYTES = 64 * 1024;

/** What every client shares with its hub. */
export interface HubClientContext {
  source: TeamEventSource | undefined;
  limits: HubClientLimits;
  serialize: (frame: TeamEvent | ServerFrame) => string;
  log: ServerLog;
  /** The instance's log of live runs' events, for subscribes that resume runs (none: nothing to replay). */
  runs?: RunReplaySource | undefined;
  /** Told when a client is dropped for falling behind. */
  onTooSlow(): void;
}

/** The hub's view of one socket. */
export class HubClient {
  identity: WsIdentity | undefined;
  missedPongs = 0;
  private closed = false;
  private readonly subs = new Map<string, Subscription>();
  /**
   * Channels whose activity the client hears without following them (after a `watch` frame): those
   * its rights listed when it asked, listed again after each change of rights.
   */
  private watched: Set<string> | undefined;
  private stopEvents: (() => void) | undefined;
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private corked: NodeJS.Immediate | undefined;

  private readonly source: TeamEventSource | undefined;
  private readonly limits: HubClientLimits;
  private readonly log: ServerLog;

  /** `socket` is the connection under `ws`: frames sent in one event-loop turn leave in one write. */
  constructor(
    readonly ws: WebSocket,
    private readonly socket: Pick<Duplex, "cork" | "uncork"> | undefined,
    private readonly context: HubClientContext,
  ) {
    this.source = context.source;
    this.limits = context.limits;
    this.log = context.log;
  }

  /** Marks the connection signed in and starts receiving the actor's team events. */
  signIn(identity: WsIdentity): void {
    this.identity = identity;
    if (!this.listen(identity.actor)) return;
    this.send({ type: "ready", user: { id: identity.actor.userId, role: identity.actor.role } });
  }

  /** (Re)subscribes to the team events `actor` may see; false (and closed) when the source fails. */
  private listen(actor: Actor): boolean {
    const stop = this.stopEvents;
    this.stopEvents = undefined;
    stop?.();
    if (!this.source) return true;
    try {
      this.stopEvents = this.source.subscribe(actor, (event) => {
        // Never let one client's failure escape into the team's emitter (and past other clients).
        try {
          this.onEvent(event);
        } catch (err) {
          this.log.error("WebSocket: delivering an event failed", err);
        }
      });
      return true;
    } catch (err) {
      this.log.error("WebSocket: subscribing to team events failed", err);
      this.close(1011, "event source unavailable");
      return false;
    }
  }

  /**
   * The account's role changed: from now on the socket carries the new rights. Team events are
   * re-subscribed with them at once, every subscription holds its live events until it has been
   * checked again, and the ones the new rights do not cover are dropped with an `unsubscribed` frame.
   */
  reauthorize(role: Actor["role"]): void {
    const identity = this.identity;
    if (this.closed || !identity || identity.actor.role === role) return;
    const actor: Actor = { ...identity.actor, role };
    this.identity = { ...identity, actor };
    for (const sub of this.subs.values()) sub.pending ??= [];
    if (!this.listen(actor)) return;
    this.send({ type: "reauthorized", user: { id: actor.userId, role: actor.role } });
    this.enqueue(() => this.recheckSubscriptions());
    if (this.watched) this.enqueue(() => this.watch());
  }

  /** Sends a frame unless the client is closed or too far behind (then it is closed with 4408). */
  send(frame: TeamEvent | ServerFrame): boolean {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return false;
    if (this.ws.bufferedAmount > this.limits.maxBufferedBytes) {
      this.dropTooSlow();
      return false;
    }
    this.cork();
    this.ws.send(this.context.serialize(frame));
    // Big frames gain nothing from waiting, and held bytes would count against the client's buffer.
    if (this.ws.bufferedAmount > CORK_MAX_BYTES) this.uncork();
    return true;
  }

  /**
   * Holds this turn's frames (a run's answer and its `done` arrive together) until the turn ends:
   * one system call instead of one per frame. Latency is unchanged; the turn ends either way.
   */
  private cork(): void {
    if (!this.socket || this.corked) return;
    this.socket.cork();
    this.corked = setImmediate(() => this.uncork());
  }

  private uncork(): void {
    if (!this.corked) return;
    clearImmediate(this.corked);
    this.corked = undefined;
    this.socket?.uncork();
  }

  /** Closes once with a code and reason, and stops all event delivery. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.dispose();
    this.ws.close(code, reason);
  }

  private dropTooSlow(): void {
    this.context.onTooSlow();
    this.close(CloseCode.tooSlow, "too slow");
  }

  /** Releases the team subscription; safe to call more than once. */
  dispose(): void {
    this.closed = true;
    this.subs.clear();
    this.watched = undefined;
    const stop = this.stopEvents;
    this.stopEvents = undefined;
    stop?.();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Parses one incoming frame and queues it behind the ones before it. */
  receive(data: string): void {
    let frame: ClientFrame;
    try {
      const parsed = clientFrameSchema.safeParse(JSON.parse(data));
      if (!parsed.success) {
        this.send({ type: "error", message: `bad frame: ${parsed.error.issues[0]?.message ?? "invalid"}` });
        return;
      }
      frame = parsed.data;
    } catch {
      this.send({ type: "error", message: "bad frame: not JSON" });
      return;
    }
    if (this.queued >= this.limits.maxQueuedFrames) {
      this.send({ type: "error", message: "too many frames at once; wait for replies" });
      return;
    }
    this.queued++;
    this.enqueue(() => this.handle(frame)).finally(() => {
      this.queued--;
    });
  }

  /** Runs `task` after every frame and check queued before it. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    this.chain = this.chain
      .then(task)
      .catch((err) => this.log.error("WebSocket: frame handling failed", err));
    return this.chain;
  }

  /** Checks every subscription against the current rights (after a role change). */
  private async recheckSubscriptions(): Promise<void> {
    const source = this.source;
    if (!source) return;
    for (const [channelId, sub] of [...this.subs]) {
      for (;;) {
        const actor = this.identity?.actor;
        if (this.closed || !actor) return;
        if (this.subs.get(channelId) !== sub || sub.verifiedFor === actor) break;
        try {
          await source.getChannel(actor, channelId);
        } catch (err) {
          if (this.subs.get(channelId) === sub) {
            this.subs.delete(channelId);
            this.send({ type: "unsubscribed", channelId, ...describe(err, this.log) });
          }
          break;
        }
        if (this.identity?.actor !== actor) continue; // changed again meanwhile: check again
        if (this.subs.get(channelId) !== sub) break;
        if (!this.goLive(sub, actor, 0)) return;
      }
    }
  }

  /**
   * Marks a checked subscription live and sends what it held, skipping messages up to `lastId`, the
   * events of resumed runs already sent, and the lifecycle events of the runs in `replayed` (the
   * replay sent their latest: run id → its status).
   */
  private goLive(
    sub: Subscription,
    actor: Actor,
    lastId: number,
    replayed: ReadonlyMap<string, RunStatus> = NO_RUNS,
  ): boolean {
    sub.verifiedFor = actor;
    const pending = sub.pending ?? [];
    sub.pending = undefined;
    for (const event of pending) {
      if (event.type === "message" && event.message.id <= lastId) continue;
      if (event.type === "run" && replayed.has(event.run.id)) continue;
      if (!this.isNew(sub, event)) continue;
      if (!this.send(event)) return false;
    }
    // Runs whose end the replay sent have nothing more to come.
    for (const [runId, status] of replayed) if (ENDED.has(status)) sub.resume?.delete(runId);
    if (sub.resume?.size === 0) sub.resume = undefined;
    return true;
  }

  /**
   * Sends, for each run the client resumes, its events after the seq it has (and a `run_gap` frame
   * when they cannot all be sent), and notes what it has now. Synchronous: the held live events of
   * the channel follow right after, and the log has recorded each of them before this socket's
   * listener heard of it, so every one of them with a seq up to what was sent here is a repeat.
   * Returns the runs whose latest lifecycle event was sent (with its status), or false when the
   * socket was dropped.
   */
  private replay(
    channelId: string,
    sub: Subscription,
    runs: Record<string, number> | undefined,
  ): ReadonlyMap<string, RunStatus> | false {
    if (!runs) return NO_RUNS;
    const resume = new Map<string, number>();
    const replayed = new Map<string, RunStatus>();
    for (const [runId, after] of Object.entries(runs)) {
      resume.set(runId, after);
      const found = this.context.runs?.replay(channelId, runId, after);
      if (!found || found.gap) {
        const resumesAt = found?.gap?.resumesAt;
        const gap: Extract<ServerFrame, { type: "run_gap" }> = { type: "run_gap", channelId, runId, after };
        if (resumesAt !== undefined) gap.resumesAt = resumesAt;
        if (!this.send(gap)) return false;
      }
      for (const event of found?.events ?? []) {
        if (!this.send(event)) return false;
        if (event.type === "agent") resume.set(runId, Math.max(event.seq, resume.get(runId) ?? 0));
        else if (event.type === "run") replayed.set(runId, event.run.status);
      }
    }
    sub.resume = resume.size > 0 ? resume : undefined;
    return replayed;
  }

  /** False for an event of a resumed run the client already has; notes the runs caught up with. */
  private isNew(sub: Subscription, event: TeamEvent): boolean {
    const resume = sub.resume;
    if (!resume) return true;
    if (event.type === "agent") {
      const last = resume.get(event.runId);
      if (last === undefined) return true;
      if (event.seq <= last) return false;
      // Events of one run arrive in order: from here on none is a repeat.
      resume.delete(event.runId);
    } else if (event.type === "run" && ENDED.has(event.run.status)) {
      resume.delete(event.run.id);
    }
    if (resume.size === 0) sub.resume = undefined;
    return true;
  }

  private async handle(frame: ClientFrame): Promise<void> {
    if (this.closed) return;
    switch (frame.type) {
      case "ping":
        this.send({ type: "pong" });
        return;
      case "auth":
        this.send({ type: "error", message: "already authenticated" });
        return;
      case "unsubscribe":
        this.subs.delete(frame.channelId);
        return;
      case "subscribe":
        await this.subscribe(frame.channelId, frame.since, frame.runs);
        return;
      case "watch":
        await this.watch();
        return;
    }
  }

  /** Watches the activity of every channel the actor's rights list now. */
  private async watch(): Promise<void> {
    const source = this.source;
    if (!source) return;
    for (;;) {
      const actor = this.identity?.actor;
      if (this.closed || !actor) return;
      let listed: Awaited<ReturnType<TeamEventSource["listChannels"]>>;
      try {
        listed = await source.listChannels(actor);
      } catch (err) {
        this.send({ type: "error", ...describe(err, this.log) });
        return;
      }
      // The rights changed while listing: list again with the new ones.
      if (this.identity?.actor !== actor) continue;
      this.watched = new Set(listed.map((c) => c.id));
      return;
    }
  }

  private async subscribe(
    channelId: string,
    since: number | undefined,
    runs: Record<string, number> | undefined,
  ): Promise<void> {
    let actor = this.identity?.actor;
    if (!actor) return;
    if (!this.source) {
      this.send({ type: "error", channelId, message: "team features are not available on this server" });
      return;
    }
    if (!this.subs.has(channelId) && this.subs.size >= this.limits.maxSubscriptions) {
      this.send({
        type: "error",
        channelId,
        message: `at most ${this.limits.maxSubscriptions} subscriptions`,
      });
      return;
    }
    // Buffer live events from now on, so none fall between the backlog query and going live.
    const sub: Subscription = { pending: [], verifiedFor: undefined, resume: undefined };
    this.subs.set(channelId, sub);
    let messages: Awaited<ReturnType<TeamEventSource["listMessages"]>>;
    for (;;) {
      try {
        await this.source.getChannel(actor, channelId);
        messages =
          since === undefined
            ? await this.source.listMessages(actor, channelId, { limit: this.limits.initialBacklog })
            : await this.source.listMessages(actor, channelId, { after: since });
      } catch (err) {
        if (this.subs.get(channelId) === sub) this.subs.delete(channelId);
        this.send({ type: "error", channelId, ...describe(err, this.log) });
        return;
      }
      if (this.subs.get(channelId) !== sub) return; // unsubscribed (or resubscribed) meanwhile
      const current = this.identity?.actor;
      if (this.closed || !current) return;
      if (current === actor) break;
      actor = current; // the rights changed while loading: load again with the new ones
    }
    const sorted = [...messages].sort((a, b) => a.id - b.id);
    this.send({ type: "backlog", channelId, messages: sorted });
    // The rights were checked for this channel just now: its runs' events are the actor's to see.
    const replayed = this.replay(channelId, sub, runs);
    if (replayed === false) return;
    this.goLive(sub, actor, Math.max(since ?? 0, sorted.at(-1)?.id ?? 0), replayed);
  }

  private onEvent(event: TeamEvent): void {
    if (this.closed) return;
    // The bus hands budget notices only to the person limited and to owners and admins.
    if (event.type === "budget_notice") {
      this.send(event);
      return;
    }
    const sub = this.subs.get(event.channelId);
    if (!sub) {
      const userId = this.identity?.actor.userId;
      if (
        event.type === "channel" &&
        event.channel.members.some((m) => m.type === "user" && m.id === userId)
      ) {
        // Being added to a channel is news even before the client follows it; its activity is watched.
        this.watched?.add(event.channelId);
        this.send(event);
      } else if (this.watched?.has(event.channelId) && isActivity(event)) {
        this.send(event);
      }
      return;
    }
    if (sub.pending) {
      if (sub.pending.length >= this.limits.maxPendingEvents) this.dropTooSlow();
      else sub.pending.push(event);
      return;
    }
    if (sub.resume && !this.isNew(sub, event)) return;
    this.send(event);
  }
}
