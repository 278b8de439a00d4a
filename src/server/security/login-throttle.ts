/**
 * Login throttling that cannot be turned against the person whose account is guessed: failures are
 * counted per (client address, username) pair, so wrong passwords sent from one address slow down
 * only that address's attempts at that name, never the real user signing in from theirs. After a few
 * free failures each further one doubles the wait, up to a ceiling; a correct password clears the
 * pair. (The per-address token bucket in rate-limit.ts caps how many names one address may try.)
 * With `shared` (several instances), the pairs are counted in Redis; when Redis fails, here.
 */
import { rateLimited } from "./rate-limit.js";
import type { SharedLimits } from "./shared-limits.js";

export interface LoginThrottleOptions {
  /** Wrong passwords per pair before the next attempt has to wait (default 5). */
  freeFailures?: number;
  /** The first delay; each further failure doubles it (default 1 s). */
  baseDelayMs?: number;
  /** The longest delay (default 15 min). */
  maxDelayMs?: number;
  /** A pair with no failure for this long starts over (default 24 h). */
  forgetAfterMs?: number;
  /** Counts shared by several instances. */
  shared?: SharedLimits;
  /** Hears a failure of the shared counts (this instance then counts alone). */
  onSharedError?: (err: unknown) => void;
}

interface PairState {
  failures: number;
  lastFailureAt: number;
  blockedUntil: number;
}

/** Sweep stale pairs once the map grows past this, so memory stays bounded under address churn. */
const SWEEP_THRESHOLD = 10_000;

/** Growing delays per (address, username) pair. */
export class LoginThrottle {
  readonly #pairs = new Map<string, PairState>();
  readonly #free: number;
  readonly #base: number;
  readonly #max: number;
  readonly #forget: number;
  readonly #shared: SharedLimits | undefined;
  readonly #onSharedError: (err: unknown) => void;

  constructor(options: LoginThrottleOptions = {}) {
    this.#free = options.freeFailures ?? 5;
    this.#base = options.baseDelayMs ?? 1000;
    this.#max = options.maxDelayMs ?? 15 * 60 * 1000;
    this.#forget = options.forgetAfterMs ?? 24 * 60 * 60 * 1000;
    this.#shared = options.shared;
    this.#onSharedError = options.onSharedError ?? (() => undefined);
  }

  /** The key of a pair: the address and the username without regard to case. */
  static key(address: string, username: string): string {
    return `${address}\u0000${username.normalize("NFC").toLowerCase()}`;
  }

  /**
   * Starts an attempt: throws the 429 while the pair must wait; otherwise counts the attempt as a
   * failure at once (so parallel guesses cannot slip past the count while passwords are checked) —
   * `succeeded` takes it back.
   */
  async begin(key: string, what: string, now = Date.now()): Promise<number> {
    if (this.#shared) {
      let until: number | undefined;
      try {
        until = await this.#shared.beginPair(key, this.#policy(), now);
      } catch (err) {
        this.#onSharedError(err);
      }
      if (until !== undefined) {
        if (until > now) throw rateLimited(Math.max(1, Math.ceil((until - now) / 1000)), what);
        // Not blocked: the script answers the failures counted, this attempt included, as -n.
        return Math.max(1, -until);
      }
    }
    return this.#beginHere(key, what, now);
  }

  /**
   * What a failed attempt (the `failures`-th, as `begin` counted it) leaves the person: attempts
   * before the next one has to wait, or how long the next one waits (whole seconds, rounded up).
   */
  outlook(failures: number): { attemptsLeft: number } | { waitSeconds: number } {
    const over = failures - this.#free;
    if (over < 0) return { attemptsLeft: -over };
    return {
      waitSeconds: Math.max(1, Math.ceil(Math.min(this.#max, this.#base * 2 ** Math.min(over, 30)) / 1000)),
    };
  }

  #policy() {
    return {
      freeFailures: this.#free,
      baseDelayMs: this.#base,
      maxDelayMs: this.#max,
      forgetAfterMs: this.#forget,
    };
  }

  #beginHere(key: string, what: string, now: number): number {
    let state = this.#pairs.get(key);
    if (state && now - state.lastFailureAt >= this.#forget) {
      this.#pairs.delete(key);
      state = undefined;
    }
    if (state && state.blockedUntil > now) {
      throw rateLimited(Math.max(1, Math.ceil((state.blockedUntil - now) / 1000)), what);
    }
    if (!state) {
      if (this.#pairs.size >= SWEEP_THRESHOLD) this.#sweep(now);
      state = { failures: 0, lastFailureAt: now, blockedUntil: 0 };
      this.#pairs.set(key, state);
    }
    state.failures += 1;
    state.lastFailureAt = now;
    // From the last free failure on, each one makes the next attempt wait: base, 2 × base, 4 × base…
    const over = state.failures - this.#free;
    if (over >= 0) state.blockedUntil = now + Math.min(this.#max, this.#base * 2 ** Math.min(over, 30));
    return state.failures;
  }

  /** The password was right: the pair starts over. */
  async succeeded(key: string): Promise<void> {
    this.#pairs.delete(key);
    await this.#shared?.clearPair(key).catch((err: unknown) => this.#onSharedError(err));
  }

  /** How many failures a pair has on record (tests, diagnostics). */
  failuresOf(key: string): number {
    return this.#pairs.get(key)?.failures ?? 0;
  }

  #sweep(now: number): void {
    for (const [key, state] of this.#pairs) {
      if (state.blockedUntil <= now && now - state.lastFailureAt >= Math.min(this.#forget, this.#max)) {
        this.#pairs.delete(key);
      }
    }
  }
}
