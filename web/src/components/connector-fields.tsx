/**
 * The type-specific inputs of a connector form: the platform's setup steps, plain settings, and
 * write-only secrets, each with what it is and where the platform's console shows it. Fields that
 * apply to one mode only (Feishu's Encrypt Key in webhook mode) show while that mode is chosen.
 */
import { useId } from "preact/hooks";
import { type MessageKey, t } from "../i18n/index.js";
import {
  CONNECTOR_GUIDES,
  type ConnectorType,
  type ConnectorView,
  currentValue,
  type FieldValues,
  visibleFields,
} from "./connector-api.js";

export interface ConnectorFieldsProps {
  type: ConnectorType;
  values: FieldValues;
  onChange: (values: FieldValues) => void;
  /** The stored connector when editing: secrets show "set" and stay unless replaced. */
  stored?: ConnectorView;
  /** What is wrong with a field, by key: the field is marked and says so beside it. */
  errors?: Readonly<Record<string, string>>;
}

function optionLabel(key: MessageKey | undefined, option: string): string {
  return key ? t(key) : option;
}

/** The numbered setup steps of a type. */
export function ConnectorGuide({ type }: { type: ConnectorType }) {
  return (
    <ol class="connector-guide muted" data-testid="connector-guide">
      {CONNECTOR_GUIDES[type].map((step) => (
        <li key={step}>{t(step)}</li>
      ))}
    </ol>
  );
}

/** The inputs for one connector type. */
export function ConnectorFields({ type, values, onChange, stored, errors = {} }: ConnectorFieldsProps) {
  // Several forms show the same fields at once (create, and each editor): ids must stay unique.
  const base = useId();
  const idOf = (key: string) => `${base}-${key}`;
  const set = (key: string, value: string) => onChange({ ...values, [key]: value });
  const secretHint = (key: string) => {
    const secret = stored?.secrets[key];
    return secret?.set ? t("connector.secretSet", { preview: secret.preview ?? "…" }) : undefined;
  };
  const text = (key: string, placeholder: string | undefined) => ({
    id: idOf(key),
    autocomplete: "off",
    value: values[key] ?? "",
    placeholder: placeholder ?? "",
    onInput: (e: { currentTarget: HTMLInputElement }) => set(key, e.currentTarget.value),
    "aria-describedby": errors[key] ? `${idOf(key)}-error ${idOf(key)}-help` : `${idOf(key)}-help`,
    "aria-invalid": errors[key] ? ("true" as const) : undefined,
    "data-testid": `connector-field-${key}`,
  });
  return (
    <div class="form-grid connector-fields">
      {visibleFields(type, values, stored).map((field) => {
        const testId = `connector-field-${field.key}`;
        const help = field.help ? (
          <small class="field-help muted" id={`${idOf(field.key)}-help`}>
            {t(field.help)}
          </small>
        ) : null;
        if (field.input === "checkbox") {
          return (
            <label key={field.key} class="check">
              <input
                type="checkbox"
                checked={(values[field.key] ?? "true") === "true"}
                onChange={(e) => set(field.key, e.currentTarget.checked ? "true" : "false")}
                data-testid={testId}
              />
              {t(field.label)}
            </label>
          );
        }
        return (
          <label key={field.key} class={`field${errors[field.key] ? " invalid" : ""}`} for={idOf(field.key)}>
            <span>
              {t(field.label)}
              {field.required ? " *" : ""}
              {field.hint ? <span class="muted"> ({t(field.hint)})</span> : null}
            </span>
            {field.input === "select" ? (
              <select
                id={idOf(field.key)}
                value={currentValue(field, values, stored)}
                onChange={(e) => set(field.key, e.currentTarget.value)}
                data-testid={testId}
              >
                {field.options?.map((o) => (
                  <option key={o} value={o}>
                    {optionLabel(field.optionLabels?.[o], o)}
                  </option>
                ))}
              </select>
            ) : field.kind === "secret" ? (
              <input type="password" {...text(field.key, secretHint(field.key) ?? field.placeholder)} />
            ) : field.input === "number" ? (
              <input type="number" {...text(field.key, field.placeholder)} />
            ) : (
              <input type="text" {...text(field.key, field.placeholder)} />
            )}
            {errors[field.key] && (
              <span
                class="field-error"
                id={`${idOf(field.key)}-error`}
                role="alert"
                data-testid={`connector-error-${field.key}`}
              >
                {errors[field.key]}
              </span>
            )}
            {help}
          </label>
        );
      })}
    </div>
  );
}

/** Form values showing a stored connector's settings (secrets start empty: write-only). */
export function valuesOf(view: ConnectorView): FieldValues {
  const values: FieldValues = {};
  for (const [key, value] of Object.entries(view.settings)) values[key] = String(value);
  return values;
}
