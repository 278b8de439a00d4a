/**
 * The runs of a collaboration flow's steps: each step's agent answers with the previous step's
 * output as its input, posted to the channel; a step whose process died goes on from its checkpoint.
 */

import { randomUUID } from "node:crypto";
import { notFound } from "../errors.js";
import type { SessionRef } from "../store/types.js";
import { runAgentTurn } from "./agent-turn.js";
import type { StepLauncher, StepOutcome } from "./flow-runner.js";
import { inputFor } from "./flows.js";
import { RunKind } from "./run-kind.js";
import { laneOf, type RunHandle } from "./run-manager.js";
import { topScope } from "./run-tools.js";
import { outcomeOf, requireAgent, startRun } from "./runner-deps.js";
import { flowStepSystemText, stepInput } from "./team-prompt.js";
import type { StoredRun } from "./team-store.js";
import type { FlowRecord } from "./types.js";

/** Runs flow steps. */
export class FlowStepRuns extends RunKind {
  /** Starts the run of a flow step; its output is posted to the channel and handed to the flow. */
  readonly launchStep: StepLauncher = async (flow, index) => {
    const { store } = this.deps;
    const step = flow.steps[index];
    if (!step) throw notFound(`Flow ${flow.id} has no step ${index}.`);
    const trigger = await store.messages.get(flow.triggerMessageId);
    const requestedBy = trigger?.author.type === "user" ? trigger.author.id : "system";
    const ref = { userId: `flow:${flow.id}`, sessionId: `step:${index}:${randomUUID()}` };
    let output = "";
    const handle = await startRun(
      this.deps.runs,
      {
        channelId: flow.channelId,
        agentId: step.agentId,
        triggerMessageId: flow.triggerMessageId,
        depth: 0,
        flowId: flow.id,
        stepIndex: index,
        ref,
        requestedBy,
      },
      (runId, signal, setModel) =>
        this.answers.answering(
          flow.channelId,
          step.agentId,
          runId,
          signal,
          {},
          undefined,
          async (onEvent) => {
            const result = await runAgentTurn(this.deps.runtime, {
              ...(await this.#stepTurn(flow, index, runId, ref, requestedBy, signal)),
              input: stepInput(step.instruction, inputFor(flow, index)),
              onEvent,
              onModel: setModel,
            });
            output = result.answer;
            return result;
          },
        ),
    );
    return { runId: handle.run.id, done: stepOutcome(handle, () => output) };
  };

  /**
   * Continues a flow step whose process died (the caller holds its run), from its checkpoint like a
   * chat answer; `done` settles with its output, which the flow then hands to the next step.
   */
  async resumeFlowStep(
    stored: StoredRun,
    flow: FlowRecord,
    fence?: number,
  ): Promise<{ runId: string; done: Promise<StepOutcome> }> {
    const { run } = stored;
    const index = run.stepIndex ?? flow.currentStep;
    const { existing, firstSeq, start } = await this.answers.resumePoint(stored, "restart");
    let output = "";
    const handle = await this.deps.runs.resume(
      stored,
      laneOf(stored.ref),
      async ({ signal, setModel }) =>
        outcomeOf(
          await this.answers.answering(
            run.channelId,
            run.agentId,
            run.id,
            signal,
            {},
            existing,
            async (onEvent) => {
              const result = await runAgentTurn(this.deps.runtime, {
                ...(await this.#stepTurn(flow, index, run.id, stored.ref, stored.requestedBy, signal)),
                input: "",
                resume: { reason: "restart", decisions: {} },
                firstSeq,
                onEvent,
                onModel: setModel,
              });
              output = result.answer;
              return result;
            },
            start,
          ),
        ),
      fence,
    );
    return { runId: run.id, done: stepOutcome(handle, () => output) };
  }

  /** What a flow step's turn is, first run or resumed (its input aside). */
  async #stepTurn(
    flow: FlowRecord,
    index: number,
    runId: string,
    ref: SessionRef,
    requestedBy: string,
    signal: AbortSignal,
  ) {
    const { store } = this.deps;
    const step = flow.steps[index];
    if (!step) throw notFound(`Flow ${flow.id} has no step ${index}.`);
    const channel = await store.channels.get(flow.channelId);
    if (!channel) throw notFound(`The flow's channel ${flow.channelId} no longer exists.`);
    const agent = await requireAgent(store, step.agentId);
    const nextStep = flow.steps[index + 1];
    const next = nextStep ? await store.agents.get(nextStep.agentId) : undefined;
    const workspace = this.deps.workspaceFor(channel.id);
    return {
      agent,
      runId,
      channelId: channel.id,
      ref,
      system: flowStepSystemText(agent, channel, index, flow.steps.length, next),
      workspace,
      signal,
      extraTools: await this.tools.callTools(
        topScope(runId, channel.id, flow.triggerMessageId, agent.id, requestedBy, workspace),
      ),
      requestedBy,
    };
  }
}

/** How a flow step's run ended, for the flow: its output, or why it has none. */
function stepOutcome(handle: RunHandle, output: () => string): Promise<StepOutcome> {
  return handle.finished.then(
    (run): StepOutcome =>
      run.status === "done"
        ? { ok: true, output: output() }
        : { ok: false, error: run.error ?? `The step's run ended ${run.status}.` },
  );
}
