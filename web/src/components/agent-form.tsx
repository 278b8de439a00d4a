/**
 * Create or edit an agent: identity, model (picker), tools picked from the catalogue (allow or deny),
 * the tools it asks before using, knowledge bases, memory (with a link to what it remembers), skills,
 * and its SOUL.md.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useAction, useReportError, useSelector, useServices } from "../hooks.js";
import {
  AGENT_NAME_MAX,
  type AgentFormErrors,
  type AgentFormValues,
  agentToForm,
  emptyAgentForm,
  formToInput,
  formToPatch,
  toggleName,
  validateAgentForm,
} from "../state/agent-form.js";
import type { AgentRecord, CatalogueEntry, SoulFile } from "../types.js";
import { ExportTemplateButton } from "./export-template-button.js";
import { type KnowledgeBase, knowledgeApi } from "./knowledge-api.js";
import { Link } from "./link.js";
import { ModelPicker } from "./model-picker.js";
import { notifySuccess } from "./notices.js";
import { SoulEditor } from "./soul-editor.js";
import { ToolPicker } from "./tool-picker.js";

export interface AgentFormProps {
  /** Undefined to create a new agent. */
  agent: AgentRecord | undefined;
  canManage: boolean;
}

const GRANT_ONLY_NOTE =
  "Acts with the authority of the person the agent answers, so it is given only when ticked under “Only the tools I pick”.";

type Loaded<T> = { state: "loading" } | { state: "ready"; value: T } | { state: "failed"; reason: string };

/** The tool catalogue and the readable knowledge bases, loaded once per editor. */
function useEditorData(): { tools: Loaded<CatalogueEntry[]>; bases: Loaded<KnowledgeBase[]> } {
  const { api } = useServices();
  const [tools, setTools] = useState<Loaded<CatalogueEntry[]>>({ state: "loading" });
  const [bases, setBases] = useState<Loaded<KnowledgeBase[]>>({ state: "loading" });
  useEffect(() => {
    let live = true;
    api
      .listTools()
      .then((value) => live && setTools({ state: "ready", value }))
      .catch((err: unknown) => live && setTools({ state: "failed", reason: errorText(err) }));
    knowledgeApi(api)
      .list()
      .then((value) => live && setBases({ state: "ready", value: value.bases }))
      .catch((err: unknown) => live && setBases({ state: "failed", reason: errorText(err) }));
    return () => {
      live = false;
    };
  }, [api]);
  return { tools, bases };
}

/** A labelled field whose label, control and error are highlighted together when it is invalid. */
function Field({
  label,
  error,
  errorKey,
  wide,
  narrow,
  htmlFor,
  children,
}: {
  label: string;
  error: string | undefined;
  errorKey: string;
  wide?: boolean;
  narrow?: boolean;
  /** The control's id when it is not a plain input the label can wrap (a combobox with its list). */
  htmlFor?: string;
  children: ComponentChildren;
}) {
  const cls = `field${wide ? " field-wide" : ""}${narrow ? " field-narrow" : ""}${error ? " invalid" : ""}`;
  const message = error && (
    <span class="field-error" role="alert" data-testid={`agent-error-${errorKey}`}>
      {error}
    </span>
  );
  if (htmlFor) {
    return (
      <div class={cls} data-testid={`agent-field-${errorKey}`}>
        <label class="field-label" for={htmlFor}>
          {label}
        </label>
        {children}
        {message}
      </div>
    );
  }
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the `children` it wraps.
    <label class={cls} data-testid={`agent-field-${errorKey}`}>
      <span class="field-label">{label}</span>
      {children}
      {message}
    </label>
  );
}

/** The agent editor. */
export function AgentForm({ agent, canManage }: AgentFormProps) {
  const { api, store, navigate } = useServices();
  const report = useReportError();
  const creating = agent === undefined;
  // Exporting reads the persona, which guests may not.
  const canExport = useSelector((s) => s.auth.phase === "ready" && s.auth.user.role !== "guest");
  const [values, setValues] = useState<AgentFormValues>(() =>
    agent ? agentToForm(agent) : emptyAgentForm(),
  );
  const [soul, setSoul] = useState<SoulFile | undefined>(undefined);
  const [soulText, setSoulText] = useState("");
  const [touched, setTouched] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [denyOpen, setDenyOpen] = useState(() => (agent?.toolsDeny.length ?? 0) > 0);
  const { tools, bases } = useEditorData();

  useEffect(() => {
    setValues(agent ? agentToForm(agent) : emptyAgentForm());
    setTouched(false);
    setConfirmDelete(false);
    setDenyOpen((agent?.toolsDeny.length ?? 0) > 0);
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

  const errors: AgentFormErrors = validateAgentForm(values, creating);
  const shown = (key: keyof AgentFormValues) => (touched ? errors[key] : undefined);
  const set = <K extends keyof AgentFormValues>(key: K, value: AgentFormValues[K]) =>
    setValues((v) => ({ ...v, [key]: value }));

  const [save, saving] = useAction(async () => {
    setTouched(true);
    if (Object.keys(errors).length > 0) {
      // After the re-render that marks them, move to the first highlighted field.
      requestAnimationFrame(() =>
        document.querySelector<HTMLElement>('[data-testid="agent-editor"] .invalid input')?.focus(),
      );
      throw new Error("Fix the highlighted fields first.");
    }
    if (creating) {
      const created = await api.createAgent(formToInput(values, soulText));
      store.dispatch({ type: "agent_saved", agent: created });
      notifySuccess(store, `Agent @${created.id} created.`);
      navigate({ name: "agent", agentId: created.id }, { replace: true });
    } else {
      const updated = await api.updateAgent(agent.id, formToPatch(values, agent));
      store.dispatch({ type: "agent_saved", agent: updated });
      setValues(agentToForm(updated));
      setTouched(false);
      notifySuccess(store, "Agent saved.");
    }
  });

  const [saveSoul, savingSoul] = useAction(async () => {
    if (!agent) return;
    const file = await api.putSoul(agent.id, soulText);
    setSoul(file);
    notifySuccess(store, "SOUL.md saved.");
  });

  const [remove, removing] = useAction(async () => {
    if (!agent) return;
    await api.deleteAgent(agent.id);
    store.dispatch({ type: "agent_removed", agentId: agent.id });
    navigate({ name: "agents" }, { replace: true });
  });

  const catalogue = tools.state === "ready" ? tools.value : [];

  return (
    <div class="agent-editor" data-testid="agent-editor">
      <form
        class="form"
        data-testid="agent-form"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <div class="agent-form-head">
          <h2 class="agent-form-title">{creating ? "New agent" : `${agent.emoji} ${agent.name}`}</h2>
          {!creating && canExport && (
            <ExportTemplateButton
              load={() => api.exportAgent(agent.id)}
              label="Export"
              title="Download this agent (persona and settings) as a template file"
              testId="agent-export"
            />
          )}
        </div>
        <fieldset class="form-grid" disabled={!canManage}>
          <Field label="Id (used as @mention)" error={shown("id")} errorKey="id">
            <input
              value={values.id}
              readOnly={!creating}
              aria-invalid={shown("id") ? "true" : undefined}
              onInput={(e) => set("id", e.currentTarget.value.toLowerCase())}
              data-testid="agent-id"
            />
          </Field>
          <Field label="Name" error={shown("name")} errorKey="name">
            <input
              value={values.name}
              maxLength={AGENT_NAME_MAX}
              aria-invalid={shown("name") ? "true" : undefined}
              onInput={(e) => set("name", e.currentTarget.value)}
              data-testid="agent-name"
            />
          </Field>
          <Field label="Emoji" error={undefined} errorKey="emoji" narrow>
            <input
              value={values.emoji}
              maxLength={8}
              onInput={(e) => set("emoji", e.currentTarget.value)}
              data-testid="agent-emoji"
            />
          </Field>
          <Field label="Model" error={shown("model")} errorKey="model" wide htmlFor="agent-model-input">
            <ModelPicker
              id="agent-model-input"
              value={values.model}
              onChange={(model) => set("model", model)}
              invalid={Boolean(shown("model"))}
              testId="agent-model"
            />
          </Field>

          <Field label="Thinking" error={undefined} errorKey="reasoning">
            <select
              value={values.reasoning}
              onChange={(e) => set("reasoning", e.currentTarget.value as AgentFormValues["reasoning"])}
              data-testid="agent-reasoning"
            >
              <option value="">The model's default</option>
              <option value="off">Off (answer at once)</option>
              <option value="low">Low</option>
              <option value="medium">Medium</option>
              <option value="high">High (slower, more thorough)</option>
            </select>
          </Field>

          <fieldset class={`field field-wide tools-field${shown("toolsAllow") ? " invalid" : ""}`}>
            <legend>Tools</legend>
            <div class="choice-row" role="radiogroup" aria-label="Which tools">
              <label class="check">
                <input
                  type="radio"
                  name="toolsMode"
                  checked={values.toolsMode === "all"}
                  onChange={() => set("toolsMode", "all")}
                  data-testid="agent-tools-all"
                />
                Every tool
              </label>
              <label class="check">
                <input
                  type="radio"
                  name="toolsMode"
                  checked={values.toolsMode === "list"}
                  onChange={() => set("toolsMode", "list")}
                  data-testid="agent-tools-list"
                />
                Only the tools I pick
              </label>
            </div>
            {tools.state === "loading" && <p class="muted">Loading the tool catalogue…</p>}
            {tools.state === "failed" && (
              <p class="form-error">The tool catalogue could not be loaded: {tools.reason}</p>
            )}
            {tools.state === "ready" && values.toolsMode === "list" && (
              <>
                <p class="muted field-help">The agent gets exactly the ticked tools.</p>
                <ToolPicker
                  catalogue={catalogue}
                  picked={values.toolsAllow}
                  onChange={(picked) => set("toolsAllow", picked)}
                  testId="agent-tools-allow"
                  grantOnlyNote={GRANT_ONLY_NOTE}
                />
                {shown("toolsAllow") && (
                  <span class="field-error" role="alert" data-testid="agent-error-toolsAllow">
                    {shown("toolsAllow")}
                  </span>
                )}
              </>
            )}
            {tools.state === "ready" && (
              <details class="deny-list" open={denyOpen} onToggle={(e) => setDenyOpen(e.currentTarget.open)}>
                <summary data-testid="agent-tools-deny-toggle">
                  Never these tools{values.toolsDeny.length > 0 ? ` (${values.toolsDeny.length})` : ""}
                </summary>
                <p class="muted field-help">
                  Ticked tools are withheld even when another setting would give them.
                  {values.toolsMode === "all" && " Grant-only tools are never part of “Every tool”."}
                </p>
                <ToolPicker
                  catalogue={catalogue}
                  picked={values.toolsDeny}
                  onChange={(picked) => set("toolsDeny", picked)}
                  testId="agent-tools-deny"
                  grantOnlyNote={GRANT_ONLY_NOTE}
                />
              </details>
            )}
          </fieldset>

          <Field label="Ask first" error={shown("askFirst")} errorKey="askFirst" wide>
            <textarea
              class="code-input ask-first-input"
              rows={2}
              value={values.askFirst}
              placeholder="e.g. write_file, github_*"
              aria-invalid={shown("askFirst") ? "true" : undefined}
              aria-describedby="agent-ask-first-help"
              onInput={(e) => set("askFirst", e.currentTarget.value)}
              data-testid="agent-ask-first"
            />
            <span id="agent-ask-first-help" class="muted field-help">
              Every call of these tools waits for a person's approval in the chat. Tool names, or a name start
              with * for a group (github_* for all of an MCP server's tools), separated by commas or lines.
              Risky shell commands ask anyway.
            </span>
          </Field>

          <Field label="Answer format" error={shown("answerFormat")} errorKey="answerFormat" wide>
            <textarea
              class="code-input answer-format-input"
              rows={3}
              value={values.answerFormat}
              placeholder='e.g. {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}'
              aria-invalid={shown("answerFormat") ? "true" : undefined}
              aria-describedby="agent-answer-format-help"
              onInput={(e) => set("answerFormat", e.currentTarget.value)}
              data-testid="agent-answer-format"
            />
            <span id="agent-answer-format-help" class="muted field-help">
              Optional. A JSON Schema: every answer of this agent is JSON that follows it (it may use tools
              first). Leave it empty for ordinary answers.
            </span>
          </Field>

          <fieldset class="field field-wide">
            <legend>Knowledge bases it may search (rag_query)</legend>
            <label class="check">
              <input
                type="radio"
                name="knowledgeMode"
                checked={values.knowledgeMode === "all"}
                onChange={() => set("knowledgeMode", "all")}
                data-testid="agent-kb-all"
              />
              Every base the person it answers can read
            </label>
            <label class="check">
              <input
                type="radio"
                name="knowledgeMode"
                checked={values.knowledgeMode === "list"}
                onChange={() => set("knowledgeMode", "list")}
                data-testid="agent-kb-list"
              />
              Only these:
            </label>
            {values.knowledgeMode === "list" && (
              <div class="check-list kb-picker" data-testid="agent-kb-picker">
                {bases.state === "loading" && <p class="muted">Loading knowledge bases…</p>}
                {bases.state === "failed" && <p class="muted">Knowledge bases unavailable: {bases.reason}</p>}
                {bases.state === "ready" && bases.value.length === 0 && (
                  <p class="muted">
                    No knowledge bases yet — <Link to={{ name: "knowledge" }}>create one</Link>.
                  </p>
                )}
                {bases.state === "ready" &&
                  bases.value.map((base) => (
                    <label key={base.name} class="check">
                      <input
                        type="checkbox"
                        checked={values.knowledgeBases.includes(base.name)}
                        onChange={(e) =>
                          set(
                            "knowledgeBases",
                            toggleName(values.knowledgeBases, base.name, e.currentTarget.checked),
                          )
                        }
                        data-testid={`agent-kb-${base.name}`}
                      />
                      <span>
                        <strong>{base.name}</strong>
                        {base.description && <span class="muted"> — {base.description}</span>}
                      </span>
                    </label>
                  ))}
              </div>
            )}
          </fieldset>

          <div class="field field-wide memory-field">
            <label class="check">
              <input
                type="checkbox"
                checked={values.memory}
                onChange={(e) => set("memory", e.currentTarget.checked)}
                data-testid="agent-memory"
              />
              Long-term memory: remembers facts about each person it talks to
            </label>
            {!creating && (
              <Link to={{ name: "memory", agentId: agent.id }} class="memory-link" testId="agent-memory-link">
                See what @{agent.id} remembers about you →
              </Link>
            )}
          </div>
          <Field label="Skills" error={undefined} errorKey="skills" wide>
            <input
              value={values.skills}
              placeholder="skill names, comma separated"
              onInput={(e) => set("skills", e.currentTarget.value)}
              data-testid="agent-skills"
            />
          </Field>
        </fieldset>
        {creating && (
          <div class="field-wide">
            <h3>Persona (SOUL.md)</h3>
            <SoulEditor value={soulText} onChange={setSoulText} readOnly={!canManage} />
          </div>
        )}
        {canManage && (
          <div class="form-actions">
            {!creating && !confirmDelete && (
              <button
                type="button"
                class="btn btn-danger"
                onClick={() => setConfirmDelete(true)}
                data-testid="agent-delete"
              >
                Delete
              </button>
            )}
            {!creating && confirmDelete && (
              <span class="confirm-inline" data-testid="agent-delete-confirm">
                Delete @{agent.id}? Channels keep their messages.
                <button
                  type="button"
                  class="btn btn-danger btn-small"
                  disabled={removing}
                  onClick={() => void remove()}
                  data-testid="agent-delete-yes"
                >
                  Delete
                </button>
                <button type="button" class="btn btn-small" onClick={() => setConfirmDelete(false)}>
                  Keep
                </button>
              </span>
            )}
            <span class="form-actions-spacer" />
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
