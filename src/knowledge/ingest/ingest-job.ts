/**
 * An ingestion running in the background, for callers that return at once (the HTTP API, the web
 * UI): status, live progress, cancel, and listeners for progress pushes. `done` never rejects, so a
 * job nobody awaits cannot become an unhandled rejection.
 */
import { randomUUID } from "node:crypto";
import { toDimsumError } from "../../errors.js";
import type { IngestJobSnapshot, IngestJobStatus, IngestProgress, IngestResult } from "../types.js";

export type IngestRun = (
  signal: AbortSignal,
  onProgress: (progress: IngestProgress) => void,
) => Promise<IngestResult>;

export class IngestJob {
  readonly id = randomUUID();
  readonly startedAt = Date.now();
  status: IngestJobStatus = "running";
  progress: IngestProgress = { done: 0, total: 0, bytesDone: 0, bytesTotal: 0 };
  result: IngestResult | undefined;
  error: string | undefined;
  finishedAt: number | undefined;
  /** Settles with the final snapshot when the job ends, whatever the outcome. */
  readonly done: Promise<IngestJobSnapshot>;
  private readonly controller = new AbortController();
  private readonly listeners = new Set<(snapshot: IngestJobSnapshot) => void>();

  constructor(
    readonly kb: string,
    run: IngestRun,
  ) {
    this.done = run(this.controller.signal, (progress) => {
      this.progress = progress;
      this.emit();
    }).then(
      (result) => {
        this.result = result;
        return this.end(result.cancelled ? "cancelled" : "done");
      },
      (err: unknown) => {
        this.error = toDimsumError(err).toLine();
        return this.end(this.controller.signal.aborted ? "cancelled" : "failed");
      },
    );
  }

  /** Asks the run to stop after the file in hand; files already written stay. */
  cancel(): void {
    this.controller.abort();
  }

  /** Calls `listener` on every progress report and at the end; returns the unsubscribe function. */
  subscribe(listener: (snapshot: IngestJobSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  snapshot(): IngestJobSnapshot {
    const snapshot: IngestJobSnapshot = {
      id: this.id,
      kb: this.kb,
      status: this.status,
      progress: { ...this.progress },
      startedAt: this.startedAt,
    };
    if (this.finishedAt !== undefined) snapshot.finishedAt = this.finishedAt;
    if (this.result) snapshot.result = this.result;
    if (this.error !== undefined) snapshot.error = this.error;
    return snapshot;
  }

  private end(status: IngestJobStatus): IngestJobSnapshot {
    this.status = status;
    this.finishedAt = Date.now();
    this.emit();
    this.listeners.clear();
    return this.snapshot();
  }

  private emit(): void {
    const snapshot = this.snapshot();
    for (const listener of this.listeners) {
      try {
        listener(snapshot);
      } catch {
        // A broken listener (a closed socket) must not stop the ingestion.
      }
    }
  }
}
