/**
 * The connectors API (`/api/connectors`) for the web app: typed calls over the shared ApiClient, the
 * fields each connector type asks for (plain settings, and secrets that are write-only), and the
 * form's conversion to a request body.
 */

import type { ConnectorType, ConnectorView } from "../../../src/connectors/types.js";
import type { ApiClient } from "../api.js";

export type { ConnectorType, ConnectorView };

export interface ConnectorBody {
  type?: ConnectorType;
  name?: string;
  agentId?: string;
  settings?: Record<string, string | number | boolean>;
  secrets?: Record<string, string>;
}

export interface ConnectorField {
  key: string;
  label: string;
  /** Settings are shown and edited; secrets are write-only. */
  kind: "setting" | "secret";
  input: "text" | "url" | "number" | "select" | "checkbox";
  options?: string[];
  placeholder?: string;
  required?: boolean;
  hint?: string;
}

export const CONNECTOR_LABELS: Record<ConnectorType, string> = {
  telegram: "Telegram",
  webhook: "Webhook",
  feishu: "Feishu / Lark",
};

/** What each type asks for, in form order. */
export const CONNECTOR_FIELDS: Record<ConnectorType, ConnectorField[]> = {
  telegram: [
    {
      key: "botToken",
      label: "Bot token",
      kind: "secret",
      input: "text",
      required: true,
      placeholder: "123456:ABC… from @BotFather",
    },
    { key: "mode", label: "Receive by", kind: "setting", input: "select", options: ["polling", "webhook"] },
    {
      key: "publicUrl",
      label: "Public URL of this server",
      kind: "setting",
      input: "url",
      placeholder: "https://dimsum.example.com",
      hint: "webhook mode only",
    },
    { key: "streaming", label: "Stream answers (edit a preview)", kind: "setting", input: "checkbox" },
    {
      key: "baseUrl",
      label: "Bot API URL",
      kind: "setting",
      input: "url",
      placeholder: "https://api.telegram.org",
    },
  ],
  webhook: [
    {
      key: "outboundUrl",
      label: "Outbound URL",
      kind: "setting",
      input: "url",
      required: true,
      placeholder: "https://example.com/dimsum",
    },
    {
      key: "secret",
      label: "Shared secret (HMAC-SHA256)",
      kind: "secret",
      input: "text",
      required: true,
      hint: "16+ characters",
    },
    {
      key: "maxChars",
      label: "Characters per message",
      kind: "setting",
      input: "number",
      placeholder: "20000",
    },
  ],
  feishu: [
    { key: "appId", label: "App ID", kind: "setting", input: "text", required: true, placeholder: "cli_…" },
    { key: "appSecret", label: "App secret", kind: "secret", input: "text", required: true },
    { key: "encryptKey", label: "Encrypt Key", kind: "secret", input: "text", required: true },
    { key: "verificationToken", label: "Verification Token", kind: "secret", input: "text", required: true },
    {
      key: "baseUrl",
      label: "Open API URL",
      kind: "setting",
      input: "url",
      placeholder: "https://open.feishu.cn (Lark: https://open.larksuite.com)",
    },
  ],
};

/** Form values by field key (checkboxes as "true"/"false"). */
export type FieldValues = Record<string, string>;

/** The settings and secrets of filled-in fields; empty fields are left out (secrets: kept). */
export function fieldsToBody(
  type: ConnectorType,
  values: FieldValues,
): Pick<ConnectorBody, "settings" | "secrets"> {
  const settings: Record<string, string | number | boolean> = {};
  const secrets: Record<string, string> = {};
  for (const field of CONNECTOR_FIELDS[type]) {
    const raw = values[field.key]?.trim() ?? "";
    if (raw === "") continue;
    if (field.kind === "secret") secrets[field.key] = raw;
    else if (field.input === "checkbox") settings[field.key] = raw === "true";
    else if (field.input === "number") settings[field.key] = Number(raw);
    else settings[field.key] = raw;
  }
  const body: Pick<ConnectorBody, "settings" | "secrets"> = {};
  if (Object.keys(settings).length > 0) body.settings = settings;
  if (Object.keys(secrets).length > 0) body.secrets = secrets;
  return body;
}

/** Required fields still empty (secrets count as filled when already stored). */
export function missingFields(type: ConnectorType, values: FieldValues, stored?: ConnectorView): string[] {
  return CONNECTOR_FIELDS[type]
    .filter(
      (f) => f.required && !(values[f.key]?.trim() || (f.kind === "secret" && stored?.secrets[f.key]?.set)),
    )
    .map((f) => f.label);
}

const enc = encodeURIComponent;

/** Typed calls of the connectors API. */
export function connectorApi(api: ApiClient) {
  return {
    list: () => api.request<ConnectorView[]>("GET", "/api/connectors"),
    create: (body: ConnectorBody) => api.request<ConnectorView>("POST", "/api/connectors", body),
    update: (id: string, body: ConnectorBody) =>
      api.request<ConnectorView>("PATCH", `/api/connectors/${enc(id)}`, body),
    remove: (id: string) => api.request<void>("DELETE", `/api/connectors/${enc(id)}`),
    start: (id: string) => api.request<ConnectorView>("POST", `/api/connectors/${enc(id)}/start`),
    stop: (id: string) => api.request<ConnectorView>("POST", `/api/connectors/${enc(id)}/stop`),
    test: (id: string) =>
      api.request<{ ok: boolean; message: string }>("POST", `/api/connectors/${enc(id)}/test`),
  };
}
