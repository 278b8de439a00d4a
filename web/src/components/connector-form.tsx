/** Create a connector: type, name, the agent that answers, and the type's settings and secrets. */
import { useId, useRef, useState } from "preact/hooks";
import { ApiError } from "../api.js";
import { useAction, useSelector, useServices } from "../hooks.js";
import { t } from "../i18n/index.js";
import {
  CONNECTOR_LABELS,
  type ConnectorType,
  connectorApi,
  type FieldValues,
  fieldsToBody,
  missingFields,
} from "./connector-api.js";
import { ConnectorFields, ConnectorGuide } from "./connector-fields.js";

const TYPES = Object.keys(CONNECTOR_LABELS) as ConnectorType[];

/** Puts the caret in the first field marked invalid, once it is rendered. */
function focusFirstInvalid(form: HTMLFormElement | null): void {
  requestAnimationFrame(() => form?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
}

/** The create form; `onCreated` reloads the list. */
export function ConnectorCreateForm({ onCreated }: { onCreated: () => void }) {
  const { api, store } = useServices();
  const agents = useSelector((s) => s.agents);
  const [type, setType] = useState<ConnectorType>("telegram");
  const [name, setName] = useState("");
  const [agentId, setAgentId] = useState("");
  const [values, setValues] = useState<FieldValues>({});
  const chosenAgent = agentId || agents[0]?.id || "";
  const form = useRef<HTMLFormElement>(null);
  const nameErrorId = useId();
  // What is wrong with each field, shown beside it (not only as a notice at the top).
  const [errors, setErrors] = useState<Record<string, string>>({});

  const [create, creating] = useAction(async () => {
    const found: Record<string, string> = {};
    if (!name.trim()) found.name = t("connector.nameMissing");
    for (const field of missingFields(type, values))
      found[field.key] = t("connector.fillIn", { field: field.label });
    setErrors(found);
    if (Object.keys(found).length > 0) {
      focusFirstInvalid(form.current);
      return;
    }
    let created: Awaited<ReturnType<ReturnType<typeof connectorApi>["create"]>>;
    try {
      created = await connectorApi(api).create({
        type,
        name: name.trim(),
        agentId: chosenAgent,
        ...fieldsToBody(type, values),
      });
    } catch (err) {
      // The server's field issues (`settings.botToken`, `name`) mark their fields too.
      if (err instanceof ApiError && err.issues.length > 0) {
        setErrors(Object.fromEntries(err.issues.map((i) => [i.path.split(".").pop() ?? i.path, i.message])));
        focusFirstInvalid(form.current);
      }
      throw err;
    }
    setErrors({});
    store.dispatch({
      type: "notice",
      kind: "info",
      text: t("connector.created", { name: created.name }),
    });
    setName("");
    setValues({});
    onCreated();
  });

  return (
    <form
      ref={form}
      class="form"
      data-testid="connector-create"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <h3>{t("connector.new")}</h3>
      <div class="form-grid">
        <label class="field">
          <span>{t("connector.platform")}</span>
          <select
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value as ConnectorType);
              setValues({});
            }}
            data-testid="connector-type"
          >
            {TYPES.map((kind) => (
              <option key={kind} value={kind}>
                {t(CONNECTOR_LABELS[kind])}
              </option>
            ))}
          </select>
        </label>
        <label class={`field${errors.name ? " invalid" : ""}`}>
          <span>{t("connector.name")} *</span>
          <input
            value={name}
            maxLength={60}
            placeholder={t("connector.namePlaceholder")}
            aria-invalid={errors.name ? "true" : undefined}
            aria-describedby={errors.name ? nameErrorId : undefined}
            onInput={(e) => setName(e.currentTarget.value)}
            data-testid="connector-name"
          />
          {errors.name && (
            <span class="field-error" id={nameErrorId} role="alert" data-testid="connector-error-name">
              {errors.name}
            </span>
          )}
        </label>
        <label class="field">
          <span>{t("connector.agent")}</span>
          <select
            value={chosenAgent}
            onChange={(e) => setAgentId(e.currentTarget.value)}
            data-testid="connector-agent"
          >
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.emoji} {a.name} (@{a.id})
              </option>
            ))}
          </select>
        </label>
      </div>
      <ConnectorGuide type={type} />
      <ConnectorFields type={type} values={values} onChange={setValues} errors={errors} />
      <p class="muted">{t("connector.secretsNote")}</p>
      <div class="form-actions">
        <button
          type="submit"
          class="btn btn-primary"
          disabled={creating || !chosenAgent}
          data-testid="connector-create-submit"
        >
          {t("connector.create")}
        </button>
      </div>
    </form>
  );
}
