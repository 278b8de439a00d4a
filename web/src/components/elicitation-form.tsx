/**
 * An MCP server's request for input, inline in the run that asked: form mode draws the requested
 * schema's fields (text, number, yes/no, choices) with their defaults and checks them before
 * sending; URL mode shows the page to open. Accept, Decline or Cancel answer the server.
 */
import { useState } from "preact/hooks";
import {
  type FormField,
  type FormValue,
  formFields,
  validateForm,
} from "../../../src/mcp/elicitation-form.js";
import { t } from "../i18n/index.js";
import type { ElicitationAnswer, ElicitationView } from "../types.js";
import { useRequestAnswer } from "./use-request-answer.js";

type Values = Record<string, FormValue | undefined>;

function initialValues(fields: FormField[]): Values {
  const values: Values = {};
  for (const field of fields) {
    if (field.default !== undefined) values[field.name] = field.default;
    else if (field.type === "boolean") values[field.name] = false;
    else if (field.type === "multi-enum") values[field.name] = [];
  }
  return values;
}

/** What is sent: empty optional fields left out. */
function contentOf(values: Values): NonNullable<ElicitationAnswer["content"]> {
  const out: NonNullable<ElicitationAnswer["content"]> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === "") continue;
    out[name] = value;
  }
  return out;
}

function inputType(field: FormField): "number" | "email" | "url" | "date" | "text" {
  if (field.type === "number" || field.type === "integer") return "number";
  if (field.format === "email") return "email";
  if (field.format === "uri" || field.format === "url") return "url";
  if (field.format === "date") return "date";
  return "text";
}

function FieldInput({
  field,
  value,
  error,
  id,
  onChange,
}: {
  field: FormField;
  value: FormValue | undefined;
  error: string | undefined;
  id: string;
  onChange: (value: FormValue | undefined) => void;
}) {
  const described = field.description || error ? `${id}-help` : undefined;
  const label = (
    <span class="elicit-label">
      {field.label}
      {field.required && (
        <span class="elicit-required" title={t("elicit.required")}>
          {" "}
          *
        </span>
      )}
    </span>
  );
  const help = described && (
    <span
      id={described}
      class={error ? "elicit-error" : "muted elicit-help"}
      data-testid={error ? "elicit-error" : undefined}
    >
      {error ?? field.description}
    </span>
  );
  if (field.type === "boolean") {
    return (
      <label class="elicit-field elicit-check" data-field={field.name}>
        <input
          type="checkbox"
          checked={value === true}
          onChange={(e) => onChange((e.currentTarget as HTMLInputElement).checked)}
          aria-describedby={described}
          data-testid={`elicit-input-${field.name}`}
        />
        {label}
        {help}
      </label>
    );
  }
  if (field.type === "enum") {
    return (
      <label class="elicit-field" data-field={field.name}>
        {label}
        <select
          value={typeof value === "string" ? value : ""}
          onChange={(e) => onChange((e.currentTarget as HTMLSelectElement).value || undefined)}
          aria-invalid={error ? true : undefined}
          aria-describedby={described}
          data-testid={`elicit-input-${field.name}`}
        >
          {(!field.required || value === undefined) && <option value="">{t("elicit.choose")}</option>}
          {(field.options ?? []).map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
        {help}
      </label>
    );
  }
  if (field.type === "multi-enum") {
    const picked = Array.isArray(value) ? value : [];
    return (
      <fieldset class="elicit-field" data-field={field.name}>
        <legend>{label}</legend>
        {(field.options ?? []).map((o) => (
          <label key={o.value} class="elicit-check">
            <input
              type="checkbox"
              checked={picked.includes(o.value)}
              onChange={(e) =>
                onChange(
                  (e.currentTarget as HTMLInputElement).checked
                    ? [...picked, o.value]
                    : picked.filter((p) => p !== o.value),
                )
              }
            />
            {o.label}
          </label>
        ))}
        {help}
      </fieldset>
    );
  }
  const numeric = field.type === "number" || field.type === "integer";
  return (
    <label class="elicit-field" data-field={field.name}>
      {label}
      <input
        // Preact types each input type apart; the attributes used here suit all of these.
        type={inputType(field) as "text"}
        value={value === undefined ? "" : String(value)}
        onInput={(e) => {
          const text = (e.currentTarget as HTMLInputElement).value;
          onChange(text === "" ? undefined : numeric && Number.isFinite(Number(text)) ? Number(text) : text);
        }}
        {...(field.minimum !== undefined ? { min: field.minimum } : {})}
        {...(field.maximum !== undefined ? { max: field.maximum } : {})}
        {...(field.type === "integer" ? { step: 1 } : numeric ? { step: "any" } : {})}
        aria-invalid={error ? true : undefined}
        aria-describedby={described}
        data-testid={`elicit-input-${field.name}`}
      />
      {help}
    </label>
  );
}

/** The inline request for input of one run. */
export function ElicitationForm({ request }: { request: ElicitationView }) {
  const fields =
    request.mode === "form" && request.requestedSchema ? formFields(request.requestedSchema) : [];
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [opened, setOpened] = useState(false);
  const { send, sending, problem, card: form } = useRequestAnswer<HTMLFormElement>(request);
  const accept = (e: Event) => {
    e.preventDefault();
    if (request.mode === "url") {
      void send({ action: "accept" });
      return;
    }
    const content = contentOf(values);
    const found = request.requestedSchema ? validateForm(request.requestedSchema, content) : {};
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    void send({ action: "accept", content });
  };

  return (
    <form
      ref={form}
      class="elicit"
      data-testid="elicitation"
      data-mode={request.mode}
      data-elicitation-id={request.id}
      onSubmit={accept}
      noValidate
    >
      <p class="elicit-from muted">
        <span aria-hidden="true">🔌 </span>
        <strong>{request.server}</strong> {t("elicit.asksYou")}
      </p>
      <p class="elicit-message" data-testid="elicitation-message">
        {request.message}
      </p>
      {request.mode === "url" && request.url && (
        <p class="elicit-url">
          <a
            href={request.url}
            target="_blank"
            rel="noopener noreferrer"
            class="btn btn-small"
            data-testid="elicitation-open"
            onClick={() => setOpened(true)}
          >
            {t("elicit.open", { host: new URL(request.url).host })}
          </a>
          <span class="muted elicit-url-text">{request.url}</span>
        </p>
      )}
      {fields.length > 0 && (
        <div class="elicit-fields">
          {fields.map((field) => (
            <FieldInput
              key={field.name}
              field={field}
              value={values[field.name]}
              error={errors[field.name]}
              id={`elicit-${request.id}-${field.name}`}
              onChange={(value) => setValues((v) => ({ ...v, [field.name]: value }))}
            />
          ))}
        </div>
      )}
      {problem && (
        <p class="elicit-error" role="alert" data-testid="elicitation-problem">
          {problem}
        </p>
      )}
      <div class="elicit-actions">
        <button
          type="submit"
          class="btn btn-small btn-primary"
          disabled={sending}
          data-testid="elicitation-accept"
        >
          {request.mode === "url" ? (opened ? t("elicit.done") : t("elicit.imDone")) : t("elicit.accept")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={sending}
          onClick={() => void send({ action: "decline" })}
          data-testid="elicitation-decline"
        >
          {t("sampling.decline")}
        </button>
        <button
          type="button"
          class="btn btn-small"
          disabled={sending}
          onClick={() => void send({ action: "cancel" })}
          data-testid="elicitation-cancel"
        >
          {t("common.cancel")}
        </button>
      </div>
    </form>
  );
}
