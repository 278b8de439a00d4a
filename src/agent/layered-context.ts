/**
 * The one place a model call's context is assembled, from the most stable part to the least, so the
 * serialized prefix of a conversation's requests only grows (prompt caching, DESIGN.md "Context
 * order"): tool schemas (sorted by name), then the system text (system prompt, persona, the skill
 * index, always-on skills, core memory, the session summary), then the messages, where what changes
 * every turn (recalled memories, skills named or matched for the message, open todos) sits in a turn
 * context next to the newest user message (see turn-context.ts).
 */
import type { Context, Message, ToolSchema } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";
import { foldTurnContext } from "./turn-context.js";

export interface ContextLayers {
  system?: string;
  /** The agent's persona (e.g. its SOUL.md), placed right after the system prompt. */
  persona?: string;
  /** Every skill the model may load with `load_skill`: name and description only. */
  skillIndex?: Array<{ name: string; description: string }>;
  /** Skills always given in full (an agent's always-on skills), each a labelled section. */
  skills?: Array<{ name: string; body: string }>;
  /** Core memory blocks, always present when set. */
  coreMemory?: Array<{ label: string; value: string }>;
  /** Summary of the conversation before the live messages. */
  summary?: string;
  /** Turn context: archival memories retrieved for the user's message. */
  memories?: Array<{ id: string; type: string; text: string }>;
  /** Turn context: skills the person named for this message (`/skill name`), in full. */
  turnSkills?: Array<{ name: string; body: string }>;
  /** Turn context: names of skills that match the message by keywords, offered as a hint. */
  skillHints?: string[];
  /** Turn context: the session's open todos when the turn started. */
  todos?: TodoItem[];
}

/** The turn-context layers: what changes between turns and so goes after the cached prefix. */
export type TurnLayers = Pick<ContextLayers, "memories" | "turnSkills" | "skillHints" | "todos">;

function skillSections(skills: Array<{ name: string; body: string }>): string {
  return skills.map((s) => `## Skill: ${s.name}\n\n${s.body.trim()}`).join("\n\n");
}

/** The index of loadable skills, one line each; the bodies stay out until the model loads one. */
export function renderSkillIndex(index: Array<{ name: string; description: string }>): string {
  const lines = index.map((s) => `- ${s.name}: ${s.description.replace(/\s+/g, " ").trim()}`);
  return [
    "# Skills",
    "",
    "Skills are instructions for particular tasks. When one fits the request, call load_skill with its name to read it before you start; skip those that do not fit.",
    "",
    ...lines,
  ].join("\n");
}

/** Builds the stable system text from the layers; undefined when every stable layer is empty. */
export function renderSystemLayers(layers: ContextLayers): string | undefined {
  const sections: string[] = [];
  if (layers.system?.trim()) sections.push(layers.system.trim());
  if (layers.persona?.trim()) sections.push(`# Persona\n\n${layers.persona.trim()}`);
  if (layers.skillIndex && layers.skillIndex.length > 0) sections.push(renderSkillIndex(layers.skillIndex));
  if (layers.skills && layers.skills.length > 0) {
    sections.push(`# Always-on skills\n\n${skillSections(layers.skills)}`);
  }
  if (layers.coreMemory && layers.coreMemory.length > 0) {
    sections.push(
      `# Core memory\n\n${layers.coreMemory.map((b) => `<${b.label}>\n${b.value}\n</${b.label}>`).join("\n")}`,
    );
  }
  if (layers.summary?.trim()) {
    sections.push(`# Summary of the earlier conversation\n\n${layers.summary.trim()}`);
  }
  return sections.length > 0 ? sections.join("\n\n") : undefined;
}

/** Separates the layers that go in the system text from those of the turn context. */
export function splitLayers(layers: Partial<ContextLayers>): {
  stable: Partial<ContextLayers>;
  turn: TurnLayers;
} {
  const { memories, turnSkills, skillHints, todos, ...stable } = layers;
  const turn: TurnLayers = {};
  if (memories) turn.memories = memories;
  if (turnSkills) turn.turnSkills = turnSkills;
  if (skillHints) turn.skillHints = skillHints;
  if (todos) turn.todos = todos;
  return { stable, turn };
}

/** The turn context's sections; undefined when there is nothing to say this turn. */
export function renderTurnLayers(layers: TurnLayers): string | undefined {
  const sections: string[] = [];
  if (layers.memories && layers.memories.length > 0) {
    const lines = layers.memories.map((m) => `- [${m.type} #${m.id}] ${m.text}`);
    sections.push(`# Relevant memories about the user\n\n${lines.join("\n")}`);
  }
  if (layers.turnSkills && layers.turnSkills.length > 0) {
    sections.push(`# Skills named for this message\n\n${skillSections(layers.turnSkills)}`);
  }
  if (layers.skillHints && layers.skillHints.length > 0) {
    sections.push(
      `# Skills that may fit this message\n\n${layers.skillHints.join(", ")} (load one with load_skill if it helps)`,
    );
  }
  const open = (layers.todos ?? []).filter((t) => t.status !== "done");
  if (open.length > 0) {
    const lines = open.map((t) => `- [${t.status === "in_progress" ? "~" : " "}] ${t.id}. ${t.text}`);
    sections.push(`# Open todos\n\n${lines.join("\n")}`);
  }
  return sections.length > 0 ? sections.join("\n\n") : undefined;
}

/**
 * The full context: the stable system text, the live messages (turn contexts folded into the user
 * messages they follow) and the tool schemas in name order.
 */
export function buildLayeredContext(
  layers: ContextLayers,
  messages: Message[],
  tools?: ToolSchema[],
): Context {
  const context: Context = { messages: foldTurnContext(messages) };
  const system = renderSystemLayers(layers);
  if (system) context.system = system;
  if (tools && tools.length > 0) context.tools = [...tools].sort(byName);
  return context;
}

function byName(a: ToolSchema, b: ToolSchema): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Layers computed for one run from the user's message, plus what to show in the trace about them. */
export interface LayerResult {
  layers: Partial<ContextLayers>;
  /** Skills whose bodies this run was given (always-on and named ones). */
  skills?: string[];
  memories?: Array<{ id: string; score?: number }>;
  memoryMode?: string;
}

/** Computes extra layers (persona, skills, memory) for a run. */
export type LayerProvider = (input: {
  userId?: string;
  query: string;
  signal: AbortSignal;
}) => Promise<LayerResult>;

/** Combines several providers; later ones win where they set the same layer. */
export function combineLayerProviders(providers: LayerProvider[]): LayerProvider {
  return async (input) => {
    const results = await Promise.all(providers.map((p) => p(input)));
    const out: LayerResult = { layers: {}, skills: [], memories: [] };
    for (const r of results) {
      out.layers = { ...out.layers, ...r.layers };
      out.skills?.push(...(r.skills ?? []));
      out.memories?.push(...(r.memories ?? []));
      if (r.memoryMode) out.memoryMode = r.memoryMode;
    }
    return out;
  };
}
