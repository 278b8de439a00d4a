/**
 * Memory extraction after a run: the model reads the conversation and proposes durable memories as
 * JSON. Models get JSON wrong in many small ways, so parsing is defensive: a bad reply yields zero
 * memories and a warning, never an exception.
 */
import { isTurnContext } from "../agent/turn-context.js";
import type { Message, ModelSpec, StreamFunction, Usage } from "../llm/types.js";
import { normalizeText } from "../store/text/terms.js";
import { cleanTags, MAX_MEMORY_CHARS } from "./input.js";
import {
  MEMORY_TYPES,
  type MemoryScope,
  type MemoryStore,
  type MemoryType,
  type RememberResult,
} from "./types.js";

export interface ExtractedMemory {
  text: string;
  type: MemoryType;
  importance: number;
  tags: string[];
}

export interface ExtractOptions {
  stream: StreamFunction;
  model: ModelSpec;
  /** The conversation to learn from (usually the run's messages). */
  messages: Message[];
  /** Memories already stored, so the model does not propose them again. */
  existing?: Array<string | { text: string }>;
  signal?: AbortSignal;
  /** Most memories accepted from one reply (default 10). */
  maxMemories?: number;
  /** Transcript characters sent, newest kept (default 12,000). */
  maxTranscriptChars?: number;
}

export interface ExtractResult {
  memories: ExtractedMemory[];
  warnings: string[];
  usage?: Usage;
}

const SYSTEM = `You maintain a user's long-term memory. From the conversation, pick facts worth remembering in
future conversations: stable preferences, personal facts, goals, important events, and instructions on
how the user wants things done. Skip small talk, one-off requests, anything already in the existing
memories, and secrets such as passwords or keys.

Answer with only a JSON array, no prose. Each item:
{"text": "one self-contained statement about the user", "type": "semantic" | "episodic" | "procedural",
 "importance": 1-10, "tags": ["short", "tags"]}
semantic = facts and preferences; episodic = events; procedural = how the user wants things done.
Write each text so it makes sense on its own, in the language the user used. Answer [] when nothing qualifies.`;

function messageText(message: Message): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => (part.type === "text" ? part.text : ""))
    .filter((t) => t !== "")
    .join("\n");
}

/** The user and assistant turns as plain text, the newest `maxChars` characters of it. */
function transcript(messages: Message[], maxChars: number): string {
  const lines = messages
    .filter((m) => (m.role === "user" && !isTurnContext(m)) || m.role === "assistant")
    .map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${messageText(m).trim()}`)
    .filter((line) => !/^(User|Assistant): $/.test(line));
  const text = lines.join("\n\n");
  return text.length > maxChars ? `…${text.slice(text.length - maxChars)}` : text;
}

/** The JSON array in a reply: bare, in a code fence, or wrapped as {"memories": [...]}. */
function findArray(reply: string): unknown[] | string {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/i.exec(reply);
  const body = (fenced?.[1] ?? reply).trim();
  const candidates = [body];
  const start = body.indexOf("[");
  const end = body.lastIndexOf("]");
  if (start >= 0 && end > start) candidates.push(body.slice(start, end + 1));
  for (const candidate of candidates) {
    try {
      const value: unknown = JSON.parse(candidate);
      if (Array.isArray(value)) return value;
      const wrapped = (value as { memories?: unknown } | null)?.memories;
      if (Array.isArray(wrapped)) return wrapped;
    } catch {
      // Try the next candidate.
    }
  }
  return `the reply is not a JSON array of memories: ${reply.trim().slice(0, 200) || "(empty reply)"}`;
}

/** Checks one proposed item; a reason string when it cannot be used. */
function toMemory(item: unknown, index: number): ExtractedMemory | string {
  if (typeof item !== "object" || item === null) return `item ${index} is not an object`;
  const fields = item as Record<string, unknown>;
  const text = typeof fields.text === "string" ? fields.text.trim() : "";
  if (text === "") return `item ${index} has no text`;
  if (text.length > MAX_MEMORY_CHARS) return `item ${index} is longer than ${MAX_MEMORY_CHARS} characters`;
  const type = MEMORY_TYPES.includes(fields.type as MemoryType) ? (fields.type as MemoryType) : "semantic";
  const rawImportance = Number(fields.importance);
  const importance = Number.isFinite(rawImportance)
    ? Math.min(10, Math.max(1, Math.round(rawImportance)))
    : 5;
  const tags = Array.isArray(fields.tags) ? cleanTags(fields.tags.filter((t) => typeof t === "string")) : [];
  return { text, type, importance, tags };
}

/** Asks the model for memories worth keeping from `messages`. Never throws. */
export async function extractMemories(options: ExtractOptions): Promise<ExtractResult> {
  const warnings: string[] = [];
  const conversation = transcript(options.messages, options.maxTranscriptChars ?? 12_000);
  if (conversation === "") return { memories: [], warnings };
  const existing = (options.existing ?? []).map((e) => (typeof e === "string" ? e : e.text));
  const prompt = [
    existing.length > 0
      ? `Existing memories:\n${existing.map((e) => `- ${e}`).join("\n")}`
      : "Existing memories: none",
    `Conversation:\n${conversation}`,
    "Return the JSON array now.",
  ].join("\n\n");

  let reply = "";
  let usage: Usage | undefined;
  try {
    for await (const event of options.stream(
      options.model,
      { system: SYSTEM, messages: [{ role: "user", content: prompt }] },
      { temperature: 0, toolChoice: "none", ...(options.signal ? { signal: options.signal } : {}) },
    )) {
      if (event.type === "text_delta") reply += event.text;
      else if (event.type === "usage") usage = event.usage;
      else if (event.type === "error") {
        warnings.push(`memory extraction failed: ${event.error.toLine()}`);
        return { memories: [], warnings };
      }
    }
  } catch (err) {
    warnings.push(`memory extraction failed: ${err instanceof Error ? err.message : String(err)}`);
    return { memories: [], warnings };
  }

  const items = findArray(reply);
  if (typeof items === "string") {
    warnings.push(`memory extraction: ${items}`);
    return usage ? { memories: [], warnings, usage } : { memories: [], warnings };
  }
  const known = new Set(existing.map(normalizeText));
  const memories: ExtractedMemory[] = [];
  items.forEach((item, index) => {
    const memory = toMemory(item, index);
    if (typeof memory === "string") warnings.push(`memory extraction: skipped ${memory}`);
    else if (!known.has(normalizeText(memory.text))) {
      known.add(normalizeText(memory.text));
      memories.push(memory);
    }
  });
  const max = options.maxMemories ?? 10;
  if (memories.length > max) {
    warnings.push(`memory extraction: kept the first ${max} of ${memories.length} memories`);
    memories.length = max;
  }
  return usage ? { memories, warnings, usage } : { memories, warnings };
}

/** Stores extracted memories for a user (extracted ones get confidence 0.8), merging near-duplicates. */
export async function saveExtracted(
  memory: MemoryStore,
  scope: MemoryScope & { sessionId?: string; runId?: string },
  memories: ExtractedMemory[],
  options: { signal?: AbortSignal } = {},
): Promise<RememberResult[]> {
  if (memories.length === 0) return [];
  const base: MemoryScope = scope.agentId
    ? { userId: scope.userId, agentId: scope.agentId }
    : { userId: scope.userId };
  return memory.rememberMany(
    memories.map((m) => ({
      ...base,
      ...m,
      confidence: 0.8,
      ...(scope.sessionId ? { sourceSessionId: scope.sessionId } : {}),
      ...(scope.runId ? { sourceRunId: scope.runId } : {}),
    })),
    options,
  );
}
