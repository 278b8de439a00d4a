/**
 * Keeps the live context inside the model's window. In order of cost: prune old tool results, then
 * summarise older turns into the session summary (folding in the previous one), and if that fails or
 * is not enough, drop the oldest turns. Full history stays in the store; only the live view shrinks.
 */
import { toDimsumError } from "../errors.js";
import type { Context, Message, ModelSpec, StreamFunction } from "../llm/types.js";
import {
  buildSummaryPrompt,
  estimateContextTokens,
  estimateMessageTokens,
  planCompaction,
  pruneToolResults,
  type TokenCounter,
  truncateOldestFirst,
} from "./context/index.js";
import type { AgentEvent } from "./events.js";

export interface CompactionSettings {
  /** Share of the window that may be used before compacting (default 0.75). */
  threshold: number;
  /** Share of the window kept verbatim as recent turns (default 0.25). */
  keepRecentShare: number;
  /** Tokens left free for the answer (default: the model's output limit, capped at a quarter of the window). */
  reserveOutput?: number;
}

export const defaultCompactionSettings: CompactionSettings = { threshold: 0.75, keepRecentShare: 0.25 };

/** One live message: the stored id (when persisted) and the message itself. */
export interface LiveMessage {
  id?: number;
  message: Message;
}

export interface CompactionInput {
  runId: string;
  model: ModelSpec;
  stream: StreamFunction;
  counter: TokenCounter;
  settings: CompactionSettings;
  live: LiveMessage[];
  summary: string | undefined;
  /** Context without messages (system layers and tools): what the messages must fit beside. */
  frame: Context;
  signal: AbortSignal;
  /** Force summarising even under the threshold (`/compact`). */
  force?: boolean;
}

export interface CompactionOutcome {
  /** Live messages after summarising (persisted cut). */
  live: LiveMessage[];
  summary: string | undefined;
  /** Messages to send this time; may be pruned or truncated beyond `live`. */
  messages: Message[];
  /** Set when the summary changed: persist it with the cut at this message id. */
  compactedUpto?: number;
  events: AgentEvent[];
}

/** The token budget for messages: the usable window minus what the frame (system, tools) takes. */
export function messageBudget(
  input: Pick<CompactionInput, "model" | "settings" | "frame" | "counter">,
): number {
  const { model, settings } = input;
  const reserve =
    settings.reserveOutput ?? Math.min(model.maxOutputTokens ?? 4_096, Math.floor(model.contextWindow / 4));
  const usable = Math.min(model.contextWindow * settings.threshold, model.contextWindow - reserve);
  return Math.max(0, Math.floor(usable - estimateContextTokens(input.frame, input.counter)));
}

function tokensOf(messages: Message[], counter: TokenCounter): number {
  let total = 0;
  for (const m of messages) total += estimateMessageTokens(m, counter);
  return total;
}

/** Shrinks the live context until it fits the budget, cheapest step first. */
export async function compact(input: CompactionInput): Promise<CompactionOutcome> {
  const { counter, runId } = input;
  const budget = messageBudget(input);
  const keepRecentTokens = input.force
    ? 0
    : Math.floor(input.model.contextWindow * input.settings.keepRecentShare);
  const messages = input.live.map((m) => m.message);
  const before = tokensOf(messages, counter);
  const events: AgentEvent[] = [];
  const outcome: CompactionOutcome = { live: input.live, summary: input.summary, messages, events };
  if (!input.force && before <= budget) return outcome;

  if (!input.force) {
    const pruned = pruneToolResults(messages, {
      protectRecentTokens: keepRecentTokens,
      minChars: 400,
      counter,
    });
    if (pruned.prunedCount > 0) {
      const after = tokensOf(pruned.messages, counter);
      events.push({
        type: "compaction",
        runId,
        method: "prune",
        messagesRemoved: 0,
        tokensBefore: before,
        tokensAfter: after,
        note: `pruned ${pruned.prunedCount} old tool results`,
      });
      outcome.messages = pruned.messages;
      if (after <= budget) return outcome;
    }
  }

  const plan = planCompaction(messages, { keepRecentTokens, targetTokens: budget, counter });
  let summaryFailure: string | undefined;
  if (plan.summarize.length > 0) {
    try {
      const summary = await summarise(input, plan.summarize, budget);
      const kept = input.live.slice(plan.cutIndex);
      const last = input.live[plan.cutIndex - 1];
      outcome.live = kept;
      outcome.summary = summary;
      outcome.messages = kept.map((m) => m.message);
      if (last?.id !== undefined) outcome.compactedUpto = last.id;
      const after = tokensOf(outcome.messages, counter);
      events.push({
        type: "compaction",
        runId,
        method: "summary",
        messagesRemoved: plan.cutIndex,
        tokensBefore: before,
        tokensAfter: after,
      });
      if (after <= budget) return outcome;
    } catch (err) {
      summaryFailure = toDimsumError(err).message;
    }
  } else if (input.force) {
    return outcome;
  }

  const truncated = truncateOldestFirst(outcome.messages, budget, counter);
  outcome.messages = truncated.messages;
  const reason = summaryFailure ? `summarising failed (${summaryFailure}); ` : "";
  events.push({
    type: "compaction",
    runId,
    method: "truncate",
    messagesRemoved: truncated.droppedCount,
    tokensBefore: before,
    tokensAfter: tokensOf(truncated.messages, counter),
    note: `${reason}${truncated.note ?? "dropped oldest turns"}`,
  });
  return outcome;
}

/** Asks the model for a summary that folds in the previous one. Throws on failure or an empty answer. */
async function summarise(input: CompactionInput, toSummarize: Message[], budget: number): Promise<string> {
  // The summariser's own input must fit too: cut the transcript oldest-first if needed.
  const fitted = truncateOldestFirst(toSummarize, Math.max(1_000, budget), input.counter).messages;
  const context = buildSummaryPrompt(input.summary, fitted);
  let text = "";
  for await (const event of input.stream(input.model, context, {
    signal: input.signal,
    toolChoice: "none",
  })) {
    if (event.type === "text_delta") text += event.text;
    else if (event.type === "error") throw event.error;
  }
  const summary = text.trim();
  if (!summary) throw new Error("the model returned an empty summary");
  return summary;
}
