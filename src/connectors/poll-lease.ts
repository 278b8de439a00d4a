/**
 * One connector's poll lease as a driver uses it: work that only one instance may do at a time
 * (Telegram long polling) runs only while `hold` says this instance holds the lease. Each `hold`
 * renews the lease (or takes it when free); while another instance holds it, `hold` waits and tries
 * again, so a standby instance takes over within `retryMs` of a release and within the lease time
 * of a crash.
 */
import { abortableSleep } from "../shared/abortable-sleep.js";
import type { Lease, LeaseRepo } from "./store/lease-repo.js";
import type { DriverLease } from "./types.js";

/** How long a poll lease lasts without renewal: longer than one long poll (25 s + 15 s slack). */
export const POLL_LEASE_MS = 60_000;
/** How often a standby instance tries to take the lease. */
export const POLL_LEASE_RETRY_MS = 5_000;

export interface PollLeaseOptions {
  leases: LeaseRepo;
  connectorId: string;
  /** This instance (and this run of the connector). */
  holder: string;
  now: () => number;
  ttlMs?: number;
  retryMs?: number;
}

/** A connector's poll lease for one holder. */
export class PollLease implements DriverLease {
  readonly #options: PollLeaseOptions;
  #lease: Lease | undefined;

  constructor(options: PollLeaseOptions) {
    this.#options = options;
  }

  /** The fencing token while held. */
  get token(): number | undefined {
    return this.#lease?.token;
  }

  /**
   * Resolves true once this holder holds the lease (renewed for another `ttlMs`), or false when
   * `signal` aborts first. Database failures are thrown to the caller (who retries with backoff).
   */
  async hold(signal: AbortSignal): Promise<boolean> {
    const { leases, connectorId, holder, now } = this.#options;
    const ttl = this.#options.ttlMs ?? POLL_LEASE_MS;
    while (!signal.aborted) {
      if (this.#lease) {
        this.#lease = await leases.renew(connectorId, holder, this.#lease.token, ttl, now());
        if (this.#lease) return true;
      }
      this.#lease = await leases.acquire(connectorId, holder, ttl, now());
      if (this.#lease) return true;
      await abortableSleep(this.#options.retryMs ?? POLL_LEASE_RETRY_MS, signal);
    }
    return false;
  }

  /** Gives the lease up so a standby instance takes over at once. */
  async release(): Promise<void> {
    const lease = this.#lease;
    this.#lease = undefined;
    if (lease) await this.#options.leases.release(lease.connectorId, lease.holder, lease.token);
  }
}
