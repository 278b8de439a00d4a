/**
 * Drains one connector's outbox while the connector runs: the head of each chat's queue is sent
 * (chats in parallel, each chat in order); a retryable failure is tried again later with exponential
 * backoff and jitter (or the delay the platform asked for); a permanent one is set aside as failed.
 */
import type { OutboxItem, OutboxRepo } from "./store/outbox-repo.js";
import { DeliveryError, type OutboundMessage } from "./types.js";

export interface BackoffPolicy {
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  baseDelayMs: 1000,
  maxDelayMs: 300_000,
});

/** Delay before retry number `attempt` (1-based): base·2^(attempt-1), capped, with half jitter. */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy, random: () => number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export interface OutboxWorkerDeps {
  connectorId: string;
  outbox: OutboxRepo;
  send(message: OutboundMessage, signal: AbortSignal): Promise<string | undefined>;
  policy: BackoffPolicy;
  now: () => number;
  random: () => number;
  /** Each outcome, for the connector's status and the log. */
  onDelivered(item: OutboxItem): void;
  onFailure(item: OutboxItem, error: string, permanent: boolean): void;
  /** The loop itself broke (a database error): delivery stops until the connector restarts. */
  onCrash(err: unknown): void;
}

/** One connector's delivery loop. */
export class OutboxWorker {
  readonly #deps: OutboxWorkerDeps;
  readonly #abort = new AbortController();
  #wake: (() => void) | undefined;
  #kicked = false;
  #loop: Promise<void> | undefined;

  constructor(deps: OutboxWorkerDeps) {
    this.#deps = deps;
  }

  /** Starts draining (idempotent). */
  start(): void {
    this.#loop ??= this.#run().catch((err: unknown) => this.#deps.onCrash(err));
  }

  /** New rows were queued: look now instead of at the next retry time. */
  kick(): void {
    this.#kicked = true;
    this.#wake?.();
  }

  /** Stops after aborting sends in flight (their rows stay pending and go out after a restart). */
  async stop(): Promise<void> {
    this.#abort.abort();
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    const { signal } = this.#abort;
    while (!signal.aborted) {
      this.#kicked = false;
      const heads = this.#deps.outbox.heads(this.#deps.connectorId);
      const now = this.#deps.now();
      const due = heads.filter((item) => item.nextAttemptAt <= now);
      if (due.length > 0) {
        await Promise.all(due.map((item) => this.#attempt(item, signal)));
        continue;
      }
      if (this.#kicked) continue;
      const next = Math.min(...heads.map((item) => item.nextAttemptAt));
      await this.#sleep(Number.isFinite(next) ? next - now : Number.POSITIVE_INFINITY);
    }
  }

  /** Sleeps until `ms` passed, a kick, or stop; the timer never outlives the wait. */
  #sleep(ms: number): Promise<void> {
    const { signal } = this.#abort;
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        this.#wake = undefined;
        resolve();
      };
      this.#wake = done;
      if (signal.aborted) return done();
      signal.addEventListener("abort", done, { once: true });
      if (Number.isFinite(ms)) timer = setTimeout(done, Math.max(0, ms));
    });
  }

  async #attempt(item: OutboxItem, signal: AbortSignal): Promise<void> {
    const { outbox } = this.#deps;
    try {
      await this.#deps.send({ ...item.message, deliveryId: `${item.connectorId}-${item.id}` }, signal);
      outbox.done(item.id);
      this.#deps.onDelivered(item);
    } catch (err) {
      if (signal.aborted) return;
      const error = err instanceof Error ? err.message : String(err);
      const retryable = err instanceof DeliveryError ? err.retryable : false;
      if (!retryable && item.message.editMessageId !== undefined) {
        // The preview to replace is gone (deleted, too old): send the text as a new message instead.
        const { editMessageId: _gone, ...plain } = item.message;
        outbox.rewrite(item.id, plain);
        return;
      }
      if (!retryable) {
        outbox.fail(item.id, error);
        this.#deps.onFailure(item, error, true);
        return;
      }
      const attempt = item.attempts + 1;
      const backoff = backoffDelayMs(attempt, this.#deps.policy, this.#deps.random);
      const asked = err instanceof DeliveryError ? err.retryAfterMs : undefined;
      // Never below 10 ms, so a zero policy cannot spin the loop.
      const delay = Math.max(10, Math.min(this.#deps.policy.maxDelayMs, Math.max(backoff, asked ?? 0)));
      outbox.retryLater(item.id, error, this.#deps.now() + delay);
      this.#deps.onFailure(
        item,
        `${error} (attempt ${attempt}, next in ${Math.round(delay / 100) / 10} s)`,
        false,
      );
    }
  }
}
