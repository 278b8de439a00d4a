/** Editing a collaboration chain as pure list operations, and checking it before it is saved. */

import { t } from "../i18n/index.js";
import type { ChainStep } from "../types.js";

/** The steps with step `index` moved by `delta` places (clamped to the list). */
export function moveStep(steps: ChainStep[], index: number, delta: number): ChainStep[] {
  const target = Math.max(0, Math.min(steps.length - 1, index + delta));
  if (target === index || index < 0 || index >= steps.length) return steps;
  const next = [...steps];
  const [step] = next.splice(index, 1);
  if (step) next.splice(target, 0, step);
  return next;
}

/** The steps without step `index`. */
export function removeStep(steps: ChainStep[], index: number): ChainStep[] {
  return steps.filter((_, i) => i !== index);
}

/** The steps with step `index` changed. */
export function updateStep(steps: ChainStep[], index: number, patch: Partial<ChainStep>): ChainStep[] {
  return steps.map((step, i) => (i === index ? { ...step, ...patch } : step));
}

/** The chain as the API wants it: instructions trimmed, empty ones dropped. */
export function normaliseChain(steps: ChainStep[]): ChainStep[] {
  return steps.map((step) => {
    const instruction = step.instruction?.trim();
    return instruction
      ? { agentId: step.agentId, requiresApproval: step.requiresApproval, instruction }
      : { agentId: step.agentId, requiresApproval: step.requiresApproval };
  });
}

/** Why the chain cannot be saved, or undefined when it can: every step needs an agent of the group. */
export function chainProblem(steps: ChainStep[], memberAgentIds: string[]): string | undefined {
  const members = new Set(memberAgentIds);
  for (const [index, step] of steps.entries()) {
    if (!step.agentId) return t("chain.check.noAgent", { step: index + 1 });
    if (!members.has(step.agentId)) {
      return t("chain.check.notMember", { step: index + 1, agent: step.agentId });
    }
  }
  return undefined;
}
