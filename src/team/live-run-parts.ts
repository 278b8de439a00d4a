/**
 * The parts of each live run's answer, built from its agent events as they come, with the number of
 * the last event folded in (what a page that opens mid-run is shown).
 */

import type { AgentEvent } from "../agent/events.js";
import { toDimsumError } from "../errors.js";
import { applyAgentEvent, failurePart } from "./message-parts.js";
import type { MessagePart } from "./types.js";

/** The answers of the runs going on in this process, part by part. */
export class LiveRunParts {
  /** The parts of each live run's answer, built from its agent events. */
  readonly #parts = new Map<string, MessagePart[]>();
  /** The number of the last agent event folded into each live run's parts. */
  readonly #seqs = new Map<string, number>();

  /** The run's answer starts (again) from `parts`. */
  begin(runId: string, parts: MessagePart[]): void {
    this.#parts.set(runId, parts);
  }

  /** The run's parts so far (none once it ended). */
  current(runId: string): MessagePart[] {
    return this.#parts.get(runId) ?? [];
  }

  /** The number of the last event folded into the run's parts. */
  seq(runId: string): number {
    return this.#seqs.get(runId) ?? 0;
  }

  /** The run ended: its parts are no longer live. */
  end(runId: string): void {
    this.#parts.delete(runId);
    this.#seqs.delete(runId);
  }

  /** What a live run's answer holds so far, and the number of its last event folded in. */
  liveParts(runId: string): { parts: MessagePart[]; seq: number } | undefined {
    const parts = this.#parts.get(runId);
    return parts ? { parts, seq: this.#seqs.get(runId) ?? 0 } : undefined;
  }

  record(runId: string, event: AgentEvent, seq: number): void {
    this.#seqs.set(runId, seq);
    this.update(runId, (parts) => applyAgentEvent(parts, event));
  }

  update(runId: string, update: (parts: MessagePart[]) => MessagePart[]): void {
    const current = this.#parts.get(runId);
    if (current) this.#parts.set(runId, update(current));
  }
}

/** The part that ends an answer cut off by `err` (or by a stop, when `signal` was aborted). */
export function failureOf(err: unknown, signal: AbortSignal): ReturnType<typeof failurePart> {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    return failurePart(
      "aborted",
      reason instanceof Error && reason.name !== "AbortError" ? reason.message : "The run was cancelled.",
    );
  }
  const error = toDimsumError(err);
  return failurePart(error.code, error.message, error.hint);
}

/** The parts with the final answer as text when no text was streamed (a model that did not stream). */
export function withAnswer(parts: MessagePart[], text: string): MessagePart[] {
  if (text.trim() === "" || parts.some((p) => p.type === "text")) return parts;
  return [...parts, { type: "text", text }];
}
