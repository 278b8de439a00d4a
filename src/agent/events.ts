/**
 * The agent stream: one union of events that the CLI renders, the server forwards, the store records
 * and tests assert on.
 */
import type { DimsumError, ErrorCode } from "../errors.js";
import type { AssistantMessage, FinishReason, ToolResultMessage, Usage, UserMessage } from "../llm/types.js";
import type { ToolAppLink, ToolFile } from "../tools/types.js";
import type { PendingApproval } from "./approvals.js";
import type { RunCheckpoint } from "./checkpoint.js";

export type AgentEvent =
  | { type: "run_start"; runId: string; model: string; tools: string[] }
  | { type: "turn_start"; runId: string; iteration: number; toolsOffered: boolean }
  | { type: "text_delta"; runId: string; text: string }
  | { type: "reasoning_delta"; runId: string; text: string }
  | { type: "retry"; runId: string; attempt: number; delayMs: number; reason: string }
  /**
   * The model call moved to the next model of the agent's chain: `from` failed before any output
   * (`code`, `reason`), or was skipped because its provider is cooling down (`skipped`).
   */
  | {
      type: "model_fallback";
      runId: string;
      from: string;
      to: string;
      reason: string;
      code: ErrorCode;
      skipped?: boolean;
    }
  | { type: "tool_call"; runId: string; id: string; name: string; args: unknown }
  | {
      type: "tool_result";
      runId: string;
      id: string;
      name: string;
      ok: boolean;
      output: string;
      durationMs: number;
      /** Characters cut to keep the result inside the budget. */
      truncatedChars?: number;
      /** The MCP App that shows this result. */
      app?: ToolAppLink;
      /** A file the call put into the chat. */
      file?: ToolFile;
    }
  /**
   * Messages appended to the conversation as one unit: a final assistant message, or an assistant
   * tool-call message together with all its results. Stores write each unit in one transaction.
   */
  | {
      type: "messages";
      runId: string;
      messages: Array<AssistantMessage | ToolResultMessage | UserMessage>;
      /** The run's progress after this unit, stored with it. */
      checkpoint?: RunCheckpoint;
    }
  /** The run's progress before a step's tool calls run (so a restart knows which were in flight). */
  | { type: "checkpoint"; runId: string; checkpoint: RunCheckpoint }
  /**
   * A call that needs a person's approval: asked for (`requested`), or decided. `summary` is what will
   * happen (the command line for the shell); `by` who decided; `note` the reason given with a rejection.
   */
  | {
      type: "approval";
      runId: string;
      callId: string;
      tool: string;
      args: unknown;
      summary: string;
      reason: string;
      state: "requested" | "approved" | "rejected";
      by?: string;
      always?: boolean;
      note?: string;
    }
  /** Messages the person sent while the run went on, now part of its conversation. */
  | { type: "steered"; runId: string; count: number }
  /** The run continues from its checkpoint: after approvals were decided, or after a restart. */
  | { type: "resumed"; runId: string; reason: "approval" | "restart"; iteration: number }
  /**
   * The run stops here until the pending approvals are decided: the last event of a waiting run.
   * `checkpoint` is everything needed to resume it, in any process.
   */
  | { type: "waiting"; runId: string; approvals: PendingApproval[]; checkpoint: RunCheckpoint }
  /** What was added to the context for this run beyond the conversation: chosen skills, recalled memories. */
  | {
      type: "context";
      runId: string;
      skills: string[];
      memories: Array<{ id: string; score?: number }>;
      /** How memories were retrieved, e.g. `hybrid` or `bm25` (no embedding provider). */
      memoryMode?: string;
    }
  /** The live context was shortened: older messages summarised (or, as a fallback, dropped). */
  | {
      type: "compaction";
      runId: string;
      method: "summary" | "truncate" | "prune";
      messagesRemoved: number;
      tokensBefore: number;
      tokensAfter: number;
      note?: string;
    }
  | {
      type: "usage";
      runId: string;
      usage: Usage;
      total: Usage;
      costUsd?: number;
      /** `provider:id` of the model that answered this call (a fallback when the chain moved). */
      model?: string;
    }
  | {
      type: "done";
      runId: string;
      answer: string;
      iterations: number;
      capReached: boolean;
      finishReason: FinishReason;
      usage: Usage;
      costUsd?: number;
      /** The answer parsed and validated, when the run was asked for an output schema. */
      output?: unknown;
      /** `provider:id` of the model that gave the final answer. */
      model?: string;
    }
  | { type: "error"; runId: string; code: ErrorCode; message: string; hint?: string };

export type AgentEventType = AgentEvent["type"];

/** Builds the `error` event for a DimsumError. */
export function errorEvent(runId: string, error: DimsumError): AgentEvent {
  const event: AgentEvent = { type: "error", runId, code: error.code, message: error.message };
  if (error.hint) event.hint = error.hint;
  return event;
}
