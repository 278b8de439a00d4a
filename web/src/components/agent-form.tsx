/** Create or edit an agent: identity, model, tools allow/deny, memory, skills, and its SOUL.md. */

import { useEffect, useState } from "preact/hooks";
import { useAction, useReportError, useServices } from "../hooks.js";
import {
  type AgentFormValues,
  agentToForm,
  emptyAgentForm,
  formToInput,
  formToPatch,
  validateAgentForm,
} from "../state/agent-form.js";
import type { AgentRecord, SoulFile } from "../types.js";
import { askConfirm } from "./confirm-dialog.js";
import { SoulEditor } from "./soul-editor.js";

export interface AgentFormProps {
  /** Undefined to create a new agent. */
  agent: AgentRecord | undefined;
  canManage: boolean;
}

/** The agent editor. */
export function AgentForm({ agent, canManage }: AgentFormProps) {
  const { api, store, navigate } = useServices();
  const report = useReportError();
  const creating = agent === undefined;
  const [values, setValues] = useState<AgentFormValues>(() =>
    agent ? agentToForm(agent) : emptyAgentForm(),
  );
  const [soul, setSoul] = useState<SoulFile | undefined>(undefined);
  const [soulText, setSoulText] = useState("");
  const [touched, setTouched] = useState(false);

  useEffect(() => {
    setValues(agent ? agentToForm(agent) : emptyAgentForm());
    setTouched(false);
    setSoul(undefined);
    setSoulText("");
    if (!agent) return;
    api
      .getSoul(agent.id)
      .then((file) => {
        setSoul(file);
        setSoulText(file.content);
      })
      .catch(report);
    // Reload only when another agent is opened, not on every save of this one.
  }, [agent?.id]);

  const errors = validateAgentForm(values, creating);
  const set = <K extends keyof AgentFormValues>(key: K, value: AgentFormValues[K]) =>
    setValues({ ...values, [key]: value });

  const [save, saving] = useAction(async () => {
    setTouched(true);
    if (Object.keys(errors).length > 0) throw new Error("Fix the highlighted fields first.");
    if (creating) {
      const created = await api.createAgent(formToInput(values, soulText));
      store.dispatch({ type: "agent_saved", agent: created });
      store.dispatch({ type: "notice", kind: "info", text: `Agent @${created.id} created.` });
      navigate({ name: "agent", agentId: created.id }, { replace: true });
    } else {
      const updated = await api.updateAgent(agent.id, formToPatch(values));
      store.dispatch({ type: "agent_saved", agent: updated });
      store.dispatch({ type: "notice", kind: "info", text: "Agent saved." });
    }
  });

  const [saveSoul, savingSoul] = useAction(async () => {
    if (!agent) return;
    const file = await api.putSoul(agent.id, soulText);
    setSoul(file);
    store.dispatch({ type: "notice", kind: "info", text: "SOUL.md saved." });
  });

  const [remove, removing] = useAction(async () => {
    if (
      !agent ||
      !(await askConfirm({
        title: `Delete the agent @${agent.id}?`,
        message: "Channels keep their messages.",
      }))
    )
      return;
    await api.deleteAgent(agent.id);
    store.dispatch({ type: "agent_removed", agentId: agent.id });
    navigate({ name: "agents" }, { replace: true });
  });

  const fieldError = (key: keyof AgentFormValues) =>
    touched && errors[key] ? (
      <span class="field-error" data-testid={`agent-error-${key}`}>
        {errors[key]}
      </span>
    ) : null;

  return (
    <div class="agent-editor" data-testid="agent-editor">
      <form
        class="form"
        data-testid="agent-form"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <h2>{creating ? "New agent" : `${agent.emoji} ${agent.name}`}</h2>
        <fieldset class="form-grid" disabled={!canManage}>
          <label class="field">
            <span>Id (used as @mention)</span>
            <input
              value={values.id}
              readOnly={!creating}
              onInput={(e) => set("id", e.currentTarget.value.toLowerCase())}
              data-testid="agent-id"
            />
            {fieldError("id")}
          </label>
          <label class="field">
            <span>Name</span>
            <input
              value={values.name}
              onInput={(e) => set("name", e.currentTarget.value)}
              data-testid="agent-name"
            />
            {fieldError("name")}
          </label>
          <label class="field field-narrow">
            <span>Emoji</span>
            <input
              value={values.emoji}
              maxLength={8}
              onInput={(e) => set("emoji", e.currentTarget.value)}
              data-testid="agent-emoji"
            />
          </label>
          <label class="field">
            <span>Model</span>
            <input
              value={values.model}
              placeholder="provider:model — empty for the default"
              onInput={(e) => set("model", e.currentTarget.value)}
              data-testid="agent-model"
            />
            {fieldError("model")}
          </label>
          <fieldset class="field field-wide">
            <legend>Tools</legend>
            <label class="check">
              <input
                type="radio"
                name="toolsMode"
                checked={values.toolsMode === "all"}
                onChange={() => set("toolsMode", "all")}
                data-testid="agent-tools-all"
              />
              All built-in tools
            </label>
            <label class="check">
              <input
                type="radio"
                name="toolsMode"
                checked={values.toolsMode === "list"}
                onChange={() => set("toolsMode", "list")}
                data-testid="agent-tools-list"
              />
              Only these:
            </label>
            {values.toolsMode === "list" && (
              <input
                value={values.toolsAllow}
                placeholder="read_file, web_search, …"
                onInput={(e) => set("toolsAllow", e.currentTarget.value)}
                data-testid="agent-tools-allow"
              />
            )}
            <label class="field">
              <span>Never these (deny)</span>
              <input
                value={values.toolsDeny}
                placeholder="run_command, …"
                onInput={(e) => set("toolsDeny", e.currentTarget.value)}
                data-testid="agent-tools-deny"
              />
            </label>
          </fieldset>
          <label class="check field-wide">
            <input
              type="checkbox"
              checked={values.memory}
              onChange={(e) => set("memory", e.currentTarget.checked)}
              data-testid="agent-memory"
            />
            Long-term memory
          </label>
          <label class="field field-wide">
            <span>Skills</span>
            <input
              value={values.skills}
              placeholder="skill names, comma separated"
              onInput={(e) => set("skills", e.currentTarget.value)}
              data-testid="agent-skills"
            />
          </label>
        </fieldset>
        {creating && (
          <div class="field-wide">
            <h3>Persona (SOUL.md)</h3>
            <SoulEditor value={soulText} onChange={setSoulText} readOnly={!canManage} />
          </div>
        )}
        {canManage && (
          <div class="form-actions">
            {!creating && (
              <button
                type="button"
                class="btn btn-danger"
                disabled={removing}
                onClick={() => void remove()}
                data-testid="agent-delete"
              >
                Delete
              </button>
            )}
            <button type="submit" class="btn btn-primary" disabled={saving} data-testid="agent-save">
              {creating ? "Create agent" : "Save"}
            </button>
          </div>
        )}
      </form>
      {!creating && (
        <section class="form soul-section">
          <h3>Persona (SOUL.md)</h3>
          {soul ? (
            <SoulEditor
              value={soulText}
              onChange={setSoulText}
              status={soul.status === "missing" && soulText === "" ? "missing" : undefined}
              readOnly={!canManage}
            />
          ) : (
            <p class="muted">Loading…</p>
          )}
          {canManage && soul && (
            <div class="form-actions">
              <button
                type="button"
                class="btn btn-primary"
                disabled={savingSoul || soulText === soul.content}
                onClick={() => void saveSoul()}
                data-testid="soul-save"
              >
                Save SOUL.md
              </button>
            </div>
          )}
        </section>
      )}
    </div>
  );
}
