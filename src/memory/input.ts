/** Checks and normalises what callers (tools, CLI, extraction) ask memory to store. */
import { DimsumError } from "../errors.js";
import { normalizeText, queryTerms } from "../store/text/terms.js";
import { MEMORY_TYPES, type MemoryType, type RememberInput } from "./types.js";

export const MAX_MEMORY_CHARS = 2000;
const MAX_TAGS = 20;
const MAX_TAG_CHARS = 40;

export interface CleanInput {
  userId: string;
  agentId: string | undefined;
  type: MemoryType;
  text: string;
  tags: string[];
  importance: number;
  confidence: number;
  sourceSessionId: string | undefined;
  sourceRunId: string | undefined;
}

/** Throws DimsumError('config') for a missing user id: memory without an owner would leak between users. */
export function requireUser(userId: string | undefined): string {
  if (typeof userId !== "string" || userId.trim() === "") {
    throw new DimsumError("config", "Memory needs a user id, and none was given.", {
      hint: "pass --user <id> (or set DIMSUM_USER) so memories are kept per user",
    });
  }
  return userId;
}

/** Lower-case, trimmed, distinct tags; at most 20 of at most 40 characters. */
export function cleanTags(tags: readonly string[] | undefined): string[] {
  const out = new Set<string>();
  for (const tag of tags ?? []) {
    const clean = String(tag).trim().toLowerCase().replace(/\s+/g, "-").slice(0, MAX_TAG_CHARS);
    if (clean !== "") out.add(clean);
    if (out.size >= MAX_TAGS) break;
  }
  return [...out];
}

/** Validates a RememberInput; throws DimsumError('tool_args') naming the field to fix. */
export function cleanInput(input: RememberInput, maxChars = MAX_MEMORY_CHARS): CleanInput {
  const userId = requireUser(input.userId);
  const text = String(input.text ?? "")
    .trim()
    .replace(/\s+\n/g, "\n");
  if (text === "") {
    throw new DimsumError("tool_args", "A memory needs text; the text was empty.", {
      hint: "write one self-contained fact, event or instruction",
    });
  }
  if (text.length > maxChars) {
    throw new DimsumError(
      "tool_args",
      `A memory may hold at most ${maxChars} characters; this one has ${text.length}.`,
      {
        hint: "split it into several shorter memories, one fact each",
      },
    );
  }
  if (!MEMORY_TYPES.includes(input.type)) {
    throw new DimsumError("tool_args", `Unknown memory type "${String(input.type)}".`, {
      hint: `use one of ${MEMORY_TYPES.join(", ")}`,
    });
  }
  const importance = Math.round(Number(input.importance ?? 5));
  const confidence = Number(input.confidence ?? 1);
  return {
    userId,
    agentId: input.agentId?.trim() || undefined,
    type: input.type,
    text,
    tags: cleanTags(input.tags),
    importance: Number.isFinite(importance) ? Math.min(10, Math.max(1, importance)) : 5,
    confidence: Number.isFinite(confidence) ? Math.min(1, Math.max(0, confidence)) : 1,
    sourceSessionId: input.sourceSessionId || undefined,
    sourceRunId: input.sourceRunId || undefined,
  };
}

/**
 * The text a merge keeps: the newer one, unless it is shorter and says nothing the older one does
 * not (all its terms are already there), in which case the older, fuller text stays.
 */
export function mergedText(oldText: string, newText: string): string {
  if (normalizeText(oldText) === normalizeText(newText)) return newText;
  if (newText.length >= oldText.length) return newText;
  const oldTerms = new Set(queryTerms(oldText));
  return queryTerms(newText).every((t) => oldTerms.has(t)) ? oldText : newText;
}
