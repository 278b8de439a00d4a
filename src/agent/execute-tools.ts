/**
 * Phase: validate, check approvals, and execute one turn's tool calls. Concurrency-safe calls run
 * together; a call that is not safe runs alone. A call that needs approval is put to the approver
 * first: approved, it runs; rejected, the model reads the reason; `wait`, it is left pending (the
 * others of the turn still run) and the loop ends the run `waiting`. While steering messages wait,
 * batches that have not started are skipped. Events are yielded as calls start and finish (execution
 * order); the result messages come back in call order, which every provider requires.
 */
import type { ImagePart, TextPart, ToolCall, ToolResultMessage } from "../llm/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import type { Tool, ToolContext, ToolResult } from "../tools/types.js";
import {
  type ApprovalDecision,
  type Approver,
  approvalNeed,
  type PendingApproval,
  rejectionResult,
  toDecision,
  unattendedResult,
} from "./approvals.js";
import { AsyncQueue } from "./async-queue.js";
import { truncateToolOutput } from "./context/truncate.js";
import type { AgentEvent } from "./events.js";
import { SKIPPED_FOR_STEERING, type SteeringSource } from "./steering.js";
import type { RepeatedCallGuard } from "./stop-conditions.js";

export interface ExecuteToolsOptions {
  runId: string;
  registry: ToolRegistry;
  context: ToolContext;
  guard: RepeatedCallGuard;
  /** Tool output beyond this many characters is cut, with a note saying how much. */
  maxResultChars: number;
  /** Decides calls that need approval; default: the tool context's `approve` (yes/no), else nobody. */
  approve?: Approver;
  /** Tool names (or `prefix*` patterns) that always ask first. */
  askFirst?: readonly string[];
  /** Decisions already taken (a run resumed after waiting), by call id. */
  decided?: ReadonlyMap<string, ApprovalDecision>;
  /** Results already known (calls of the turn that ran before the run waited), by call id. */
  known?: ReadonlyMap<string, ToolResultMessage>;
  steering?: SteeringSource;
  /**
   * The calls were running when the process died: a call without a known result is run again only
   * when its tool is idempotent, or goes on with its earlier work (`resumesAfterRestart`); otherwise
   * its result says it was interrupted.
   */
  interrupted?: boolean;
  now?: () => number;
}

/** The result of a call a restart interrupted. */
export const INTERRUPTED_BY_RESTART =
  "Interrupted by a restart while it ran; it may or may not have taken effect. Check before doing it again.";

/** The turn's results in call order; a pending call has none yet. */
export interface ToolOutcome {
  results: Array<ToolResultMessage | undefined>;
  pending: PendingApproval[];
}

type Planned =
  | { call: ToolCall; tool: Tool; args: unknown; safe: boolean }
  | { call: ToolCall; error: string; safe: true };

type Entry = { item: Planned; index: number };

/** Executes the calls; yields tool_call/approval/tool_result events, returns results in call order. */
export async function* executeTools(
  calls: ToolCall[],
  options: ExecuteToolsOptions,
): AsyncGenerator<AgentEvent, ToolOutcome> {
  const results: Array<ToolResultMessage | undefined> = new Array(calls.length);
  const pending: PendingApproval[] = [];
  const open: ToolCall[] = [];
  calls.forEach((call, index) => {
    const known = options.known?.get(call.id);
    if (known) results[index] = known;
    else open.push(call);
  });
  const planned = open.map((call) => plan(call, options));
  let first = true;
  for (const batch of batches(planned)) {
    const indexed = batch.map(({ item }) => ({ item, index: calls.indexOf(item.call) }));
    if (!first && options.steering?.pending()) {
      for (const { item, index } of indexed) {
        const skipped = errorResult(item.call, SKIPPED_FOR_STEERING);
        results[index] = skipped;
        yield callEvent(options.runId, item);
        yield resultEvent(options.runId, skipped, 0);
      }
      continue;
    }
    first = false;
    const runnable: Array<Entry & { approved: boolean }> = [];
    for (const { item, index } of indexed) {
      yield callEvent(options.runId, item);
      const gate = yield* checkApproval(item, options);
      if (gate.kind === "run") runnable.push({ item, index, approved: gate.approved });
      else if (gate.kind === "wait") pending.push(gate.pending);
      else {
        results[index] = gate.result;
        yield resultEvent(options.runId, gate.result, 0);
      }
    }
    if (runnable.length === 0) continue;
    const queue = new AsyncQueue<AgentEvent>();
    let left = runnable.length;
    for (const { item, index, approved } of runnable) {
      runOne(item, options, approved)
        .then(({ message, event }) => {
          results[index] = message;
          queue.push(event);
        })
        .finally(() => {
          left -= 1;
          if (left === 0) queue.close();
        });
    }
    yield* queue;
  }
  return { results, pending };
}

type Gate =
  | { kind: "run"; approved: boolean }
  | { kind: "wait"; pending: PendingApproval }
  | { kind: "result"; result: ToolResultMessage };

/** The approval phase for one call: run it, leave it pending, or answer it without running. */
async function* checkApproval(item: Planned, options: ExecuteToolsOptions): AsyncGenerator<AgentEvent, Gate> {
  if (!("tool" in item)) return { kind: "run", approved: false };
  const { call } = item;
  if (options.interrupted && item.tool.idempotent !== true && item.tool.resumesAfterRestart !== true) {
    return { kind: "result", result: errorResult(call, INTERRUPTED_BY_RESTART) };
  }
  const decided = options.decided?.get(call.id);
  if (decided) return gateFor(call, decided);
  const need = await approvalNeed(item.tool, item.args, options.context, options.askFirst ?? []);
  if (!need) return { kind: "run", approved: false };
  const request = {
    tool: call.name,
    summary: need.summary,
    reason: need.reason,
    callId: call.id,
    args: item.args,
  };
  const approver = options.approve ?? options.context.approve;
  if (!approver) return { kind: "result", result: unattendedResult(call, need) };
  const answer = toDecision(await approver(request));
  const base = {
    type: "approval" as const,
    runId: options.runId,
    callId: call.id,
    tool: call.name,
    args: item.args,
    summary: need.summary,
    reason: need.reason,
  };
  if (answer === "wait") {
    yield { ...base, state: "requested" };
    const askedAt = (options.now ?? Date.now)();
    return {
      kind: "wait",
      pending: {
        callId: call.id,
        tool: call.name,
        args: item.args,
        summary: need.summary,
        reason: need.reason,
        askedAt,
      },
    };
  }
  yield {
    ...base,
    state: answer.decision === "approve" ? "approved" : "rejected",
    ...decisionFields(answer),
  };
  return gateFor(call, answer);
}

function gateFor(call: ToolCall, decision: ApprovalDecision): Gate {
  return decision.decision === "approve"
    ? { kind: "run", approved: true }
    : { kind: "result", result: rejectionResult(call, decision) };
}

/** The optional fields of a decision, for events. */
export function decisionFields(d: ApprovalDecision): { by?: string; always?: boolean; note?: string } {
  return {
    ...(d.by ? { by: d.by } : {}),
    ...(d.always ? { always: true } : {}),
    ...(d.reason ? { note: d.reason } : {}),
  };
}

/** An error result for a call answered without running its tool. */
function errorResult(call: ToolCall, content: string): ToolResultMessage {
  return { role: "tool", toolCallId: call.id, toolName: call.name, content, isError: true };
}

function callEvent(runId: string, item: Planned): AgentEvent {
  return { type: "tool_call", runId, id: item.call.id, name: item.call.name, args: argsOf(item) };
}

/** The tool_result event of a result made without running the tool. */
function resultEvent(runId: string, message: ToolResultMessage, durationMs: number): AgentEvent {
  return {
    type: "tool_result",
    runId,
    id: message.toolCallId,
    name: message.toolName,
    ok: !message.isError,
    output: renderContent(message.content),
    durationMs,
  };
}

function plan(call: ToolCall, options: ExecuteToolsOptions): Planned {
  const repeated = options.guard.check(call);
  if (repeated) return { call, error: repeated, safe: true };
  const prepared = options.registry.prepareCall(call.name, call.arguments);
  if (!prepared.ok) return { call, error: prepared.error, safe: true };
  return { call, tool: prepared.tool, args: prepared.args, safe: prepared.tool.concurrencySafe !== false };
}

/** Groups calls: runs of concurrency-safe calls together, each unsafe call on its own. */
function batches(planned: Planned[]): Array<Array<{ item: Planned }>> {
  const out: Array<Array<{ item: Planned }>> = [];
  let current: Array<{ item: Planned }> = [];
  for (const item of planned) {
    if (item.safe) {
      current.push({ item });
      continue;
    }
    if (current.length > 0) out.push(current);
    out.push([{ item }]);
    current = [];
  }
  if (current.length > 0) out.push(current);
  return out;
}

function argsOf(item: Planned): unknown {
  if ("tool" in item) return item.args;
  try {
    return JSON.parse(item.call.arguments || "{}");
  } catch {
    return item.call.arguments;
  }
}

const yes = async (): Promise<boolean> => true;

async function runOne(
  item: Planned,
  options: ExecuteToolsOptions,
  approved: boolean,
): Promise<{ message: ToolResultMessage; event: AgentEvent }> {
  const started = performance.now();
  let result: ToolResult;
  if ("tool" in item) {
    // An approved call is not asked again by the tool itself (the shell checks its policy too).
    let context = approved ? { ...options.context, approve: yes } : options.context;
    // A call a restart interrupted goes on with what it started (see `resumesAfterRestart`).
    if (options.interrupted && item.tool.resumesAfterRestart) context = { ...context, restarted: true };
    try {
      result = await options.registry.execute({ tool: item.tool, args: item.args }, context);
    } catch (err) {
      // The registry turns tool failures into results; this only catches bugs, which must not kill the run.
      result = {
        content: `internal error running ${item.call.name}: ${(err as Error).message}`,
        isError: true,
      };
    }
  } else {
    result = { content: item.error, isError: true };
  }
  const { content, cutChars } = limitContent(result.content, options.maxResultChars);
  const message: ToolResultMessage = {
    role: "tool",
    toolCallId: item.call.id,
    toolName: item.call.name,
    content,
  };
  if (result.isError) message.isError = true;
  const event: AgentEvent = {
    type: "tool_result",
    runId: options.runId,
    id: item.call.id,
    name: item.call.name,
    ok: !result.isError,
    output: renderContent(content),
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  };
  if (cutChars > 0) event.truncatedChars = cutChars;
  if (result.app && event.type === "tool_result") event.app = result.app;
  if (result.file && event.type === "tool_result") event.file = result.file;
  return { message, event };
}

/** Applies the size budget to the text of a result; images pass through. */
function limitContent(
  content: ToolResult["content"],
  maxChars: number,
): { content: ToolResult["content"]; cutChars: number } {
  if (typeof content === "string") {
    const { text, cutChars } = truncateToolOutput(content, maxChars);
    return { content: text, cutChars };
  }
  let cut = 0;
  const parts = content.map((part): TextPart | ImagePart => {
    if (part.type !== "text") return part;
    const { text, cutChars } = truncateToolOutput(part.text, maxChars);
    cut += cutChars;
    return { ...part, text };
  });
  return { content: parts, cutChars: cut };
}

/** Tool output as one string, for events and terminals. */
export function renderContent(content: ToolResult["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((part) =>
      part.type === "text"
        ? part.text
        : `[image ${part.mimeType}, ${Math.round((part.data.length * 3) / 4)} bytes]`,
    )
    .join("\n");
}
