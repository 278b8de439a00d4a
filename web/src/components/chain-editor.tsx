/** The ordered steps of a group's collaboration chain: agent, approval pause and instruction per step. */
import { useEffect, useState } from "preact/hooks";
import { useAction, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import { chainProblem, moveStep, normaliseChain, removeStep, updateStep } from "../state/chain.js";
import type { AgentRecord, ChainStep, ChannelRecord } from "../types.js";

/** The chain editor of a group. */
export function ChainEditor({
  channel,
  agents,
  canEdit,
}: {
  channel: ChannelRecord;
  agents: AgentRecord[];
  canEdit: boolean;
}) {
  const { api, store } = useServices();
  const [steps, setSteps] = useState<ChainStep[]>(channel.chain);
  useEffect(() => setSteps(channel.chain), [channel.chain]);
  const memberAgents = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  const byId = new Map(agents.map((a) => [a.id, a]));
  const problem = chainProblem(steps, memberAgents);
  const dirty = JSON.stringify(normaliseChain(steps)) !== JSON.stringify(normaliseChain(channel.chain));

  const [save, saving] = useAction(async () => {
    if (problem) throw new Error(problem);
    const updated = await api.setChain(channel.id, normaliseChain(steps));
    store.dispatch({ type: "channel_saved", channel: updated });
    store.dispatch({ type: "notice", kind: "info", text: t("flow.chainSaved") });
  });

  return (
    <section class="form" data-testid="chain-editor">
      <h3>{t("flow.chain")}</h3>
      <p class="muted">
        {t("flow.chainHelpBefore")} <code>/flow</code> {t("flow.chainHelpMiddle")} <code>@chain</code>
        {t("flow.chainHelpAfter")}
      </p>
      {steps.length === 0 && <p class="muted">{t("flow.noSteps")}</p>}
      <ol class="chain-steps">
        {steps.map((step, index) => (
          <li key={index} class="chain-step" data-testid="chain-step" data-step-index={index}>
            <span class="step-index">{index + 1}</span>
            <select
              value={step.agentId}
              disabled={!canEdit}
              onChange={(e) => setSteps(updateStep(steps, index, { agentId: e.currentTarget.value }))}
              data-testid="chain-step-agent"
            >
              <option value="">{t("flow.pickAgent")}</option>
              {memberAgents.map((id) => (
                <option key={id} value={id}>
                  {byId.get(id)?.emoji ?? "🤖"} {byId.get(id)?.name ?? id}
                </option>
              ))}
            </select>
            <label class="check">
              <input
                type="checkbox"
                checked={step.requiresApproval}
                disabled={!canEdit}
                onChange={(e) =>
                  setSteps(updateStep(steps, index, { requiresApproval: e.currentTarget.checked }))
                }
                data-testid="chain-step-approval"
              />
              {t("flow.pauseForApproval")}
            </label>
            <input
              class="chain-instruction"
              placeholder={t("flow.instruction")}
              value={step.instruction ?? ""}
              disabled={!canEdit}
              onInput={(e) => setSteps(updateStep(steps, index, { instruction: e.currentTarget.value }))}
              data-testid="chain-step-instruction"
            />
            {canEdit && (
              <span class="chain-step-buttons">
                <button
                  type="button"
                  class="icon-btn"
                  aria-label={t("flow.moveUp")}
                  disabled={index === 0}
                  onClick={() => setSteps(moveStep(steps, index, -1))}
                  data-testid="chain-step-up"
                >
                  ↑
                </button>
                <button
                  type="button"
                  class="icon-btn"
                  aria-label={t("flow.moveDown")}
                  disabled={index === steps.length - 1}
                  onClick={() => setSteps(moveStep(steps, index, 1))}
                  data-testid="chain-step-down"
                >
                  ↓
                </button>
                <button
                  type="button"
                  class="icon-btn"
                  aria-label={t("flow.removeStep")}
                  onClick={() => setSteps(removeStep(steps, index))}
                  data-testid="chain-step-remove"
                >
                  ×
                </button>
              </span>
            )}
          </li>
        ))}
      </ol>
      {dirty && problem && (
        <p class="form-error" data-testid="chain-problem">
          {problem}
        </p>
      )}
      {canEdit && (
        <div class="form-actions">
          <button
            type="button"
            class="btn"
            onClick={() => setSteps([...steps, { agentId: memberAgents[0] ?? "", requiresApproval: false }])}
            data-testid="chain-add-step"
          >
            {t("flow.addStep")}
          </button>
          <button
            type="button"
            class="btn btn-primary"
            disabled={!dirty || saving || problem !== undefined}
            onClick={() => void save()}
            data-testid="chain-save"
          >
            {t("flow.saveChain")}
          </button>
        </div>
      )}
    </section>
  );
}
