/**
 * Create or edit an agent: identity, model (picker), tools picked from the catalogue (allow or deny),
 * the tools it asks before using, knowledge bases, memory (with a link to what it remembers), skills,
 * and its SOUL.md.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { errorText } from "../api.js";
import { useAction, useReportError, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
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
import { VisibilityField, visibilityOf, visibilityPatch } from "./visibility-field.js";

export interface AgentFormProps {
  /** Undefined to create a new agent. */
  agent: AgentRecord | undefined;
  canManage: boolean;
}

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
  const [visibility, setVisibility] = useState(() => visibilityOf(agent));

  useEffect(() => {
    setValues(agent ? agentToForm(agent) : emptyAgentForm());
    setVisibility(visibilityOf(agent));
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
      throw new Error(t("agents.fixFields"));
    }
    if (creating) {
      const created = await api.createAgent({
        ...formToInput(values, soulText),
        ...visibilityPatch(visibility, undefined),
      });
      store.dispatch({ type: "agent_saved", agent: created });
      notifySuccess(store, t("agents.created", { id: created.id }));
      navigate({ name: "agent", agentId: created.id }, { replace: true });
    } else {
      // Who sees it is sent only when changed: others may edit an agent they may not re-share.
      const updated = await api.updateAgent(agent.id, {
        ...formToPatch(values, agent),
        ...visibilityPatch(visibility, agent),
      });
      store.dispatch({ type: "agent_saved", agent: updated });
      setValues(agentToForm(updated));
      setVisibility(visibilityOf(updated));
      setTouched(false);
      notifySuccess(store, t("agents.saved"));
    }
  });

  const [saveSoul, savingSoul] = useAction(async () => {
    if (!agent) return;
    const file = await api.putSoul(agent.id, soulText);
    setSoul(file);
    notifySuccess(store, t("agents.soulSaved"));
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
          <h2 class="agent-form-title">{creating ? t("agents.newTitle") : `${agent.emoji} ${agent.name}`}</h2>
          {!creating && canExport && (
            <ExportTemplateButton
              load={() => api.exportAgent(agent.id)}
              label={t("agents.export")}
              title={t("agents.exportTitle")}
              testId="agent-export"
            />
          )}
        </div>
        <fieldset class="form-grid" disabled={!canManage}>
          <Field label={t("agents.field.id")} error={shown("id")} errorKey="id">
            <input
              value={values.id}
              readOnly={!creating}
              aria-invalid={shown("id") ? "true" : undefined}
              onInput={(e) => set("id", e.currentTarget.value.toLowerCase())}
              data-testid="agent-id"
            />
          </Field>
          <Field label={t("agents.field.name")} error={shown("name")} errorKey="name">
            <input
              value={values.name}
              maxLength={AGENT_NAME_MAX}
              aria-invalid={shown("name") ? "true" : undefined}
              onInput={(e) => set("name", e.currentTarget.value)}
              data-testid="agent-name"
            />
          </Field>
          <Field label={t("agents.field.emoji")} error={undefined} errorKey="emoji" narrow>
            <input
              value={values.emoji}
              maxLength={8}
              onInput={(e) => set("emoji", e.currentTarget.value)}
              data-testid="agent-emoji"
            />
          </Field>
          <Field
            label={t("agents.field.model")}
            error={shown("model")}
            errorKey="model"
            wide
            htmlFor="agent-model-input"
          >
            <ModelPicker
              id="agent-model-input"
              value={values.model}
              onChange={(model) => set("model", model)}
              invalid={Boolean(shown("model"))}
              testId="agent-model"
            />
          </Field>

          <Field label={t("agents.field.thinking")} error={undefined} errorKey="reasoning">
            <select
              value={values.reasoning}
              onChange={(e) => set("reasoning", e.currentTarget.value as AgentFormValues["reasoning"])}
              data-testid="agent-reasoning"
            >
              <option value="">{t("agents.thinking.default")}</option>
              <option value="off">{t("agents.thinking.off")}</option>
              <option value="low">{t("agents.thinking.low")}</option>
              <option value="medium">{t("agents.thinking.medium")}</option>
              <option value="high">{t("agents.thinking.high")}</option>
            </select>
          </Field>

          <fieldset class={`field field-wide tools-field${shown("toolsAllow") ? " invalid" : ""}`}>
            <legend>{t("agents.tools")}</legend>
            <div class="choice-row" role="radiogroup" aria-label={t("agents.toolsWhich")}>
              <label class="check">
                <input
                  type="radio"
                  name="toolsMode"
                  checked={values.toolsMode === "all"}
                  onChange={() => set("toolsMode", "all")}
                  data-testid="agent-tools-all"
                />
                {t("agents.toolsAll")}
              </label>
              <label class="check">
                <input
                  type="radio"
                  name="toolsMode"
                  checked={values.toolsMode === "list"}
                  onChange={() => set("toolsMode", "list")}
                  data-testid="agent-tools-list"
                />
                {t("agents.toolsList")}
              </label>
            </div>
            {tools.state === "loading" && <p class="muted">{t("agents.toolsLoading")}</p>}
            {tools.state === "failed" && (
              <p class="form-error">{t("agents.toolsFailed", { reason: tools.reason })}</p>
            )}
            {tools.state === "ready" && values.toolsMode === "list" && (
              <>
                <p class="muted field-help">{t("agents.toolsListHelp")}</p>
                <ToolPicker
                  catalogue={catalogue}
                  picked={values.toolsAllow}
                  onChange={(picked) => set("toolsAllow", picked)}
                  testId="agent-tools-allow"
                  grantOnlyNote={t("agents.grantOnlyNote")}
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
                  {t("agents.toolsDeny")}
                  {values.toolsDeny.length > 0 ? ` (${values.toolsDeny.length})` : ""}
                </summary>
                <p class="muted field-help">
                  {t("agents.toolsDenyHelp")}
                  {values.toolsMode === "all" && ` ${t("agents.toolsDenyGrantOnly")}`}
                </p>
                <ToolPicker
                  catalogue={catalogue}
                  picked={values.toolsDeny}
                  onChange={(picked) => set("toolsDeny", picked)}
                  testId="agent-tools-deny"
                  grantOnlyNote={t("agents.grantOnlyNote")}
                />
              </details>
            )}
          </fieldset>

          <Field label={t("agents.field.askFirst")} error={shown("askFirst")} errorKey="askFirst" wide>
            <textarea
              class="code-input ask-first-input"
              rows={2}
              value={values.askFirst}
              placeholder={t("agents.askFirstPlaceholder")}
              aria-invalid={shown("askFirst") ? "true" : undefined}
              aria-describedby="agent-ask-first-help"
              onInput={(e) => set("askFirst", e.currentTarget.value)}
              data-testid="agent-ask-first"
            />
            <span id="agent-ask-first-help" class="muted field-help">
              {t("agents.askFirstHelp")}
            </span>
          </Field>

          <Field label={t("agents.field.network")} error={undefined} errorKey="networkMode">
            <select
              value={values.networkMode}
              onChange={(e) => set("networkMode", e.currentTarget.value as AgentFormValues["networkMode"])}
              aria-describedby="agent-network-help"
              data-testid="agent-network"
            >
              <option value="">{t("agents.network.default")}</option>
              <option value="off">{t("agents.network.off")}</option>
              <option value="allow">{t("agents.network.allow")}</option>
              <option value="on">{t("agents.network.on")}</option>
            </select>
            <span id="agent-network-help" class="muted field-help">
              {t("agents.networkHelp")}
            </span>
          </Field>

          {values.networkMode === "allow" && (
            <Field
              label={t("agents.field.networkHosts")}
              error={shown("networkHosts")}
              errorKey="networkHosts"
              wide
            >
              <textarea
                class="code-input"
                rows={2}
                value={values.networkHosts}
                placeholder={t("agents.networkHostsPlaceholder")}
                aria-invalid={shown("networkHosts") ? "true" : undefined}
                onInput={(e) => set("networkHosts", e.currentTarget.value)}
                data-testid="agent-network-hosts"
              />
            </Field>
          )}

          <Field
            label={t("agents.field.answerFormat")}
            error={shown("answerFormat")}
            errorKey="answerFormat"
            wide
          >
            <textarea
              class="code-input answer-format-input"
              rows={3}
              value={values.answerFormat}
              placeholder={t("agents.answerFormatPlaceholder", {
                example:
                  '{"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}',
              })}
              aria-invalid={shown("answerFormat") ? "true" : undefined}
              aria-describedby="agent-answer-format-help"
              onInput={(e) => set("answerFormat", e.currentTarget.value)}
              data-testid="agent-answer-format"
            />
            <span id="agent-answer-format-help" class="muted field-help">
              {t("agents.answerFormatHelp")}
            </span>
          </Field>

          <fieldset class="field field-wide">
            <legend>{t("agents.kb")}</legend>
            <label class="check">
              <input
                type="radio"
                name="knowledgeMode"
                checked={values.knowledgeMode === "all"}
                onChange={() => set("knowledgeMode", "all")}
                data-testid="agent-kb-all"
              />
              {t("agents.kbAll")}
            </label>
            <label class="check">
              <input
                type="radio"
                name="knowledgeMode"
                checked={values.knowledgeMode === "list"}
                onChange={() => set("knowledgeMode", "list")}
                data-testid="agent-kb-list"
              />
              {t("agents.kbList")}
            </label>
            {values.knowledgeMode === "list" && (
              <div class="check-list kb-picker" data-testid="agent-kb-picker">
                {bases.state === "loading" && <p class="muted">{t("agents.kbLoading")}</p>}
                {bases.state === "failed" && (
                  <p class="muted">{t("agents.kbFailed", { reason: bases.reason })}</p>
                )}
                {bases.state === "ready" && bases.value.length === 0 && (
                  <p class="muted">
                    {t("agents.kbNone")} <Link to={{ name: "knowledge" }}>{t("agents.kbCreate")}</Link>
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
              {t("agents.memory")}
            </label>
            {!creating && (
              <Link to={{ name: "memory", agentId: agent.id }} class="memory-link" testId="agent-memory-link">
                {t("agents.memoryLink", { id: agent.id })}
              </Link>
            )}
          </div>
          <Field label={t("agents.field.skills")} error={undefined} errorKey="skills" wide>
            <input
              value={values.skills}
              placeholder={t("agents.skillsPlaceholder")}
              onInput={(e) => set("skills", e.currentTarget.value)}
              data-testid="agent-skills"
            />
          </Field>
          <VisibilityField
            resource={agent}
            value={visibility}
            onChange={setVisibility}
            name="agentVisibility"
            testId="agent-visibility"
          />
        </fieldset>
        {creating && (
          <div class="field-wide">
            <h3>{t("agents.persona")}</h3>
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
                {t("common.delete")}
              </button>
            )}
            {!creating && confirmDelete && (
              <span class="confirm-inline" data-testid="agent-delete-confirm">
                {t("agents.deleteConfirm", { id: agent.id })}
                <button
                  type="button"
                  class="btn btn-danger btn-small"
                  disabled={removing}
                  onClick={() => void remove()}
                  data-testid="agent-delete-yes"
                >
                  {t("common.delete")}
                </button>
                <button type="button" class="btn btn-small" onClick={() => setConfirmDelete(false)}>
                  {t("agents.keep")}
                </button>
              </span>
            )}
            <span class="form-actions-spacer" />
            <button type="submit" class="btn btn-primary" disabled={saving} data-testid="agent-save">
              {creating ? t("agents.create") : t("agents.save")}
            </button>
          </div>
        )}
      </form>
      {!creating && (
        <section class="form soul-section">
          <h3>{t("agents.persona")}</h3>
          {soul ? (
            <SoulEditor
              value={soulText}
              onChange={setSoulText}
              status={soul.status === "missing" && soulText === "" ? "missing" : undefined}
              readOnly={!canManage}
            />
          ) : (
            <p class="muted">{t("common.loading")}</p>
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
                {t("agents.saveSoul")}
              </button>
            </div>
          )}
        </section>
      )}
    </div>
  );
}
