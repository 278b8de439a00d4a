/**
 * Deciding when to compact and what to compact: the trigger, the cut between messages that get
 * summarised and the recent turns that stay verbatim, and the cheap first step of pruning old tool
 * results. Pure functions; the agent loop calls the model with the plan.
 */
import { DimsumError } from "../../errors.js";
import type { ImagePart, Message, TextPart, ToolResultMessage } from "../../llm/types.js";
import { chooseCut, legalCutPoints, suffixTokens } from "./cut-points.js";
import { defaultTokenCounter, estimateMessageTokens, type TokenCounter } from "./tokens.js";

export interface ShouldCompactInput {
  estimatedTokens: number;
  contextWindow: number;
  /** Share of the window that may be filled before compacting (0–1]. */
  threshold?: number;
  /** Tokens the answer needs; the input must leave this much of the window free. */
  reserveOutput?: number;
}

/** True when the next request would pass the threshold share of the window or leave too little for output. */
export function shouldCompact(input: ShouldCompactInput): boolean {
  const { estimatedTokens, contextWindow, threshold = 0.75, reserveOutput = 0 } = input;
  if (!(contextWindow > 0)) {
    throw new DimsumError(
      "config",
      `The context window must be a positive token count, got ${contextWindow}.`,
      {
        hint: "Set contextWindow on the model (e.g. 128000).",
      },
    );
  }
  if (!(threshold > 0 && threshold <= 1)) {
    throw new DimsumError("config", `The compaction threshold must be in (0, 1], got ${threshold}.`, {
      hint: "Use a share of the window such as 0.75.",
    });
  }
  const limit = Math.min(contextWindow * threshold, contextWindow - Math.max(0, reserveOutput));
  return estimatedTokens > limit;
}

export interface CompactionPlanOptions {
  /** How much of the recent conversation to keep verbatim. 0 keeps only the last whole turn (`/compact`). */
  keepRecentTokens: number;
  /** Hard ceiling for the kept messages (what the window allows after system, summary and tools). */
  targetTokens: number;
  counter?: TokenCounter;
}

export interface CompactionPlan {
  /** Oldest messages, to be folded into the summary. Empty when no legal cut exists. */
  summarize: Message[];
  /** Recent messages kept verbatim; starts with a user message whenever `summarize` is not empty. */
  keep: Message[];
  /** `summarize.length`: the index in the input where `keep` starts. */
  cutIndex: number;
  summarizeTokens: number;
  keepTokens: number;
  /** False when even the smallest whole tail exceeds `targetTokens`; the caller must truncate as well. */
  withinTarget: boolean;
}

/**
 * Splits the conversation at the earliest turn boundary whose tail fits the keep budget, keeping at
 * least the last turn, never splitting a turn or separating a tool call from its results.
 */
export function planCompaction(messages: readonly Message[], options: CompactionPlanOptions): CompactionPlan {
  const counter = options.counter ?? defaultTokenCounter;
  const { suffix } = suffixTokens(messages, counter);
  const budget = Math.max(0, Math.min(options.keepRecentTokens, options.targetTokens));
  const cutIndex = chooseCut(legalCutPoints(messages), suffix, budget);
  const total = suffix[0] ?? 0;
  const keepTokens = suffix[cutIndex] ?? 0;
  return {
    summarize: messages.slice(0, cutIndex),
    keep: messages.slice(cutIndex),
    cutIndex,
    summarizeTokens: total - keepTokens,
    keepTokens,
    withinTarget: keepTokens <= options.targetTokens,
  };
}

export interface PruneOptions {
  /** Tool results within this many tokens of the end stay intact. */
  protectRecentTokens: number;
  /** Results shorter than this are not worth pruning. */
  minChars: number;
  counter?: TokenCounter;
}

export interface PruneResult {
  messages: Message[];
  savedTokens: number;
  prunedCount: number;
}

const PRUNED_PREFIX = "[tool result pruned:";

/**
 * Replaces old tool results (outside the protected recent window) with a short placeholder, the cheap
 * step before whole messages are dropped. Results the model has not answered yet are always kept.
 */
export function pruneToolResults(messages: readonly Message[], options: PruneOptions): PruneResult {
  const counter = options.counter ?? defaultTokenCounter;
  const out = messages.slice();
  let trailingResults = out.length;
  while (trailingResults > 0 && out[trailingResults - 1]?.role === "tool") trailingResults--;

  let savedTokens = 0;
  let prunedCount = 0;
  let tailTokens = 0;
  for (let i = out.length - 1; i >= 0; i--) {
    const message = out[i];
    if (message === undefined) continue;
    // A message that starts inside the window is protected, so the newest one always is (if the window > 0).
    const protectedMessage = i >= trailingResults || tailTokens < options.protectRecentTokens;
    const before = estimateMessageTokens(message, counter);
    tailTokens += before;
    if (protectedMessage || message.role !== "tool") continue;
    const pruned = prunedResult(message, options.minChars);
    if (pruned === undefined) continue;
    out[i] = pruned;
    savedTokens += before - estimateMessageTokens(pruned, counter);
    prunedCount++;
  }
  return { messages: out, savedTokens, prunedCount };
}

function prunedResult(message: ToolResultMessage, minChars: number): ToolResultMessage | undefined {
  const { chars, images } = measureContent(message.content);
  if (typeof message.content === "string" && message.content.startsWith(PRUNED_PREFIX)) return undefined;
  if (chars < minChars && images === 0) return undefined;
  const imageNote = images === 0 ? "" : `, ${images} image${images === 1 ? "" : "s"}`;
  const pruned: ToolResultMessage = {
    ...message,
    content: `${PRUNED_PREFIX} ${chars} chars${imageNote}]`,
  };
  return pruned;
}

function measureContent(content: string | Array<TextPart | ImagePart>): { chars: number; images: number } {
  if (typeof content === "string") return { chars: content.length, images: 0 };
  let chars = 0;
  let images = 0;
  for (const part of content) {
    if (part.type === "text") chars += part.text.length;
    else images++;
  }
  return { chars, images };
}
