/**
 * Tries engines in order until one answers. An engine that errors, times out or is misconfigured
 * is recorded and the next one tried; one that rate-limits is also paused for the time it asked.
 * Only the caller's own abort stops the walk.
 */
import { DimsumError, type ErrorCode, toDimsumError } from "../../errors.js";
import { SearchEngineError } from "./engine-error.js";
import { engineLabel, type SearchEngine, type SearchResult } from "./types.js";

export interface EngineFailure {
  engine: string;
  code: ErrorCode;
  /** One line for people: the cause, then what to do. */
  reason: string;
  /** True when the engine was not asked at all (it is paused after a rate limit). */
  skipped: boolean;
}

export type FailoverOutcome =
  | { ok: true; engine: string; results: SearchResult[]; failures: EngineFailure[] }
  | { ok: false; failures: EngineFailure[] };

export interface FailoverOptions {
  maxResults: number;
  signal: AbortSignal;
  timeoutMs: number;
  cooldowns: Cooldowns;
}

/** When each rate-limited engine may be asked again. */
export class Cooldowns {
  readonly #until = new Map<string, number>();
  readonly #now: () => number;
  readonly #defaultMs: number;
  readonly #maxMs: number;

  constructor(now: () => number, defaultMs: number, maxMs: number) {
    this.#now = now;
    this.#defaultMs = defaultMs;
    this.#maxMs = maxMs;
  }

  /** Pauses `engine` for `ms` (the default when the engine did not say), capped at the maximum. */
  pause(engine: string, ms: number | undefined): void {
    const wait = Math.min(Math.max(ms ?? this.#defaultMs, 0), this.#maxMs);
    this.#until.set(engine, this.#now() + wait);
  }

  /** Milliseconds left in the engine's pause, or 0 when it may be asked. */
  remaining(engine: string): number {
    const until = this.#until.get(engine);
    if (until === undefined) return 0;
    const left = until - this.#now();
    if (left > 0) return left;
    this.#until.delete(engine);
    return 0;
  }
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.ceil(ms / 1000))} s`;
}

function aborted(): DimsumError {
  return new DimsumError("aborted", "The web search was aborted.");
}

/** Asks one engine with its own deadline; resolves with results or a failure record. */
async function ask(
  engine: SearchEngine,
  query: string,
  options: FailoverOptions,
): Promise<SearchResult[] | EngineFailure> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, options.timeoutMs);
  const onAbort = () => controller.abort();
  options.signal.addEventListener("abort", onAbort, { once: true });
  try {
    return await engine.search(query, { maxResults: options.maxResults, signal: controller.signal });
  } catch (err) {
    if (options.signal.aborted) throw aborted();
    const label = engineLabel(engine.name);
    if (timedOut) {
      return {
        engine: engine.name,
        code: "timeout",
        reason: `${label} did not answer within ${seconds(options.timeoutMs)}.`,
        skipped: false,
      };
    }
    const error = toDimsumError(err, "provider_unavailable");
    if (error.code === "rate_limit") {
      options.cooldowns.pause(engine.name, err instanceof SearchEngineError ? err.retryAfterMs : undefined);
    }
    return { engine: engine.name, code: error.code, reason: error.toLine(), skipped: false };
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
}

/** Walks the engines in order; throws an `aborted` DimsumError only when the caller aborts. */
export async function searchWithFailover(
  engines: SearchEngine[],
  query: string,
  options: FailoverOptions,
): Promise<FailoverOutcome> {
  const failures: EngineFailure[] = [];
  for (const engine of engines) {
    if (options.signal.aborted) throw aborted();
    const left = options.cooldowns.remaining(engine.name);
    if (left > 0) {
      const label = engineLabel(engine.name);
      failures.push({
        engine: engine.name,
        code: "rate_limit",
        reason: `${label} is paused after rate limiting us (${seconds(left)} left).`,
        skipped: true,
      });
      continue;
    }
    const answer = await ask(engine, query, options);
    if (Array.isArray(answer)) return { ok: true, engine: engine.name, results: answer, failures };
    failures.push(answer);
  }
  return { ok: false, failures };
}
