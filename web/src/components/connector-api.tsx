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
  /** How each option is shown (default: the option itself). */
  optionLabels?: Record<string, string>;
  placeholder?: string;
  required?: boolean;
  hint?: string;
  /** What it is and where to find it in the platform's console. */
  help?: string;
  /** Shown (and required) only while another field has one of these values. */
  showWhen?: { key: string; is: string[] };
}

export const CONNECTOR_LABELS: Record<ConnectorType, string> = {
  telegram: "Telegram",
  webhook: "Webhook",
  feishu: "Feishu / Lark",
  dingtalk: "DingTalk",
  wecom: "WeCom (企业微信)",
};

/** Setup steps shown above each type's fields. */
export const CONNECTOR_GUIDES: Record<ConnectorType, string[]> = {
  telegram: [
    "Talk to @BotFather in Telegram, send /newbot and copy the bot token it gives you.",
    "Polling needs no public address; webhook mode needs this server reachable over HTTPS.",
  ],
  webhook: [
    "Your system POSTs signed JSON to the inbound URL shown after creating; answers are POSTed, signed the same way, to the outbound URL.",
  ],
  feishu: [
    "In the Feishu developer console (open.feishu.cn/app; Lark: open.larksuite.com/app), create a self-built app and add the Bot feature.",
    "Permissions: im:message.p2p_msg:readonly, im:message.group_at_msg:readonly and im:message:send_as_bot; for images and files people send, also im:message:readonly.",
    "Long connection (no public address): create and start this connector first, then under Events & Callbacks choose “Receive events through persistent connection” and add the event im.message.receive_v1.",
    "Webhook: under Events & Callbacks set the request URL to this connector's inbound URL and copy the Encrypt Key and Verification Token.",
  ],
  dingtalk: [
    "In the DingTalk developer console (open-dev.dingtalk.com), create an internal app and add the Robot capability.",
    "Stream mode (no public address): in the robot's settings choose “Stream mode” as the message receiving mode, then start this connector.",
    "HTTP mode: choose “HTTP mode” and set the message receiving address to this connector's inbound URL.",
    "To answer after a chat's session ran out (about 90 minutes), grant the app the robot's “send messages” permission.",
    "Cards (Stream mode: approval buttons, flow progress, streamed answers): in the card platform build a template with the string variables title, markdown, buttons (a JSON list of {text, action}; each button calls back with the parameter action) and notice; grant Card.Instance.Write and paste the template ID below.",
  ],
  wecom: [
    "In the WeCom admin console (work.weixin.qq.com), open App Management and create a self-built app.",
    "Create this connector and start it, then on the app's page open Receive Messages → Set API Receiving: URL = this connector's inbound URL, with the Token and EncodingAESKey entered here. WeCom checks the URL when you save.",
    "WeCom only takes API calls from trusted IPs: add this server's public IP under the app's Trusted IP setting.",
  ],
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
      help: "From @BotFather: /newbot, or /token for an existing bot.",
    },
    {
      key: "mode",
      label: "Receive by",
      kind: "setting",
      input: "select",
      options: ["polling", "webhook"],
      optionLabels: { polling: "Polling", webhook: "Webhook" },
      help: "Polling needs no public address; a webhook needs this server reachable over HTTPS.",
    },
    {
      key: "publicUrl",
      label: "Public URL of this server",
      kind: "setting",
      input: "url",
      required: true,
      placeholder: "https://dimsum.example.com",
      help: "The HTTPS address Telegram can reach this server at; the webhook is registered for you.",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    { key: "streaming", label: "Stream answers (edit a preview)", kind: "setting", input: "checkbox" },
    {
      key: "baseUrl",
      label: "Bot API URL",
      kind: "setting",
      input: "url",
      placeholder: "https://api.telegram.org",
      help: "Change only for a self-hosted Bot API server.",
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
      help: "Where answers are POSTed.",
    },
    {
      key: "secret",
      label: "Shared secret (HMAC-SHA256)",
      kind: "secret",
      input: "text",
      required: true,
      hint: "16+ characters",
      help: "Both sides sign and check requests with it; make one up and give it to the other system.",
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
    {
      key: "mode",
      label: "Receive by",
      kind: "setting",
      input: "select",
      options: ["long-connection", "webhook"],
      optionLabels: { "long-connection": "Long connection", webhook: "Webhook" },
      help: "The long connection needs no public address; the webhook needs this server reachable from Feishu.",
    },
    {
      key: "appId",
      label: "App ID",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "cli_…",
      help: "Developer console → your app → Credentials & Basic Info (凭证与基础信息).",
    },
    {
      key: "appSecret",
      label: "App Secret",
      kind: "secret",
      input: "text",
      required: true,
      help: "Same page as the App ID.",
    },
    {
      key: "encryptKey",
      label: "Encrypt Key",
      kind: "secret",
      input: "text",
      required: true,
      help: "Events & Callbacks → Encryption Strategy (加密策略).",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    {
      key: "verificationToken",
      label: "Verification Token",
      kind: "secret",
      input: "text",
      required: true,
      help: "Events & Callbacks → Encryption Strategy, beside the Encrypt Key.",
      showWhen: { key: "mode", is: ["webhook"] },
    },
    {
      key: "baseUrl",
      label: "Open API URL",
      kind: "setting",
      input: "url",
      placeholder: "https://open.feishu.cn",
      help: "Lark (international): https://open.larksuite.com.",
    },
    { key: "streaming", label: "Stream answers (update a card)", kind: "setting", input: "checkbox" },
  ],
  dingtalk: [
    {
      key: "mode",
      label: "Receive by",
      kind: "setting",
      input: "select",
      options: ["stream", "webhook"],
      optionLabels: { stream: "Stream mode", webhook: "HTTP callback" },
      help: "Stream mode needs no public address; the HTTP callback needs this server reachable from DingTalk.",
    },
    {
      key: "clientId",
      label: "Client ID (AppKey)",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "ding…",
      help: "Developer console → your app → Credentials & Basic Info (凭证与基础信息).",
    },
    {
      key: "clientSecret",
      label: "Client Secret (AppSecret)",
      kind: "secret",
      input: "text",
      required: true,
      help: "Same page as the Client ID. In HTTP mode it also checks each callback's signature.",
    },
    {
      key: "cardTemplateId",
      label: "Card template ID",
      kind: "setting",
      input: "text",
      placeholder: "….schema",
      help: "Cards with buttons for approvals and flows, and answers streamed into a card (Stream mode only): the template built in the card platform (卡片平台) as the README says.",
      showWhen: { key: "mode", is: ["stream"] },
    },
    {
      key: "streaming",
      label: "Stream answers (into a card)",
      kind: "setting",
      input: "checkbox",
      showWhen: { key: "mode", is: ["stream"] },
    },
    {
      key: "baseUrl",
      label: "OpenAPI URL",
      kind: "setting",
      input: "url",
      placeholder: "https://api.dingtalk.com",
      help: "Change only for a proxy.",
    },
  ],
  wecom: [
    {
      key: "corpId",
      label: "Corp ID",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "ww…",
      help: "Admin console → My Company (我的企业) → Company Information, at the bottom (企业ID).",
    },
    {
      key: "appAgentId",
      label: "AgentId",
      kind: "setting",
      input: "text",
      required: true,
      placeholder: "1000002",
      help: "App Management (应用管理) → your self-built app → AgentId.",
    },
    {
      key: "corpSecret",
      label: "App Secret",
      kind: "secret",
      input: "text",
      required: true,
      help: "The app's page → Secret (WeCom shows it in the WeCom app when you press View).",
    },
    {
      key: "token",
      label: "Token",
      kind: "secret",
      input: "text",
      required: true,
      help: "The app's page → Receive Messages → Set API Receiving (设置API接收): press Random, copy it here.",
    },
    {
      key: "encodingAESKey",
      label: "EncodingAESKey",
      kind: "secret",
      input: "text",
      required: true,
      hint: "43 characters",
      help: "Same dialog as the Token: press Random, copy it here.",
    },
    {
      key: "format",
      label: "Answer as",
      kind: "setting",
      input: "select",
      options: ["markdown", "text"],
      optionLabels: { markdown: "Markdown", text: "Plain text" },
      help: "Markdown shows in the WeCom app; plain text also reaches people who use WeChat.",
    },
    {
      key: "baseUrl",
      label: "API URL",
      kind: "setting",
      input: "url",
      placeholder: "https://qyapi.weixin.qq.com",
      help: "Change only for a proxy.",
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
  return CONNECTOR_FIELDS[type].find((f) => f.key === key)?.label ?? key;
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
    .map((f) => ({ key: f.key, label: f.label }));
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
