/**
 * The connectors API (`/api/connectors`) for the web app: typed calls over the shared ApiClient, the
 * fields each connector type asks for (plain settings, and secrets that are write-only), and the
 * form's conversion to a request body.
 */

import type { ConnectorType, ConnectorView } from "../../../src/connectors/types.js";
import type { ApiClient } from "../api.js";
import { type MessageKey, t } from "../i18n/index.js";

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
  label: MessageKey;
  /** Settings are shown and edited; secrets are write-only. */
  kind: "setting" | "secret";
  input: "text" | "url" | "number" | "select" | "checkbox";
  options?: string[];
  /** How each option is shown (default: the option itself). */
  optionLabels?: Record<string, MessageKey>;
  placeholder?: string;
  required?: boolean;
  hint?: MessageKey;
  /** What it is and where to find it in the platform's console. */
  help?: MessageKey;
  /** Shown (and required) only while another field has one of these values. */
  showWhen?: { key: string; is: string[] };
}

export const CONNECTOR_LABELS: Record<ConnectorType, MessageKey> = {
  telegram: "connector.type.telegram",
  webhook: "connector.type.webhook",
  feishu: "connector.type.feishu",
  dingtalk: "connector.type.dingtalk",
  wecom: "connector.type.wecom",
};

/** Setup steps shown above each type's fields. */
export const CONNECTOR_GUIDES: Record<ConnectorType, MessageKey[]> = {
  telegram: ["connector.telegram.guide1", "connector.telegram.guide2"],
  webhook: ["connector.webhook.guide1"],
  feishu: [
    "connector.feishu.guide1",
    "connector.feishu.guide2",
    "connector.feishu.guide3",
    "connector.feishu.guide4",
  ],
  dingtalk: [
    "connector.dingtalk.guide1",
    "connector.dingtalk.guide2",
    "connector.dingtalk.guide3",
    "connector.dingtalk.guide4",
    "connector.dingtalk.guide5",
  ],
  wecom: ["connector.wecom.guide1", "connector.wecom.guide2", "connector.wecom.guide3"],
};

/** What each type asks for, in form order. */
export const CONNECTOR_FIELDS: Record<ConnectorType, ConnectorField[]> = {
  telegram: [
    {
      key: "botToken",
      label: "connector.telegram.botToken.label",
      kind: "secret",
      input: "text",
      required: true,
      placeholder: "123456:ABC…",
      help: "connector.telegram.botToken.help",
    },
    {
      key: "mode",
      label: "connector.telegram.mode.label",
      kind: "setting",
      input: "select",
      options: ["polling", "webhook"],
      optionLabels: {
        polling: "connector.telegram.mode.option.polling",
        webhook: "connector.telegram.mode.option.webhook",
      },
      help: "connector.telegram.mode.help",
    },
    {
      key: "publicUrl",
      label: "connector.telegram.publicUrl.label",
      kind: "setting",
      input: "url",
      required: true,
      placeholder: "https://dimsum.example.com",
      help: "connector.telegram.publicUrl.help",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    { key: "streaming", label: "connector.telegram.streaming.label", kind: "setting", input: "checkbox" },
    {
      key: "baseUrl",
      label: "connector.telegram.baseUrl.label",
      kind: "setting",
      input: "url",
      placeholder: "https://api.telegram.org",
      help: "connector.telegram.baseUrl.help",
    },
  ],
  webhook: [
    {
      key: "outboundUrl",
      label: "connector.webhook.outboundUrl.label",
      kind: "setting",
      input: "url",
      required: true,
      placeholder: "https://example.com/dimsum",
      help: "connector.webhook.outboundUrl.help",
    },
    {
      key: "secret",
      label: "connector.webhook.secret.label",
      kind: "secret",
      input: "text",
      required: true,
      hint: "connector.webhook.secret.hint",
      help: "connector.webhook.secret.help",
    },
    {
      key: "maxChars",
      label: "connector.webhook.maxChars.label",
      kind: "setting",
      input: "number",
      placeholder: "20000",
    },
  ],
  feishu: [
    {
      key: "mode",
      label: "connector.feishu.mode.label",
      kind: "setting",
      input: "select",
      options: ["long-connection", "webhook"],
      optionLabels: {
        "long-connection": "connector.feishu.mode.option.long-connection",
        webhook: "connector.feishu.mode.option.webhook",
      },
      help: "connector.feishu.mode.help",
    },
    {
      key: "appId",
      label: "connector.feishu.appId.label",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "cli_…",
      help: "connector.feishu.appId.help",
    },
    {
      key: "appSecret",
      label: "connector.feishu.appSecret.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.feishu.appSecret.help",
    },
    {
      key: "encryptKey",
      label: "connector.feishu.encryptKey.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.feishu.encryptKey.help",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    {
      key: "verificationToken",
      label: "connector.feishu.verificationToken.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.feishu.verificationToken.help",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    {
      key: "baseUrl",
      label: "connector.feishu.baseUrl.label",
      kind: "setting",
      input: "url",
      placeholder: "https://open.feishu.cn",
      help: "connector.feishu.baseUrl.help",
    },
    { key: "streaming", label: "connector.feishu.streaming.label", kind: "setting", input: "checkbox" },
  ],
  dingtalk: [
    {
      key: "mode",
      label: "connector.dingtalk.mode.label",
      kind: "setting",
      input: "select",
      options: ["stream", "webhook"],
      optionLabels: {
        stream: "connector.dingtalk.mode.option.stream",
        webhook: "connector.dingtalk.mode.option.webhook",
      },
      help: "connector.dingtalk.mode.help",
    },
    {
      key: "clientId",
      label: "connector.dingtalk.clientId.label",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "ding…",
      help: "connector.dingtalk.clientId.help",
    },
    {
      key: "clientSecret",
      label: "connector.dingtalk.clientSecret.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.dingtalk.clientSecret.help",
    },
    {
      key: "cardTemplateId",
      label: "connector.dingtalk.cardTemplateId.label",
      kind: "setting",
      input: "text",
      placeholder: "….schema",
      help: "connector.dingtalk.cardTemplateId.help",
      showWhen: { key: "mode", is: ["stream"] },
    },
    {
      key: "streaming",
      label: "connector.dingtalk.streaming.label",
      kind: "setting",
      input: "checkbox",
      showWhen: { key: "mode", is: ["stream"] },
    },
    {
      key: "baseUrl",
      label: "connector.dingtalk.baseUrl.label",
      kind: "setting",
      input: "url",
      placeholder: "https://api.dingtalk.com",
      help: "connector.dingtalk.baseUrl.help",
    },
  ],
  wecom: [
    {
      key: "corpId",
      label: "connector.wecom.corpId.label",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "ww…",
      help: "connector.wecom.corpId.help",
    },
    {
      key: "appAgentId",
      label: "connector.wecom.appAgentId.label",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "1000002",
      help: "connector.wecom.appAgentId.help",
    },
    {
      key: "corpSecret",
      label: "connector.wecom.corpSecret.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.wecom.corpSecret.help",
    },
    {
      key: "token",
      label: "connector.wecom.token.label",
      kind: "secret",
      input: "text",
      required: true,
      help: "connector.wecom.token.help",
    },
    {
      key: "encodingAESKey",
      label: "connector.wecom.encodingAESKey.label",
      kind: "secret",
      input: "text",
      required: true,
      hint: "connector.wecom.encodingAESKey.hint",
      help: "connector.wecom.encodingAESKey.help",
    },
    {
      key: "format",
      label: "connector.wecom.format.label",
      kind: "setting",
      input: "select",
      options: ["markdown", "text"],
      optionLabels: {
        markdown: "connector.wecom.format.option.markdown",
        text: "connector.wecom.format.option.text",
      },
      help: "connector.wecom.format.help",
    },
    {
      key: "baseUrl",
      label: "connector.wecom.baseUrl.label",
      kind: "setting",
      input: "url",
      placeholder: "https://qyapi.weixin.qq.com",
      help: "connector.wecom.baseUrl.help",
    },
  ],
};

/** The value a field shows: what was typed, else the stored setting, else its first option. */
export function currentValue(field: ConnectorField, values: FieldValues, stored?: ConnectorView): string {
  const typed = values[field.key];
  if (typed !== undefined) return typed;
  const saved = stored?.settings[field.key];
  if (saved !== undefined) return String(saved);
  return field.options?.[0] ?? "";
}

/** The fields of a type that apply with the current values (mode-dependent ones hidden). */
export function visibleFields(
  type: ConnectorType,
  values: FieldValues,
  stored?: ConnectorView,
): ConnectorField[] {
  const fields = CONNECTOR_FIELDS[type];
  return fields.filter((field) => {
    if (!field.showWhen) return true;
    const other = fields.find((f) => f.key === field.showWhen?.key);
    return other ? field.showWhen.is.includes(currentValue(other, values, stored)) : true;
  });
}

/** A secret's or setting's label, by key. */
export function fieldLabel(type: ConnectorType, key: string): string {
  const label = CONNECTOR_FIELDS[type].find((f) => f.key === key)?.label;
  return label ? t(label) : key;
}

/** Whether a connector takes calls at its inbound URL (the other modes need no public address). */
export function takesInbound(view: ConnectorView): boolean {
  const mode = view.settings.mode;
  if (view.type === "webhook" || view.type === "wecom") return true;
  if (view.type === "telegram") return mode === "webhook";
  return mode === "webhook";
}

/** Form values by field key (checkboxes as "true"/"false"). */
export type FieldValues = Record<string, string>;

/** The settings and secrets of filled-in fields; empty fields are left out (secrets: kept). */
export function fieldsToBody(
  type: ConnectorType,
  values: FieldValues,
  stored?: ConnectorView,
): Pick<ConnectorBody, "settings" | "secrets"> {
  const settings: Record<string, string | number | boolean> = {};
  const secrets: Record<string, string> = {};
  for (const field of CONNECTOR_FIELDS[type]) {
    // A select left at its first option still says what it chose (a new Feishu connector's mode).
    const raw =
      (values[field.key] ?? (field.input === "select" && !stored ? field.options?.[0] : ""))?.trim() ?? "";
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
export function missingFields(
  type: ConnectorType,
  values: FieldValues,
  stored?: ConnectorView,
): Array<{ key: string; label: string }> {
  return visibleFields(type, values, stored)
    .filter(
      (f) => f.required && !(values[f.key]?.trim() || (f.kind === "secret" && stored?.secrets[f.key]?.set)),
    )
    .map((f) => ({ key: f.key, label: t(f.label) }));
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
    chats: (id: string) => api.request<ChatView[]>("GET", `/api/connectors/${enc(id)}/chats`),
    bindChat: (
      id: string,
      chatId: string,
      change: { mode?: "direct" | "group"; channelId?: string; mirror?: boolean },
    ) => api.request<ChatView>("PATCH", `/api/connectors/${enc(id)}/chats/${enc(chatId)}`, change),
    people: (id: string) => api.request<PersonView[]>("GET", `/api/connectors/${enc(id)}/people`),
    linkPerson: (id: string, externalUserId: string, userId: string | null) =>
      api.request<void>("PUT", `/api/connectors/${enc(id)}/people/${enc(externalUserId)}/link`, { userId }),
    linkCode: () => api.request<LinkCodeView>("POST", "/api/account/messenger-link"),
  };
}

/** A chat a connector has seen, and how it is bound. */
export interface ChatView {
  chatId: string;
  name?: string;
  group: boolean;
  lastAt: number;
  mode: "direct" | "group";
  channelId?: string;
  channelName?: string;
  mirror: boolean;
}

/** A person a connector has seen, and the web account they are linked to. */
export interface PersonView {
  externalUserId: string;
  name?: string;
  lastAt: number;
  linkedTo?: { userId: string; username: string };
}

/** A one-time code that links a messenger account to the web account that asked for it. */
export interface LinkCodeView {
  code: string;
  command: string;
  expiresAt: number;
}
