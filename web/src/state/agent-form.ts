/** The agent editor's form model: text fields as typed, and their conversion to the API's shapes. */
import type { AgentInput, AgentPatchBody, AgentRecord } from "../types.js";

export interface AgentFormValues {
  id: string;
  name: string;
  emoji: string;
  model: string;
  /** "all" = every built-in tool (minus the deny list); "list" = only `toolsAllow`. */
  toolsMode: "all" | "list";
  toolsAllow: string;
  toolsDeny: string;
  memory: boolean;
  skills: string;
}

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
    toolsMode: "all",
    toolsAllow: "",
    toolsDeny: "",
    memory: true,
    skills: "",
  };
}

/** The form showing an existing agent. */
export function agentToForm(agent: AgentRecord): AgentFormValues {
  return {
    id: agent.id,
    name: agent.name,
    emoji: agent.emoji,
    model: agent.model ?? "",
    toolsMode: agent.toolsAllow === undefined ? "all" : "list",
    toolsAllow: (agent.toolsAllow ?? []).join(", "),
    toolsDeny: agent.toolsDeny.join(", "),
    memory: agent.memory,
    skills: agent.skills.join(", "),
  };
}

/** Problems that would make the server reject the form, by field; empty when valid. */
export function validateAgentForm(
  values: AgentFormValues,
  creating: boolean,
): Partial<Record<keyof AgentFormValues, string>> {
  const errors: Partial<Record<keyof AgentFormValues, string>> = {};
  if (creating && !AGENT_ID_PATTERN.test(values.id)) {
    errors.id =
      "Use 1–40 lowercase letters, digits, - or _, starting with a letter or digit (it is the @mention).";
  }
  if (values.name.trim() === "") errors.name = "Give the agent a name.";
  const model = values.model.trim();
  if (model !== "" && !/^[^:\s]+:\S+$/.test(model))
    errors.model = "Write the model as provider:model, or leave it empty for the default.";
  return errors;
}

/** The PATCH body for an edited agent (see AgentPatchBody). */
export function formToPatch(values: AgentFormValues): AgentPatchBody {
  return {
    name: values.name.trim(),
    emoji: values.emoji.trim() || "🤖",
    model: values.model.trim() || null,
    toolsAllow: values.toolsMode === "list" ? splitList(values.toolsAllow) : null,
    toolsDeny: splitList(values.toolsDeny),
    memory: values.memory,
    skills: splitList(values.skills),
  };
}

/** The POST body for a new agent, with its initial persona. */
export function formToInput(values: AgentFormValues, soul: string): AgentInput {
  const patch = formToPatch(values);
  const input: AgentInput = { id: values.id.trim(), name: patch.name || values.id.trim(), soul };
  if (patch.emoji) input.emoji = patch.emoji;
  if (patch.model) input.model = patch.model;
  if (patch.toolsAllow) input.toolsAllow = patch.toolsAllow;
  if (patch.toolsDeny) input.toolsDeny = patch.toolsDeny;
  if (patch.memory !== undefined) input.memory = patch.memory;
  if (patch.skills) input.skills = patch.skills;
  return input;
}
