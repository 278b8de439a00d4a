/**
 * The live state of a collaboration flow: each step with its status, and the controls people have
 * over it (pause, resume, stop; per step approve, skip, retry, edit output). Updated by `flow` events.
 */
import { useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import type { AgentRecord, FlowAction, FlowRecord, FlowStep } from "../types.js";
import { MarkdownView } from "./markdown-view.js";

const ACTIVE = new Set(["idle", "running", "paused"]);
/** A flow that can still be acted on: live, or stopped at a failed step (retry or skip it). */
const ACTIONABLE = new Set(["idle", "running", "paused", "error"]);

function StepOutputEditor({
  output,
  onSave,
  onCancel,
  busy,
}: {
  output: string;
  onSave: (text: string) => void;
  onCancel: () => void;
  busy: boolean;
}) {
  const [text, setText] = useState(output);
  return (
    <div class="step-editor">
      <textarea
        class="code-input"
        rows={6}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        data-testid="flow-step-edit-input"
      />
      <div class="form-actions">
        <button type="button" class="btn btn-small" onClick={onCancel}>
          {t("common.cancel")}
        </button>
        <button
          type="button"
          class="btn btn-small btn-primary"
          disabled={busy}
          onClick={() => onSave(text)}
          data-testid="flow-step-edit-save"
        >
          {t("flow.saveOutput")}
        </button>
      </div>
    </div>
  );
}

interface StepRowProps {
  flow: FlowRecord;
  step: FlowStep;
  index: number;
  agent: AgentRecord | undefined;
  act: (action: FlowAction) => Promise<void>;
  busy: boolean;
}

function StepRow({ flow, step, index, agent, act, busy }: StepRowProps) {
  const [editing, setEditing] = useState(false);
  const open = ACTIONABLE.has(flow.status);
  const pausedHere = flow.status === "paused" && flow.currentStep === index;
  // Only a finished step that asked for a person's approval waits for one (a step still running when
  // the flow was paused is not approvable; Resume continues the flow).
  const awaitsApproval = pausedHere && step.requiresApproval && step.status === "completed";
  const canEdit = step.status === "completed" && flow.status !== "running" && open;
  return (
    <li
      class={`flow-step step-${step.status}${flow.currentStep === index ? " current" : ""}`}
      data-testid="flow-step"
      data-step-index={index}
      data-status={step.status}
    >
      <div class="flow-step-head">
        <span class="step-index">{index + 1}</span>
        <span aria-hidden="true">{agent?.emoji ?? "🤖"}</span>
        <span class="step-agent">{agent?.name ?? step.agentId}</span>
        {step.requiresApproval && (
          <span class="badge badge-approval" title={t("flow.approvalTitle")}>
            {t("flow.approval")}
          </span>
        )}
        <span class={`badge badge-step-${step.status}`} data-testid="flow-step-status">
          {step.status}
        </span>
        <span class="flow-step-actions">
          {awaitsApproval && (
            <button
              type="button"
              class="btn btn-small btn-primary"
              disabled={busy}
              onClick={() => void act({ action: "approve", stepIndex: index })}
              data-testid="flow-step-approve"
            >
              {t("approval.approve")}
            </button>
          )}
          {open && (step.status === "waiting" || step.status === "error") && (
            <button
              type="button"
              class="btn btn-small"
              disabled={busy}
              onClick={() => void act({ action: "skip", stepIndex: index })}
              data-testid="flow-step-skip"
            >
              {t("flow.skip")}
            </button>
          )}
          {step.status === "error" && open && (
            <button
              type="button"
              class="btn btn-small"
              disabled={busy}
              onClick={() => void act({ action: "retry", stepIndex: index })}
              data-testid="flow-step-retry"
            >
              {t("flow.retry")}
            </button>
          )}
          {canEdit && !editing && (
            <button
              type="button"
              class="btn btn-small"
              onClick={() => setEditing(true)}
              data-testid="flow-step-edit"
            >
              {t("flow.editOutput")}
            </button>
          )}
        </span>
      </div>
      {step.instruction && <p class="step-instruction muted">{step.instruction}</p>}
      {step.error && (
        <p class="run-error" data-testid="flow-step-error">
          {step.error}
        </p>
      )}
      {editing ? (
        <StepOutputEditor
          output={step.output ?? ""}
          busy={busy}
          onCancel={() => setEditing(false)}
          onSave={(output) => {
            void act({ action: "edit", stepIndex: index, output }).then(() => setEditing(false));
          }}
        />
      ) : (
        step.output && (
          <details class="step-output" open={awaitsApproval}>
            <summary>{t("flow.output")}</summary>
            <MarkdownView text={step.output} testId="flow-step-output" />
          </details>
        )
      )}
    </li>
  );
}

/** Whether the flow is paused on a finished step that waits for a person's approval. */
export function awaitsApproval(flow: FlowRecord): boolean {
  const step = flow.steps[flow.currentStep];
  return flow.status === "paused" && step?.status === "completed" && step.requiresApproval;
}

/**
 * Where the flow stands, as people count: "step 2 of 3" while a step runs or waits, "paused after
 * step 1 of 3" once that step is done, "step 1 of 3 waits for your approval" when it needs one.
 */
export function flowProgress(flow: FlowRecord): string {
  const total = flow.steps.length;
  const number = Math.min(flow.currentStep + 1, total);
  const step = flow.steps[flow.currentStep];
  if (flow.status === "done") return t("flow.progress.done", { total });
  if (awaitsApproval(flow)) return t("flow.progress.awaits", { number, total });
  if (flow.status === "paused" && (step?.status === "completed" || step?.status === "skipped"))
    return t("flow.progress.pausedAfter", { number, total });
  if (flow.status === "paused" && step?.status === "running")
    return t("flow.progress.runsThenPauses", { number, total });
  if (flow.status === "paused") return t("flow.progress.pausedBefore", { number, total });
  return t("flow.progress.step", { number, total });
}

function isNarrow(): boolean {
  return typeof matchMedia === "function" && matchMedia("(max-width: 700px)").matches;
}

/** The flow panel. */
export function FlowPanel({ flow, agents }: { flow: FlowRecord; agents: AgentRecord[] }) {
  const { api, store } = useServices();
  const finished = !ACTIONABLE.has(flow.status);
  // A finished flow folds away (its outputs are in the conversation); on a phone, where the panel is
  // a sheet over the composer, so does a flow that does not need a person. Toggling overrides that.
  const [folded, setFolded] = useState<boolean | undefined>(undefined);
  const needsPerson = flow.status === "paused" || flow.status === "error";
  const collapsed = folded ?? (finished || (isNarrow() && !needsPerson));
  const [act, busy] = useAction(async (action: FlowAction) => {
    const next = await api.flowAction(flow.id, action);
    store.dispatch({ type: "flow", flow: next });
  });
  const byId = new Map(agents.map((a) => [a.id, a]));
  return (
    <section class="flow-panel" data-testid="flow-panel" data-flow-id={flow.id} data-status={flow.status}>
      <header class="flow-head">
        <button
          type="button"
          class="icon-btn"
          aria-expanded={!collapsed}
          aria-label={collapsed ? t("flow.showSteps") : t("flow.hideSteps")}
          onClick={() => setFolded(!collapsed)}
          data-testid="flow-toggle"
        >
          {collapsed ? "▸" : "▾"}
        </button>
        <h3>{t("chat.flow")}</h3>
        <span class="muted flow-progress" data-testid="flow-progress">
          {flowProgress(flow)}
        </span>
        <span class={`badge badge-flow-${flow.status}`} data-testid="flow-status">
          {flow.status}
        </span>
        <span class="flow-actions">
          {flow.status === "running" && (
            <button
              type="button"
              class="btn btn-small"
              disabled={busy}
              onClick={() => void act({ action: "pause" })}
              data-testid="flow-pause"
            >
              {t("flow.pause")}
            </button>
          )}
          {flow.status === "paused" && !awaitsApproval(flow) && (
            <button
              type="button"
              class="btn btn-small"
              disabled={busy}
              onClick={() => void act({ action: "resume" })}
              data-testid="flow-resume"
            >
              {t("flow.resume")}
            </button>
          )}
          {ACTIVE.has(flow.status) && (
            <button
              type="button"
              class="btn btn-small btn-danger"
              disabled={busy}
              onClick={() => void act({ action: "stop" })}
              data-testid="flow-stop"
            >
              {t("flow.stop")}
            </button>
          )}
        </span>
      </header>
      <ol class="flow-steps" hidden={collapsed}>
        {flow.steps.map((step, index) => (
          <StepRow
            key={index}
            flow={flow}
            step={step}
            index={index}
            agent={byId.get(step.agentId)}
            act={act}
            busy={busy}
          />
        ))}
      </ol>
    </section>
  );
}
