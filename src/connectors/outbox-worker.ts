/**
 * Drains one connector's outbox while the connector runs: the head of each chat's queue is sent
 * (chats in parallel, each chat in order); a retryable failure is tried again later with exponential
 * backoff and jitter (or the delay the platform asked for); a permanent one is set aside as failed.
 *
 * Several workers (one per instance) may drain the same outbox: each claims the items it sends
 * under a lease, so an item is sent by one of them; a worker also looks again every `pollMs`, so
 * replies queued by another instance (or left by one that died) go out without a kick.
 */
import { randomUUID } from "node:crypto";
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

/** How long a claimed item stays out of other workers' reach while it is being sent. */
export const OUTBOX_CLAIM_MS = 120_000;
/** Longest sleep between two looks at the outbox. */
export const OUTBOX_POLL_MS = 30_000;

export interface OutboxWorkerDeps {
  connectorId: string;
  /** Who claims items: unique among the workers running at once (default: a random id per worker). */
  holder?: string;
  /** Claim lease (default 2 min; longer than any send may take). */
  claimMs?: number;
  /** Longest sleep between looks (default 30 s). */
  pollMs?: number;
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
  readonly #holder: string;
  readonly #abort = new AbortController();
  #wake: (() => void) | undefined;
  #kicked = false;
  #loop: Promise<void> | undefined;

  constructor(deps: OutboxWorkerDeps) {
    this.#deps = deps;
    this.#holder = deps.holder ?? `outbox-${randomUUID()}`;
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
    const { outbox, connectorId } = this.#deps;
    // Claims under this name are a crashed predecessor's (one worker per connector and name runs at a time).
    await outbox.unclaimAll(connectorId, this.#holder);
    while (!signal.aborted) {
      this.#kicked = false;
      const now = this.#deps.now();
      const due = await outbox.claim(connectorId, this.#holder, now, this.#deps.claimMs ?? OUTBOX_CLAIM_MS);
      if (due.length > 0) {
        await Promise.all(due.map((item) => this.#attempt(item, signal)));
        continue;
      }
      if (this.#kicked) continue;
      const next = await outbox.nextDue(connectorId);
      const poll = this.#deps.pollMs ?? OUTBOX_POLL_MS;
      await this.#sleep(next === undefined ? poll : Math.min(poll, next - now));
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
    const holder = this.#holder;
    try {
      await this.#deps.send({ ...item.message, deliveryId: `${item.connectorId}-${item.id}` }, signal);
    } catch (err) {
      // Stopped mid-send: the row stays pending and, unclaimed, goes out after a restart (here or elsewhere).
      if (signal.aborted) {
        await outbox.unclaim(item.id, holder);
        return;
      }
      const error = err instanceof Error ? err.message : String(err);
      const retryable = err instanceof DeliveryError ? err.retryable : false;
      if (!retryable && item.message.editMessageId !== undefined) {
        // The preview to replace is gone (deleted, too old): send the text as a new message instead.
        const { editMessageId: _gone, ...plain } = item.message;
        await outbox.rewrite(item.id, holder, plain);
        return;
      }
      if (!retryable) {
        await outbox.fail(item.id, holder, error);
        this.#deps.onFailure(item, error, true);
        return;
      }
      const attempt = item.attempts + 1;
      const backoff = backoffDelayMs(attempt, this.#deps.policy, this.#deps.random);
      const asked = err instanceof DeliveryError ? err.retryAfterMs : undefined;
      // Never below 10 ms, so a zero policy cannot spin the loop.
      const delay = Math.max(10, Math.min(this.#deps.policy.maxDelayMs, Math.max(backoff, asked ?? 0)));
      await outbox.retryLater(item.id, holder, error, this.#deps.now() + delay);
      this.#deps.onFailure(
        item,
        `${error} (attempt ${attempt}, next in ${Math.round(delay / 100) / 10} s)`,
        false,
      );
      return;
    }
    await outbox.done(item.id);
    this.#deps.onDelivered(item);
  }
}
