/**
 * A run's own progress between steps, beside what the session store keeps of its conversation: the
 * step it reached, usage so far, the repeated-call counts, and a turn whose tool calls wait for
 * approval (the assistant message, the results of its calls that ran, the calls still pending). The
 * loop is a function from (checkpoint, new input) to events and the next checkpoint, so a waiting run
 * holds nothing in memory and any process can resume it.
 */
import type { AssistantMessage, ToolResultMessage, Usage } from "../llm/types.js";
import type { ApprovalDecision, PendingApproval } from "./approvals.js";

export interface RunCheckpoint {
  version: 1;
  /** The last iteration (model call) the run completed. */
  iteration: number;
  usage: Usage;
  /** Why tools are no longer offered, when a stop condition fired. */
  stopReason?: string;
  /** The repeated-call guard's counts (call key → times). */
  calls: Array<[string, number]>;
  /** A turn whose tool calls are not all answered yet. */
  turn?: {
    message: AssistantMessage;
    /** Results of the calls that ran (or were refused) before the run waited. */
    results: ToolResultMessage[];
    pending: PendingApproval[];
    /** Decisions taken so far, by call id. */
    decisions: Record<string, ApprovalDecision>;
  };
}

/** True when every pending call of the checkpoint's turn has a decision. */
export function allDecided(checkpoint: RunCheckpoint): boolean {
  const turn = checkpoint.turn;
  return turn?.pending.every((p) => turn.decisions[p.callId] !== undefined) === true;
}

/** Reads a stored checkpoint; undefined for anything that is not one (an older or damaged row). */
export function parseCheckpoint(value: unknown): RunCheckpoint | undefined {
  if (!value || typeof value !== "object") return undefined;
  const c = value as Partial<RunCheckpoint>;
  if (c.version !== 1 || typeof c.iteration !== "number" || !c.usage || !Array.isArray(c.calls))
    return undefined;
  return c as RunCheckpoint;
}
