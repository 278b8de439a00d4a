/** The live status of each connector in this server process (state, last error, counters). */
import type { ConnectorStatus } from "./types.js";

type LiveStatus = Omit<ConnectorStatus, "pending" | "failed">;

/** Status by connector id; what is not tracked reads as stopped. */
export class StatusBoard {
  readonly #status = new Map<string, LiveStatus>();

  get(id: string): LiveStatus {
    return this.#status.get(id) ?? { state: "stopped", rejected: 0 };
  }

  /** Applies a change; `error: undefined` clears the error. */
  set(id: string, change: Partial<LiveStatus>): void {
    const next = { ...this.get(id), ...change };
    if ("error" in change && change.error === undefined) delete next.error;
    this.#status.set(id, next);
  }

  /** Counts a refused inbound request. */
  rejected(id: string): void {
    this.set(id, { rejected: this.get(id).rejected + 1 });
  }

  delete(id: string): void {
    this.#status.delete(id);
  }
}
