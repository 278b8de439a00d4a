/**
 * The recent agent events of every live run this instance hears of (its own runs and, with several
 * instances, those the relay brings), so that a socket reconnecting here with the last event number
 * it saw of a run gets exactly what it missed. One log per server instance, fed by one internal
 * listener that sees every channel.
 *
 * Bounded three ways: a run keeps its latest `maxEventsPerRun` events; all runs together keep at most
 * `maxEvents` events and about `maxBytes` (the biggest logs lose their oldest half first); a run's log
 * goes `keepEndedMs` after its `run` event says it ended (or waits for approval: a waiting run emits
 * nothing until it resumes), or once it has been silent for `keepIdleMs`. A resume that asks for
 * events no longer kept is told where the kept ones start (see `RunReplay.gap`).
 */
import type { Actor, RunStatus, TeamEvent } from "../../team/types.js";
import type { TeamEventSource } from "./protocol.js";

type AgentTeamEvent = Extract<TeamEvent, { type: "agent" }>;
type RunTeamEvent = Extract<TeamEvent, { type: "run" }>;

/** Who the log listens as: an admin sees every channel (and no one's requests for input). */
const LISTENER: Actor = { userId: "ws:run-log", role: "admin" };

const ENDED: ReadonlySet<RunStatus> = new Set(["done", "error", "cancelled"]);

export interface RunEventLogOptions {
  /** Events kept per run (default 5,000). */
  maxEventsPerRun?: number;
  /** Events kept over all runs (default 100,000). */
  maxEvents?: number;
  /** About this many characters of events kept over all runs (default 64 MiB). */
  maxBytes?: number;
  /** Runs known at once, with or without events (default 10,000). */
  maxRuns?: number;
  /** How long a run's log stays after the run ended (default 60 s). */
  keepEndedMs?: number;
  /** How long a run's log stays while the run waits for approval (default 60 s). */
  keepWaitingMs?: number;
  /** A run silent this long (its instance died, say) is forgotten (default 30 min). */
  keepIdleMs?: number;
  /** How often expired logs are dropped (default 10 s). */
  sweepMs?: number;
  now?: () => number;
  /** Told when recording an event fails (it never reaches the team's emitter). */
  onError?: (err: unknown) => void;
}

/** What a resuming socket is sent for one run. */
export interface RunReplay {
  /**
   * The run's agent events after the seq asked from, in order, with the run's latest `run` event
   * where it fell among them (when it came after the seq asked from).
   */
  events: TeamEvent[];
  /**
   * Set when some events after the seq asked from are not kept: `resumesAt` is the seq the kept
   * ones (or, with none kept, the next live one) start at; absent, the log cannot tell (it heard of
   * the run only midway, by its `run` event).
   */
  gap?: { resumesAt?: number };
}

/** What the hub asks of the log. */
export interface RunReplaySource {
  /** The run's missed events, or undefined when the log holds nothing of it in `channelId`. */
  replay(channelId: string, runId: string, after: number): RunReplay | undefined;
}

interface Logged {
  event: AgentTeamEvent;
  size: number;
}

interface RunLog {
  runId: string;
  channelId: string;
  /** Kept events, oldest at `head`; their seqs run without a hole from `from` to `lastSeq`. */
  events: Logged[];
  head: number;
  /** The seq of the oldest kept event (`lastSeq + 1` when none is kept). */
  from: number;
  /** The highest seq seen; undefined while the run's numbering is unknown here. */
  lastSeq: number | undefined;
  bytes: number;
  /** The run's latest lifecycle event, and the `lastSeq` (-1: unknown) when it came. */
  run: RunTeamEvent | undefined;
  runAfter: number;
  /** When the log may go (the run ended or waits); undefined while it runs. */
  expiresAt: number | undefined;
  touchedAt: number;
}

/** Rough in-memory weight of an event: deltas by their text, anything else by its JSON. */
function sizeOf(event: AgentTeamEvent): number {
  const inner = event.event;
  if (inner.type === "text_delta" || inner.type === "reasoning_delta") return 96 + inner.text.length;
  try {
    return 96 + JSON.stringify(inner).length;
  } catch {
    return 1024;
  }
}

/** The per-instance log of live runs' agent events. */
export class RunEventLog implements RunReplaySource {
  readonly #runs = new Map<string, RunLog>();
  readonly #maxEventsPerRun: number;
  readonly #maxEvents: number;
  readonly #maxBytes: number;
  readonly #maxRuns: number;
  readonly #keepEndedMs: number;
  readonly #keepWaitingMs: number;
  readonly #keepIdleMs: number;
  readonly #now: () => number;
  readonly #onError: (err: unknown) => void;
  readonly #sweeper: NodeJS.Timeout;
  #events = 0;
  #bytes = 0;
  #stop: (() => void) | undefined;

  constructor(options: RunEventLogOptions = {}) {
    this.#maxEventsPerRun = Math.max(1, options.maxEventsPerRun ?? 5000);
    this.#maxEvents = Math.max(1, options.maxEvents ?? 100_000);
    this.#maxBytes = Math.max(1, options.maxBytes ?? 64 * 1024 * 1024);
    this.#maxRuns = Math.max(1, options.maxRuns ?? 10_000);
    this.#keepEndedMs = options.keepEndedMs ?? 60_000;
    this.#keepWaitingMs = options.keepWaitingMs ?? 60_000;
    this.#keepIdleMs = options.keepIdleMs ?? 30 * 60_000;
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError ?? (() => undefined);
    this.#sweeper = setInterval(() => this.sweep(), options.sweepMs ?? 10_000);
    this.#sweeper.unref();
  }

  /**
   * Starts recording every channel's run events from `source`. Listen before any socket subscribes:
   * the hub relies on the log having recorded an event before a socket's listener hears of it.
   */
  listen(source: Pick<TeamEventSource, "subscribe">): this {
    this.#stop?.();
    this.#stop = source.subscribe(LISTENER, (event) => {
      try {
        this.record(event);
      } catch (err) {
        this.#onError(err);
      }
    });
    return this;
  }

  /** Stops listening and forgets everything. */
  close(): void {
    this.#stop?.();
    this.#stop = undefined;
    clearInterval(this.#sweeper);
    this.#runs.clear();
    this.#events = 0;
    this.#bytes = 0;
  }

  /** Events and approximate characters held, and the runs known (for tests and stats). */
  stats(): { runs: number; events: number; bytes: number } {
    return { runs: this.#runs.size, events: this.#events, bytes: this.#bytes };
  }

  /** Takes in one team event (only `agent` and `run` events matter). */
  record(event: TeamEvent): void {
    if (event.type === "agent") this.#agent(event);
    else if (event.type === "run") this.#lifecycle(event);
  }

  replay(channelId: string, runId: string, after: number): RunReplay | undefined {
    const log = this.#runs.get(runId);
    if (!log || log.channelId !== channelId) return undefined;
    const events: TeamEvent[] = [];
    let gap: RunReplay["gap"];
    // The latest lifecycle event goes where it came, unless the socket saw what followed it.
    let run = log.run !== undefined && (log.runAfter < 0 || log.runAfter >= after) ? log.run : undefined;
    if (log.lastSeq === undefined) {
      gap = {};
    } else if (after < log.lastSeq) {
      if (after + 1 < log.from) gap = { resumesAt: log.from };
      const start = log.head + Math.max(0, after + 1 - log.from);
      for (let i = start; i < log.events.length; i++) {
        const { event } = log.events[i] as Logged;
        if (run && event.seq > log.runAfter) {
          events.push(run);
          run = undefined;
        }
        events.push(event);
      }
    }
    if (run) events.push(run);
    return gap ? { events, gap } : { events };
  }

  /** Drops the logs whose time is up. */
  sweep(): void {
    const now = this.#now();
    for (const log of this.#runs.values()) {
      const expired = log.expiresAt !== undefined && now >= log.expiresAt;
      if (expired || now - log.touchedAt >= this.#keepIdleMs) this.#drop(log);
    }
  }

  #agent(event: AgentTeamEvent): void {
    const log = this.#runs.get(event.runId) ?? this.#create(event.runId, event.channelId, undefined);
    log.touchedAt = this.#now();
    const seq = event.seq;
    if (log.lastSeq === undefined || seq > log.lastSeq + 1) {
      // First heard midway, or events went missing: what is kept starts here.
      this.#trim(log, log.events.length - log.head);
      log.from = seq;
    } else if (seq <= log.lastSeq) {
      // Numbered again from an earlier point (a run resumed from a checkpoint): the new events win.
      this.#dropNewest(log, seq);
    }
    const size = sizeOf(event);
    log.events.push({ event, size });
    log.bytes += size;
    log.lastSeq = seq;
    this.#events++;
    this.#bytes += size;
    if (log.events.length - log.head > this.#maxEventsPerRun) this.#trim(log, 1);
    if (this.#events > this.#maxEvents || this.#bytes > this.#maxBytes) this.#evict();
  }

  #lifecycle(event: RunTeamEvent): void {
    const { run } = event;
    let log = this.#runs.get(run.id);
    // A run first seen queued is seen from its start: its numbering is known (nothing yet).
    log ??= this.#create(run.id, event.channelId, run.status === "queued" ? 0 : undefined);
    const now = this.#now();
    log.touchedAt = now;
    log.run = event;
    log.runAfter = log.lastSeq ?? -1;
    log.expiresAt = ENDED.has(run.status)
      ? now + this.#keepEndedMs
      : run.status === "waiting"
        ? now + this.#keepWaitingMs
        : undefined;
  }

  #create(runId: string, channelId: string, lastSeq: number | undefined): RunLog {
    const log: RunLog = {
      runId,
      channelId,
      events: [],
      head: 0,
      from: (lastSeq ?? 0) + 1,
      lastSeq,
      bytes: 0,
      run: undefined,
      runAfter: -1,
      expiresAt: undefined,
      touchedAt: this.#now(),
    };
    this.#runs.set(runId, log);
    // Too many runs at once: the longest known go first (Map order is creation order).
    for (const oldest of this.#runs.values()) {
      if (this.#runs.size <= this.#maxRuns) break;
      if (oldest !== log) this.#drop(oldest);
    }
    return log;
  }

  /** Drops the `count` oldest kept events of a run. */
  #trim(log: RunLog, count: number): void {
    const end = Math.min(log.events.length, log.head + count);
    for (let i = log.head; i < end; i++) {
      const size = (log.events[i] as Logged).size;
      log.bytes -= size;
      this.#bytes -= size;
      this.#events--;
    }
    log.from += end - log.head;
    log.head = end;
    if (log.head === log.events.length) {
      log.events = [];
      log.head = 0;
    } else if (log.head > 1024 && log.head * 2 > log.events.length) {
      log.events = log.events.slice(log.head);
      log.head = 0;
    }
  }

  /** Drops the kept events numbered `seq` and later. */
  #dropNewest(log: RunLog, seq: number): void {
    if (seq < log.from) {
      this.#trim(log, log.events.length - log.head);
      log.from = seq;
      return;
    }
    const keep = log.head + (seq - log.from);
    for (let i = keep; i < log.events.length; i++) {
      const size = (log.events[i] as Logged).size;
      log.bytes -= size;
      this.#bytes -= size;
      this.#events--;
    }
    log.events.length = keep;
  }

  /** Over the global bounds: ended runs' events go first, then the oldest half of the biggest log. */
  #evict(): void {
    while (this.#events > this.#maxEvents || this.#bytes > this.#maxBytes) {
      let victim: RunLog | undefined;
      for (const log of this.#runs.values()) {
        if (log.events.length === log.head) continue;
        if (log.expiresAt !== undefined) {
          victim = log;
          break;
        }
        if (!victim || log.bytes > victim.bytes) victim = log;
      }
      if (!victim) return;
      const kept = victim.events.length - victim.head;
      this.#trim(victim, victim.expiresAt !== undefined ? kept : Math.ceil(kept / 2));
    }
  }

  #drop(log: RunLog): void {
    if (this.#runs.get(log.runId) !== log) return;
    this.#runs.delete(log.runId);
    this.#events -= log.events.length - log.head;
    this.#bytes -= log.bytes;
  }
}
