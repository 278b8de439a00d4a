/**
 * Deadlines of one model call, shared by every wire protocol: how long to wait for the first real
 * data, how long real data may pause, how long the whole call may take, and how long retries may go on.
 * Only real data (an SSE event) resets the idle timer; keep-alive comments and blank lines do not.
 */

/** Plain data, resolved once from the configuration (`modelCalls` in the config file). */
export interface ModelCallLimits {
  /** From sending a request until its first real data (an SSE event or an error body); headers and pings do not count. */
  firstByteMs: number;
  /** Longest pause between real data once it has started. */
  idleMs: number;
  /** Overall deadline of one model call, retries included. */
  callMs: number;
  /** No retry starts, and no attempt waits for its first data, past this much time since the call began. */
  retryBudgetMs: number;
}

export type CallLimitName = keyof ModelCallLimits;

/** By default a provider that never answers fails within `retryBudgetMs` (150 s). */
export const DEFAULT_MODEL_CALL_LIMITS: Readonly<ModelCallLimits> = Object.freeze({
  firstByteMs: 30_000,
  idleMs: 60_000,
  callMs: 600_000,
  retryBudgetMs: 150_000,
});

/** The configuration key that raises a limit, as named in errors and the README. */
export function limitConfigKey(name: CallLimitName): string {
  return `modelCalls.${name}`;
}

/** What each limit is called in messages. */
export const LIMIT_LABELS: Readonly<Record<CallLimitName, string>> = Object.freeze({
  firstByteMs: "first-byte limit",
  idleMs: "idle limit",
  callMs: "overall call deadline",
  retryBudgetMs: "retry budget",
});

/** Layers partial limits over the defaults (later wins); non-positive or non-finite values are ignored. */
export function resolveCallLimits(...layers: Array<Partial<ModelCallLimits> | undefined>): ModelCallLimits {
  const out: ModelCallLimits = { ...DEFAULT_MODEL_CALL_LIMITS };
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const name of Object.keys(out) as CallLimitName[]) {
      const value = layer[name];
      if (typeof value === "number" && Number.isFinite(value) && value > 0) out[name] = value;
    }
  }
  return out;
}

/** The limit that ended an attempt, with its value in milliseconds. */
export interface LimitHit {
  name: CallLimitName;
  ms: number;
}

/** Timers of one HTTP attempt. `expired` is set once a limit fired and `onExpire` was called. */
export interface AttemptTimers {
  readonly expired: LimitHit | undefined;
  /** Real data arrived: ends the first-byte wait, or restarts the idle timer. */
  data(): void;
  /** Clears every timer; call once the attempt is over, whatever happened. */
  stop(): void;
}

/** The clock of one model call, from its first request to its last event. */
export interface CallDeadlines {
  readonly limits: ModelCallLimits;
  /** Milliseconds since the call began. */
  elapsedMs(): number;
  /** The limit that forbids waiting `delayMs` more and then retrying, or undefined if a retry may start. */
  retryBlockedBy(delayMs: number): LimitHit | undefined;
  /** Starts the timers of one attempt; `onExpire` runs at most once, when the first limit fires. */
  startAttempt(onExpire: (hit: LimitHit) => void): AttemptTimers;
}

export function startCallDeadlines(limits: ModelCallLimits, now: () => number = Date.now): CallDeadlines {
  const startedAt = now();
  const left = (ms: number) => Math.max(0, startedAt + ms - now());
  return {
    limits,
    elapsedMs: () => now() - startedAt,
    retryBlockedBy(delayMs) {
      if (left(limits.callMs) <= delayMs) return { name: "callMs", ms: limits.callMs };
      if (left(limits.retryBudgetMs) <= delayMs) return { name: "retryBudgetMs", ms: limits.retryBudgetMs };
      return undefined;
    },
    startAttempt(onExpire) {
      let expired: LimitHit | undefined;
      let stopped = false;
      const fire = (hit: LimitHit) => {
        if (stopped || expired !== undefined) return;
        expired = hit;
        onExpire(hit);
      };
      const callTimer = setTimeout(() => fire({ name: "callMs", ms: limits.callMs }), left(limits.callMs));
      // The first-byte wait never runs past the retry budget, so a silent provider fails within it.
      const budgetLeft = left(limits.retryBudgetMs);
      const firstByte: LimitHit =
        limits.firstByteMs <= budgetLeft
          ? { name: "firstByteMs", ms: limits.firstByteMs }
          : { name: "retryBudgetMs", ms: limits.retryBudgetMs };
      let waitTimer: NodeJS.Timeout | undefined = setTimeout(
        () => fire(firstByte),
        Math.min(limits.firstByteMs, budgetLeft),
      );
      let idleTimer: NodeJS.Timeout | undefined;
      return {
        get expired() {
          return expired;
        },
        data() {
          if (stopped) return;
          if (waitTimer !== undefined) {
            clearTimeout(waitTimer);
            waitTimer = undefined;
          }
          if (idleTimer === undefined) {
            idleTimer = setTimeout(() => fire({ name: "idleMs", ms: limits.idleMs }), limits.idleMs);
          } else {
            idleTimer.refresh();
          }
        },
        stop() {
          stopped = true;
          clearTimeout(callTimer);
          clearTimeout(waitTimer);
          clearTimeout(idleTimer);
        },
      };
    },
  };
}
