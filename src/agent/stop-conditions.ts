/**
 * Small composable checks the loop asks after each turn, and the repeated-call guard it asks before
 * executing each call.
 */
import type { ToolCall } from "../llm/types.js";

export interface LoopState {
  iteration: number;
  maxIterations: number;
  signal: AbortSignal;
}

/** A reason to stop offering tools, or undefined to go on. */
export type StopCondition = (state: LoopState) => string | undefined;

/** Stops offering tools once the iteration cap is reached. */
export const maxIterationsReached: StopCondition = (state) =>
  state.iteration >= state.maxIterations
    ? `reached the limit of ${state.maxIterations} iterations`
    : undefined;

/** The first condition that fires, if any. */
export function firstStop(conditions: StopCondition[], state: LoopState): string | undefined {
  for (const condition of conditions) {
    const reason = condition(state);
    if (reason) return reason;
  }
  return undefined;
}

/** Counts identical calls (same tool, same arguments) across a run; the third one is refused. */
export class RepeatedCallGuard {
  private readonly counts: Map<string, number>;

  constructor(
    private readonly limit = 3,
    counts: Iterable<[string, number]> = [],
  ) {
    this.counts = new Map(counts);
  }

  /** The counts so far, for a checkpoint. */
  entries(): Array<[string, number]> {
    return [...this.counts];
  }

  /** Records the call; returns an error message when it has now been made `limit` times. */
  check(call: ToolCall): string | undefined {
    const key = `${call.name}\u0000${canonicalArguments(call.arguments)}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    if (count < this.limit) return undefined;
    return `refused: ${call.name} was already called ${count - 1} times with these same arguments and the result will not change. Use what you have, try different arguments or another tool, or answer.`;
  }
}

/** Arguments in a form where key order and whitespace do not matter. */
function canonicalArguments(raw: string): string {
  try {
    return JSON.stringify(sortKeys(JSON.parse(raw === "" ? "{}" : raw)));
  } catch {
    return raw.trim();
  }
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}
