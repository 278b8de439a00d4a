/**
 * Builds a message's parts from its run's agent events. The server stores what this builds; the web
 * UI folds the same events through the same functions while a run streams, so the live view and the
 * view after a reload are made of the same parts. Pure and immutable (the UI relies on new arrays).
 */
import type { AgentEvent } from "../agent/events.js";
import type { ApprovalView, MessagePart, RunStatus } from "./types.js";

type Part<T extends MessagePart["type"]> = Extract<MessagePart, { type: T }>;

/** Whether a part ends the message (an error, or a stop). */
export function isEndPart(part: MessagePart | undefined): part is Part<"error"> | Part<"stopped"> {
  return part?.type === "error" || part?.type === "stopped";
}

/** The part that ended the message, if it did not end normally. */
export function endPartOf(parts: readonly MessagePart[]): Part<"error"> | Part<"stopped"> | undefined {
  const last = parts[parts.length - 1];
  return isEndPart(last) ? last : undefined;
}

function appendText(parts: readonly MessagePart[], type: "text" | "reasoning", text: string): MessagePart[] {
  const last = parts[parts.length - 1];
  if (last?.type === type) return [...parts.slice(0, -1), { type, text: last.text + text }];
  return [...parts, { type, text }];
}

function endWith(parts: readonly MessagePart[], end: Part<"error"> | Part<"stopped">): MessagePart[] {
  const ended = endPartOf(parts);
  // The run's own reason for a stop (who cancelled it) says more than the agent's "aborted".
  if (ended?.type === "stopped" && end.type === "stopped") return [...parts.slice(0, -1), end];
  if (ended) return [...parts];
  // A tool or a called agent still marked running when the run ended did not finish.
  const settled = parts.map((part): MessagePart => {
    if (part.type === "tool" && (part.status === "running" || part.status === "waiting")) {
      return { ...part, status: "error" };
    }
    if (part.type === "agent_run" && part.status === "running") {
      return { ...part, status: end.type === "stopped" ? "cancelled" : "error" };
    }
    return part;
  });
  return [...settled, end];
}

/** The end part for a failure: `aborted` is a stop, anything else an error. */
export function failurePart(code: string, message: string, hint?: string): Part<"error"> | Part<"stopped"> {
  if (code === "aborted") return { type: "stopped", reason: message };
  const part: Part<"error"> = { type: "error", code, message };
  if (hint) part.hint = hint;
  return part;
}

/** Folds one agent event into the parts; events that show nothing leave them as they are. */
export function applyAgentEvent(parts: readonly MessagePart[], event: AgentEvent): MessagePart[] {
  switch (event.type) {
    case "text_delta":
      return event.text === "" ? [...parts] : appendText(parts, "text", event.text);
    case "reasoning_delta":
      return event.text === "" ? [...parts] : appendText(parts, "reasoning", event.text);
    case "tool_call": {
      if (parts.some((p) => p.type === "tool" && p.callId === event.id)) return [...parts];
      // Tools start as soon as they are called, so a called agent's run can be reported before the
      // call itself: the call goes before the runs that started at the end of the answer.
      let at = parts.length;
      while (at > 0 && parts[at - 1]?.type === "agent_run") at--;
      const call: MessagePart = {
        type: "tool",
        callId: event.id,
        name: event.name,
        args: event.args,
        status: "running",
      };
      return [...parts.slice(0, at), call, ...parts.slice(at)];
    }
    case "tool_result": {
      const ended = (current?: Part<"tool">): MessagePart => ({
        type: "tool",
        callId: event.id,
        name: event.name,
        args: current?.args,
        status: event.ok ? "ok" : "error",
        output: event.output,
        durationMs: event.durationMs,
        ...(current?.approval ? { approval: current.approval } : {}),
        ...(event.app ? { app: event.app } : {}),
      });
      const index = parts.findIndex((p) => p.type === "tool" && p.callId === event.id);
      // A file the call put into the chat is shown right after the call (once).
      const { file } = event;
      const shared: MessagePart[] =
        file && !parts.some((p) => p.type === "attachment" && p.id === file.id)
          ? [{ type: "attachment", ...file }]
          : [];
      if (index < 0) return [...parts, ended(), ...shared];
      const current = parts[index] as Part<"tool">;
      return parts.flatMap((p, i) => (i === index ? [ended(current), ...shared] : [p]));
    }
    case "approval": {
      const approval: ApprovalView = {
        state: event.state === "requested" ? "pending" : event.state,
        summary: event.summary,
        reason: event.reason,
        ...(event.by ? { by: event.by } : {}),
        ...(event.always ? { always: true } : {}),
        ...(event.note ? { note: event.note } : {}),
      };
      const status = event.state === "requested" ? "waiting" : "running";
      return updateTool(parts, event.callId, (p) => ({
        ...p,
        status,
        approval: { ...(p.approval?.askedOf ? { askedOf: p.approval.askedOf } : {}), ...approval },
      }));
    }
    case "resumed":
      // After an approval the answer simply goes on; after a restart the person is told.
      return event.reason === "restart" ? [...parts, { type: "resumed", reason: "restart" }] : [...parts];
    case "model_fallback":
      return [
        ...parts,
        {
          type: "model_fallback",
          from: event.from,
          to: event.to,
          reason: event.reason,
          ...(event.skipped ? { skipped: true } : {}),
        },
      ];
    case "error":
      return endWith(parts, failurePart(event.code, event.message, event.hint));
    default:
      return [...parts];
  }
}

function updateTool(
  parts: readonly MessagePart[],
  callId: string,
  update: (part: Part<"tool">) => Part<"tool">,
): MessagePart[] {
  return parts.map((p) => (p.type === "tool" && p.callId === callId ? update(p) : p));
}

/** Marks who a waiting call's approval is asked of (the person the run acts for), with their name. */
export function askApprovalsOf(parts: readonly MessagePart[], userId: string, name?: string): MessagePart[] {
  return parts.map((p) =>
    p.type === "tool" && p.approval?.state === "pending"
      ? { ...p, approval: { ...p.approval, askedOf: userId, ...(name ? { askedOfName: name } : {}) } }
      : p,
  );
}

/** Records a decision (or expiry) on a waiting call's card. */
export function decideApproval(
  parts: readonly MessagePart[],
  callId: string,
  decision: Pick<ApprovalView, "state" | "by" | "byName" | "always" | "note">,
): MessagePart[] {
  return updateTool(parts, callId, (p) => {
    const base = p.approval ?? { state: "pending" as const, summary: "", reason: "" };
    const next: ApprovalView = { ...base, state: decision.state };
    if (decision.by) next.by = decision.by;
    if (decision.byName) next.byName = decision.byName;
    if (decision.always) next.always = true;
    if (decision.note) next.note = decision.note;
    return { ...p, approval: next };
  });
}

/** Ends the parts with a failure unless an end part is there already. */
export function endParts(parts: readonly MessagePart[], end: Part<"error"> | Part<"stopped">): MessagePart[] {
  return endWith(parts, end);
}

/** A called agent's run started: its card goes where the call happened. */
export function startChildRun(parts: readonly MessagePart[], runId: string, agentId: string): MessagePart[] {
  if (parts.some((p) => p.type === "agent_run" && p.runId === runId)) return [...parts];
  return [...parts, { type: "agent_run", runId, agentId, status: "running" }];
}

/** A called agent's run changed state; `childParts` (when known) are stored inside its card. */
export function updateChildRun(
  parts: readonly MessagePart[],
  runId: string,
  status: RunStatus,
  childParts?: MessagePart[],
): MessagePart[] {
  return parts.map((p) => {
    if (p.type !== "agent_run" || p.runId !== runId) return p;
    const next: Part<"agent_run"> = { ...p, status };
    if (childParts) next.parts = childParts;
    return next;
  });
}

/** The message text of the parts: its text parts, one paragraph each. */
export function textOfParts(parts: readonly MessagePart[]): string {
  return parts
    .filter((p): p is Part<"text"> => p.type === "text")
    .map((p) => p.text.trim())
    .filter((t) => t !== "")
    .join("\n\n");
}

/** The model that answered, when the parts say (a chain moved); otherwise the agent's first model did. */
export function answeringModelOf(parts: readonly MessagePart[]): string | undefined {
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i];
    if (part?.type === "model_fallback") return part.to;
  }
  return undefined;
}
