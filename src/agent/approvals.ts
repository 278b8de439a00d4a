/**
 * Phase: which tool calls need a person's approval before they run, and what a decision turns into.
 * A call needs approval when its tool says so (the shell's `confirm` rules), or when its name is on the
 * run's ask-first list (exact names, or `<prefix>*` patterns such as `github_*` for an MCP server's tools).
 * The approver answers at once (a terminal, `--yes`), or says `wait`: then the run records the call as
 * pending and ends `waiting`, to be resumed from its checkpoint once someone decides.
 */
import type { ToolCall, ToolResultMessage } from "../llm/types.js";
import type { ApprovalNeed, ApprovalRequest, Tool, ToolContext } from "../tools/types.js";

/** A person's answer to one pending call. */
export interface ApprovalDecision {
  decision: "approve" | "reject";
  /** Approve this tool for this agent in this chat from now on (the caller keeps the grant). */
  always?: boolean;
  /** Why it was rejected; the model reads it as the tool's result. */
  reason?: string;
  /** Who decided (a user id), for the record. */
  by?: string;
}

/** What the approver says: a decision now, or `wait` (the run waits for one, holding nothing). */
export type ApprovalAnswer = ApprovalDecision | "wait";

/** Decides approvals for a run. `true`/`false` are shorthand for approve/reject. */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalAnswer | boolean>;

/** A call the run waits on. */
export interface PendingApproval {
  callId: string;
  tool: string;
  args: unknown;
  /** One line: what will happen (the command line for the shell). */
  summary: string;
  reason: string;
  /** Epoch ms when the approval was asked for. */
  askedAt: number;
}

/** True when `name` is on the ask-first list: an exact name, or a `prefix*` pattern. */
export function onAskFirstList(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) =>
    pattern.endsWith("*") ? name.startsWith(pattern.slice(0, -1)) : pattern === name,
  );
}

/** Why the call needs approval, or undefined when it may run as it is. */
export async function approvalNeed(
  tool: Tool,
  args: unknown,
  ctx: ToolContext,
  askFirst: readonly string[],
): Promise<ApprovalNeed | undefined> {
  const own = await tool.needsApproval?.(args as never, ctx);
  if (own) return own;
  if (onAskFirstList(tool.name, askFirst)) {
    return { summary: summarize(args), reason: `${tool.name} is on this agent's ask-first list` };
  }
  return undefined;
}

/** Normalizes the approver's answer. */
export function toDecision(answer: ApprovalAnswer | boolean): ApprovalAnswer {
  if (answer === true) return { decision: "approve" };
  if (answer === false) return { decision: "reject" };
  return answer;
}

/** The result the model reads for a rejected call. */
export function rejectionResult(
  call: Pick<ToolCall, "id" | "name">,
  decision: ApprovalDecision,
): ToolResultMessage {
  const because = decision.reason?.trim() ? ` Their reason: ${decision.reason.trim()}` : "";
  return {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: `The user declined to run ${call.name}.${because} Do not retry it; ask the user how to proceed or do something else.`,
    isError: true,
  };
}

/** The result for a call nobody could approve (no person in this run). */
export function unattendedResult(call: Pick<ToolCall, "id" | "name">, need: ApprovalNeed): ToolResultMessage {
  const hint =
    need.unattendedHint ?? "ask the user to run it themselves, or to allow it in the configuration";
  return {
    role: "tool",
    toolCallId: call.id,
    toolName: call.name,
    content: `${call.name} needs approval because ${need.reason}, and nobody can approve it in this run. (${hint})`,
    isError: true,
  };
}

function summarize(args: unknown): string {
  const text = JSON.stringify(args ?? {});
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}
