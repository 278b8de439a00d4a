/**
 * The one place a model call's context is assembled, layer by layer, in a fixed order:
 * system prompt (+ persona), skills, core memory, relevant memories, session summary, open todos, recent messages,
 * tool schemas.
 */
import type { Context, Message, ToolSchema } from "../llm/types.js";
import type { TodoItem } from "../tools/types.js";

export interface ContextLayers {
  system?: string;
  /** The agent's persona (e.g. its SOUL.md), placed right after the system prompt. */
  persona?: string;
  /** Skill instructions chosen for this message, each a labelled section. */
  skills?: Array<{ name: string; body: string }>;
  /** Core memory blocks, always present when set. */
  coreMemory?: Array<{ label: string; value: string }>;
  /** Archival memories retrieved for the user's message, in their own labelled section. */
  memories?: Array<{ id: string; type: string; text: string }>;
  /** Summary of the conversation before the live messages. */
  summary?: string;
  todos?: TodoItem[];
}

/** Builds the system text from the layers; undefined when every layer is empty. */
export function renderSystemLayers(layers: ContextLayers): string | undefined {
  const sections: string[] = [];
  if (layers.system?.trim()) sections.push(layers.system.trim());
  if (layers.persona?.trim()) sections.push(`# Persona\n\n${layers.persona.trim()}`);
  if (layers.skills && layers.skills.length > 0) {
    sections.push(
      `# Skills\n\n${layers.skills.map((s) => `## Skill: ${s.name}\n\n${s.body.trim()}`).join("\n\n")}`,
    );
  }
  if (layers.coreMemory && layers.coreMemory.length > 0) {
    sections.push(
      `# Core memory\n\n${layers.coreMemory.map((b) => `<${b.label}>\n${b.value}\n</${b.label}>`).join("\n")}`,
    );
  }
  if (layers.memories && layers.memories.length > 0) {
    const lines = layers.memories.map((m) => `- [${m.type} #${m.id}] ${m.text}`);
    sections.push(`# Relevant memories about the user\n\n${lines.join("\n")}`);
  }
  if (layers.summary?.trim()) {
    sections.push(`# Summary of the earlier conversation\n\n${layers.summary.trim()}`);
  }
  const open = (layers.todos ?? []).filter((t) => t.status !== "done");
  if (open.length > 0) {
    const lines = open.map((t) => `- [${t.status === "in_progress" ? "~" : " "}] ${t.id}. ${t.text}`);
    sections.push(`# Open todos\n\n${lines.join("\n")}`);
  }
  return sections.length > 0 ? sections.join("\n\n") : undefined;
}

/** The full context: layered system text, the live messages, and the tool schemas. */
export function buildLayeredContext(
  layers: ContextLayers,
  messages: Message[],
  tools?: ToolSchema[],
): Context {
  const context: Context = { messages };
  const system = renderSystemLayers(layers);
  if (system) context.system = system;
  if (tools && tools.length > 0) context.tools = tools;
  return context;
}

/** Layers computed for one run from the user's message, plus what to show in the trace about them. */
export interface LayerResult {
  layers: Partial<ContextLayers>;
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
