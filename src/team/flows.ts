/**
 * The collaboration flow state machine, as pure functions over FlowRecord. Flow: idle → running(step i)
 * → paused (a person's turn) → done | error | stopped. Step: waiting → running → completed | error |
 * skipped. A step's `input` is what it received before its instruction (the trigger message for step
 * 0, else the previous step's output); a skipped step passes its input through as its output.
 * Functions return the next state and what the caller must do: start a step, or cancel a run.
 */
import { conflict, invalid } from "../errors.js";
import type { ChainStep, FlowAction, FlowRecord, FlowStep } from "./types.js";

export interface Transition {
  flow: FlowRecord;
  /** Start this step's run next. */
  start?: number;
  /** Cancel this run (the step that was running when the flow stopped). */
  cancelRunId?: string;
}

const TERMINAL = new Set(["done", "stopped"]);

/** A new flow for a chain, waiting to start step 0 with `input`. */
export function createFlow(
  id: string,
  channelId: string,
  triggerMessageId: number,
  chain: readonly ChainStep[],
  input: string,
  now: number,
): FlowRecord {
  if (chain.length === 0) throw invalid("The channel has no collaboration chain.", "set a chain first");
  const steps: FlowStep[] = chain.map((s) => ({ ...s, status: "waiting" }));
  steps[0]!.input = input;
  return {
    id,
    channelId,
    triggerMessageId,
    status: "idle",
    currentStep: 0,
    steps,
    createdAt: now,
    updatedAt: now,
  };
}

function copy(flow: FlowRecord, now: number): FlowRecord {
  return { ...flow, steps: flow.steps.map((s) => ({ ...s })), updatedAt: now };
}

function stepAt(flow: FlowRecord, index: number): FlowStep {
  const step = flow.steps[index];
  if (!step) {
    throw invalid(`Step ${index} does not exist; this flow has steps 0 to ${flow.steps.length - 1}.`);
  }
  return step;
}

/** The input a step receives: the trigger text for step 0, else the previous step's output. */
export function inputFor(flow: FlowRecord, index: number): string {
  if (index === 0) return flow.steps[0]?.input ?? "";
  return flow.steps[index - 1]?.output ?? "";
}

/** Moves to the first step from `index` that is not skipped (passing input through), or finishes. */
function advance(flow: FlowRecord, index: number): Transition {
  for (let i = index; i < flow.steps.length; i++) {
    const step = flow.steps[i]!;
    if (step.status === "skipped") {
      step.input = inputFor(flow, i);
      step.output = step.input;
      continue;
    }
    flow.status = "running";
    flow.currentStep = i;
    return { flow, start: i };
  }
  flow.status = "done";
  flow.currentStep = flow.steps.length - 1;
  return { flow };
}

/** Starts the flow at step 0. */
export function beginFlow(flow: FlowRecord, now: number): Transition {
  if (flow.status !== "idle") throw conflict(`The flow is already ${flow.status}.`);
  return advance(copy(flow, now), 0);
}

/** Marks a step running with the run that executes it. */
export function markStepRunning(flow: FlowRecord, index: number, runId: string, now: number): FlowRecord {
  const next = copy(flow, now);
  const step = stepAt(next, index);
  step.status = "running";
  step.input = inputFor(next, index);
  step.runId = runId;
  delete step.output;
  delete step.error;
  next.currentStep = index;
  return next;
}

/** A step's run finished with output: pause for approval or a requested pause, else go on. */
export function completeStep(flow: FlowRecord, index: number, output: string, now: number): Transition {
  const next = copy(flow, now);
  const step = stepAt(next, index);
  step.status = "completed";
  step.output = output;
  delete step.error;
  next.currentStep = index;
  if (next.status !== "running") return { flow: next };
  if (step.requiresApproval) {
    next.status = "paused";
    return { flow: next };
  }
  return advance(next, index + 1);
}

/** A step's run failed: the flow stops at it in `error`, for a retry or a skip. */
export function failStep(flow: FlowRecord, index: number, error: string, now: number): Transition {
  const next = copy(flow, now);
  const step = stepAt(next, index);
  step.status = "error";
  step.error = error;
  next.currentStep = index;
  if (!TERMINAL.has(next.status)) next.status = "error";
  return { flow: next };
}

/** After a restart or shutdown: a flow that was running (or about to) waits for a person, its step for a new run. */
export function suspendFlow(flow: FlowRecord, now: number): FlowRecord {
  const next = copy(flow, now);
  if (next.status === "running" || next.status === "idle") next.status = "paused";
  for (const step of next.steps) if (step.status === "running") step.status = "waiting";
  return next;
}

function requireStatus(flow: FlowRecord, allowed: FlowRecord["status"][], action: string): void {
  if (!allowed.includes(flow.status)) {
    throw conflict(
      `Cannot ${action} a flow that is ${flow.status}.`,
      `${action} works on ${allowed.join(" or ")} flows`,
    );
  }
}

/** Continues a paused flow from its current step. */
function resume(flow: FlowRecord): Transition {
  const step = stepAt(flow, flow.currentStep);
  switch (step.status) {
    case "running":
      flow.status = "running";
      return { flow };
    case "waiting":
      return advance(flow, flow.currentStep);
    case "completed":
    case "skipped":
      flow.status = "running";
      return advance(flow, flow.currentStep + 1);
    case "error":
      throw conflict(
        `Step ${flow.currentStep} failed: ${step.error ?? "unknown error"}.`,
        "retry or skip that step",
      );
  }
}

/** Applies a person's action. Throws `conflict` when the flow's state does not allow it. */
export function applyAction(flow: FlowRecord, action: FlowAction, now: number): Transition {
  const next = copy(flow, now);
  switch (action.action) {
    case "pause":
      requireStatus(next, ["running"], "pause");
      next.status = "paused";
      return { flow: next };
    case "resume": {
      requireStatus(next, ["paused"], "resume");
      // A finished step that needs approval is approved by a person, never by resuming past it.
      const current = stepAt(next, next.currentStep);
      if (current.status === "completed" && current.requiresApproval) {
        throw conflict(
          `Step ${next.currentStep + 1} waits for approval; resuming would pass it unapproved.`,
          "approve the step (edit its output first if needed), or stop the flow",
        );
      }
      return resume(next);
    }
    case "approve":
      requireStatus(next, ["paused"], "approve");
      if (action.stepIndex !== next.currentStep) {
        throw conflict(`The flow is paused at step ${next.currentStep}, not step ${action.stepIndex}.`);
      }
      return resume(next);
    case "stop": {
      requireStatus(next, ["idle", "running", "paused", "error"], "stop");
      next.status = "stopped";
      const running = next.steps.find((s) => s.status === "running");
      if (running) {
        running.status = "error";
        running.error = "The flow was stopped while this step ran.";
        return running.runId ? { flow: next, cancelRunId: running.runId } : { flow: next };
      }
      return { flow: next };
    }
    case "skip": {
      requireStatus(next, ["running", "paused", "error"], "skip a step of");
      const step = stepAt(next, action.stepIndex);
      if (step.status !== "waiting" && step.status !== "error") {
        throw conflict(
          `Step ${action.stepIndex} is ${step.status}; only waiting or failed steps can be skipped.`,
        );
      }
      step.status = "skipped";
      delete step.error;
      // Input of a step not reached yet is filled in when the flow passes it.
      if (action.stepIndex <= next.currentStep) {
        step.input = inputFor(next, action.stepIndex);
        step.output = step.input;
      }
      if (next.status === "error" && action.stepIndex === next.currentStep) {
        return advance(next, action.stepIndex + 1);
      }
      return { flow: next };
    }
    case "retry": {
      requireStatus(next, ["error"], "retry a step of");
      const step = stepAt(next, action.stepIndex);
      if (step.status !== "error" || action.stepIndex !== next.currentStep) {
        throw conflict(
          `Step ${action.stepIndex} did not fail; only the failed step ${next.currentStep} can be retried.`,
        );
      }
      step.status = "waiting";
      delete step.error;
      return advance(next, action.stepIndex);
    }
    case "edit": {
      requireStatus(next, ["running", "paused", "error", "done", "stopped"], "edit a step of");
      const step = stepAt(next, action.stepIndex);
      if (step.status !== "completed" && step.status !== "skipped") {
        throw conflict(
          `Step ${action.stepIndex} is ${step.status}; only a finished step's output can be edited.`,
        );
      }
      const used = next.steps
        .slice(action.stepIndex + 1)
        .find((s) => s.status === "running" || s.status === "completed");
      if (used) {
        throw conflict(
          `The output of step ${action.stepIndex} was already passed on to @${used.agentId}.`,
          "edit a step's output while the flow is paused after it",
        );
      }
      step.output = action.output;
      return { flow: next };
    }
  }
}
