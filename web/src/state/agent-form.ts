/** The agent editor's form model: fields as edited, and their conversion to the API's shapes. */

import { t } from "../i18n/index.js";
import type { AgentInput, AgentPatchBody, AgentRecord } from "../types.js";

export interface AgentFormValues {
  id: string;
  name: string;
  emoji: string;
  model: string;
  /** How hard the model thinks: "" = the model's default. */
  reasoning: "" | "off" | "low" | "medium" | "high";
  /** "all" = every tool of the catalogue that is not grant-only (minus the deny list); "list" = only `toolsAllow`. */
  toolsMode: "all" | "list";
  toolsAllow: string[];
  toolsDeny: string[];
  memory: boolean;
  skills: string;
  /** "all" = every base the person it answers may read; "list" = only `knowledgeBases`. */
  knowledgeMode: "all" | "list";
  knowledgeBases: string[];
  /** Tools whose every call waits for approval: names or `prefix*` patterns, comma or line separated. */
  askFirst: string;
  /** A JSON Schema (as JSON text) every answer follows; empty for free text. */
  answerFormat: string;
  /** The sandbox network of its commands: "" = the server's setting. */
  networkMode: "" | "off" | "allow" | "on";
  /** Hosts for `allow`: names or `*.domain`, comma or line separated. */
  networkHosts: string;
}

export type AgentFormErrors = Partial<Record<keyof AgentFormValues, string>>;

export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,39}$/;

/** Splits "a, b c" into ["a", "b", "c"] (commas, spaces or new lines), dropping duplicates. */
export function splitList(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter((item) => item !== ""))];
}

/** The form for a new agent. */
export function emptyAgentForm(): AgentFormValues {
  return {
    id: "",
    name: "",
    emoji: "🤖",
    model: "",
    reasoning: "",
    toolsMode: "all",
    toolsAllow: [],
    toolsDeny: [],
    memory: true,
    skills: "",
    knowledgeMode: "all",
    knowledgeBases: [],
    askFirst: "",
    answerFormat: "",
    networkMode: "",
    networkHosts: "",
  };
}

/** The form showing an existing agent. */
export function agentToForm(agent: AgentRecord): AgentFormValues {
  return {
    id: agent.id,
    name: agent.name,
    emoji: agent.emoji,
    model: agent.model ?? "",
    reasoning: agent.reasoning ?? "",
    toolsMode: agent.toolsAllow === undefined ? "all" : "list",
    toolsAllow: [...(agent.toolsAllow ?? [])],
    toolsDeny: [...agent.toolsDeny],
    memory: agent.memory,
    skills: agent.skills.join(", "),
    knowledgeMode: agent.knowledgeBases === undefined ? "all" : "list",
    knowledgeBases: [...(agent.knowledgeBases ?? [])],
    // A server from before ask-first lists sends none.
    askFirst: (agent.askFirst ?? []).join(", "),
    answerFormat: agent.answerFormat ? JSON.stringify(agent.answerFormat, null, 2) : "",
    networkMode: agent.network?.mode ?? "",
    networkHosts: agent.network?.mode === "allow" ? agent.network.hosts.join(", ") : "",
  };
}

/** A host the network allow list takes (as the server checks it): a name or `*.domain`, no scheme, port or path. */
const NETWORK_HOST =
  /^(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** The network setting as the API takes it; undefined for the server's setting. */
function networkOf(values: AgentFormValues): AgentRecord["network"] {
  if (values.networkMode === "") return undefined;
  if (values.networkMode === "allow") return { mode: "allow", hosts: splitList(values.networkHosts) };
  return { mode: values.networkMode };
}

/** An ask-first entry: a tool name, or the start of names followed by `*` (`github_*`). */
const ASK_FIRST_PATTERN = /^[^*]+\*?$/;

/** The longest agent name the server takes. */
export const AGENT_NAME_MAX = 80;

/** Problems that would make the server reject the form, by field; empty when valid. */
export function validateAgentForm(values: AgentFormValues, creating: boolean): AgentFormErrors {
  const errors: AgentFormErrors = {};
  if (creating && !AGENT_ID_PATTERN.test(values.id)) {
    errors.id = t("agentForm.check.id");
  }
  const name = values.name.trim();
  if (name === "") errors.name = t("agentForm.check.name");
  else if (name.length > AGENT_NAME_MAX)
    errors.name = t("agentForm.check.nameLength", { max: AGENT_NAME_MAX, length: name.length });
  // One model, or a fallback chain: models separated by commas, tried in order.
  const model = values.model.trim();
  if (model !== "" && !model.split(",").every((item) => /^[^:\s]+:\S+$/.test(item.trim())))
    errors.model = t("agentForm.check.model");
  if (values.toolsMode === "list" && values.toolsAllow.length === 0)
    errors.toolsAllow = t("agentForm.check.tools");
  const badPattern = splitList(values.askFirst).find((entry) => !ASK_FIRST_PATTERN.test(entry));
  if (badPattern !== undefined) errors.askFirst = t("agentForm.check.askFirst", { pattern: badPattern });
  if (values.networkMode === "allow") {
    const hosts = splitList(values.networkHosts);
    const bad = hosts.find((host) => host.length > 253 || !NETWORK_HOST.test(host));
    if (hosts.length === 0) errors.networkHosts = t("agentForm.check.networkHostsEmpty");
    else if (bad !== undefined) errors.networkHosts = t("agentForm.check.networkHost", { host: bad });
  }
  if (values.answerFormat.trim() !== "" && parseAnswerFormat(values.answerFormat) === undefined)
    errors.answerFormat =
      'Write a JSON Schema object, like {"type": "object", "properties": {"title": {"type": "string"}}}, or leave it empty.';
  return errors;
}

/**
 * The PATCH body for an edited agent (see AgentPatchBody). The ask-first list, the answer format and
 * the thinking effort are sent when set, or when the agent had one (`before`), so clearing them is
 * saved too.
 */
export function formToPatch(
  values: AgentFormValues,
  before?: Pick<AgentRecord, "askFirst" | "answerFormat" | "reasoning" | "network">,
): AgentPatchBody {
  const askFirst = splitList(values.askFirst);
  const patch: AgentPatchBody = {
    name: values.name.trim(),
    emoji: values.emoji.trim() || "🤖",
    model: chainOf(values.model) || null,
    toolsAllow: values.toolsMode === "list" ? [...new Set(values.toolsAllow)] : null,
    toolsDeny: [...new Set(values.toolsDeny)],
    memory: values.memory,
    skills: splitList(values.skills),
    knowledgeBases: values.knowledgeMode === "list" ? [...new Set(values.knowledgeBases)] : null,
  };
  if (askFirst.length > 0 || (before?.askFirst ?? []).length > 0) patch.askFirst = askFirst;
  // Sent when set, or as null (the model's default) when the agent had one.
  if (values.reasoning !== "") patch.reasoning = values.reasoning;
  else if (before?.reasoning) patch.reasoning = null;
  const answerFormat = parseAnswerFormat(values.answerFormat);
  if (answerFormat) patch.answerFormat = answerFormat;
  else if (before?.answerFormat) patch.answerFormat = null;
  // Sent when set, or as null (the server's setting) when the agent had one.
  const network = networkOf(values);
  if (network) patch.network = network;
  else if (before?.network) patch.network = null;
  return patch;
}

/** The POST body for a new agent, with its initial persona. */
export function formToInput(values: AgentFormValues, soul: string): AgentInput {
  const patch = formToPatch(values);
  const input: AgentInput = { id: values.id.trim(), name: patch.name || values.id.trim(), soul };
  if (patch.emoji) input.emoji = patch.emoji;
  if (patch.model) input.model = patch.model;
  if (patch.reasoning) input.reasoning = patch.reasoning;
  if (patch.toolsAllow) input.toolsAllow = patch.toolsAllow;
  if (patch.toolsDeny && patch.toolsDeny.length > 0) input.toolsDeny = patch.toolsDeny;
  if (patch.memory !== undefined) input.memory = patch.memory;
  if (patch.skills && patch.skills.length > 0) input.skills = patch.skills;
  if (patch.knowledgeBases) input.knowledgeBases = patch.knowledgeBases;
  if (patch.askFirst && patch.askFirst.length > 0) input.askFirst = patch.askFirst;
  if (patch.answerFormat) input.answerFormat = patch.answerFormat;
  if (patch.network) input.network = patch.network;
  return input;
}

/** The answer format field as a schema object; undefined when empty or not a JSON object. */
function parseAnswerFormat(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Ticks or unticks one name in a list, keeping the order it was picked in. */
export function toggleName(list: readonly string[], name: string, on: boolean): string[] {
  if (on) return list.includes(name) ? [...list] : [...list, name];
  return list.filter((n) => n !== name);
}

/** A model chain as the API stores it: items trimmed, joined by commas. */
function chainOf(value: string): string {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "")
    .join(",");
}
