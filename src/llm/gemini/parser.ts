/** Translates Gemini `streamGenerateContent?alt=sse` chunks into ModelEvents. */
import { randomBytes } from "node:crypto";
import { DimsumError } from "../../errors.js";
import type { SseEvent, StreamParser } from "../adapter.js";
import { AssistantMessageBuilder } from "../message-builder.js";
import type { FinishReason, ModelEvent, ToolCall, Usage } from "../types.js";
import { geminiStreamError } from "./errors.js";
import { applyPartialArg } from "./partial-args.js";
import type {
  GeminiFunctionCall,
  GeminiPart,
  GeminiResponseChunk,
  GeminiUsageMetadata,
} from "./wire-types.js";

const CONTENT_FILTER_REASONS = new Set([
  "SAFETY",
  "RECITATION",
  "BLOCKLIST",
  "PROHIBITED_CONTENT",
  "SPII",
  "IMAGE_SAFETY",
]);

/** A function call whose arguments are still streaming in. */
interface PendingCall {
  name: string;
  args: Record<string, unknown>;
  signature: string | undefined;
}

function hasCounts(usage: GeminiUsageMetadata): boolean {
  return (
    usage.promptTokenCount !== undefined ||
    usage.candidatesTokenCount !== undefined ||
    usage.totalTokenCount !== undefined
  );
}

/** Stateful parser for one Gemini response stream. */
export class GeminiStreamParser implements StreamParser {
  private readonly builder = new AssistantMessageBuilder();
  /** Gemini gives calls no ids; ours are unique per response and across responses. */
  private readonly idPrefix = randomBytes(4).toString("hex");
  private callCount = 0;
  private pending: PendingCall | undefined;
  private responseId: string | undefined;
  private model: string | undefined;
  private usageMetadata: GeminiUsageMetadata | undefined;
  private finishReason: string | undefined;
  private finishMessage: string | undefined;
  private blockReason: string | undefined;
  private blockMessage: string | undefined;
  private failure: DimsumError | undefined;

  /** Translates one SSE event. A stream error is held back and reported by `finish`, as the final event. */
  push(event: SseEvent): ModelEvent[] {
    const data = event.data.trim();
    if (this.failure || data === "" || data === "[DONE]") return [];
    let chunk: GeminiResponseChunk;
    try {
      chunk = JSON.parse(data) as GeminiResponseChunk;
    } catch {
      this.failure = new DimsumError(
        "provider_unavailable",
        `Gemini sent an event that is not JSON: ${data.slice(0, 200)}`,
        {
          hint: "A proxy between Dimsum and Gemini may be altering the stream; retry or check it.",
        },
      );
      return [];
    }
    if (chunk.error) {
      this.failure = geminiStreamError(chunk.error);
      return [];
    }
    this.responseId ||= chunk.responseId || undefined;
    this.model ||= chunk.modelVersion || undefined;
    // usageMetadata is cumulative: the latest chunk with counts has the totals.
    if (chunk.usageMetadata && hasCounts(chunk.usageMetadata)) this.usageMetadata = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason) {
      this.blockReason = chunk.promptFeedback.blockReason;
      this.blockMessage = chunk.promptFeedback.blockReasonMessage;
    }
    const candidate = chunk.candidates?.[0];
    if (!candidate) return [];
    const out: ModelEvent[] = [];
    for (const part of candidate.content?.parts ?? []) out.push(...this.onPart(part));
    if (candidate.finishReason) {
      this.finishReason = candidate.finishReason;
      this.finishMessage = candidate.finishMessage;
    }
    return out;
  }

  /** Returns any call still open, `usage` (when known), then `done`; or `error` for a failed or cut stream. */
  finish(): ModelEvent[] {
    const out: ModelEvent[] = [];
    if (this.pending && this.finishReason && !this.failure) out.push(this.closePending());
    const usage = this.usage();
    if (usage) out.push({ type: "usage", usage });
    if (this.failure) return [...out, { type: "error", error: this.failure }];
    const raw = this.blockReason ?? this.finishReason;
    if (raw === undefined) {
      const error = new DimsumError(
        "provider_unavailable",
        "The Gemini stream ended early, without a finishReason; the response is incomplete.",
        {
          hint: "Retry the request; if it keeps happening, check proxies or timeouts on the way to the API.",
          retryable: true,
        },
      );
      return [...out, { type: "error", error }];
    }
    const done: Extract<ModelEvent, { type: "done" }> = {
      type: "done",
      finishReason: this.blockReason ? "content_filter" : this.mapFinishReason(raw),
      rawFinishReason: raw,
      message: this.builder.build(),
    };
    if (usage) done.usage = usage;
    if (this.responseId) done.responseId = this.responseId;
    if (this.model) done.model = this.model;
    const details = this.blockReason ? this.blockMessage : this.finishMessage;
    if (details) done.stopDetails = { message: details };
    return [...out, done];
  }

  private onPart(part: GeminiPart): ModelEvent[] {
    if (part.functionCall) return this.onFunctionCall(part.functionCall, part.thoughtSignature);
    if (typeof part.text !== "string") {
      // Gemini may put a signature on a part we otherwise ignore; keep it so it is echoed back.
      if (part.thoughtSignature) this.builder.text("", part.thoughtSignature);
      return [];
    }
    if (part.thought) {
      if (part.text !== "") this.builder.reasoning(part.text);
      // Gemini's signatures are kept on text parts; reasoning signatures are Anthropic's (see types.ts).
      if (part.thoughtSignature) this.builder.text("", part.thoughtSignature);
      return part.text === "" ? [] : [{ type: "reasoning_delta", text: part.text }];
    }
    this.builder.text(part.text, part.thoughtSignature);
    return part.text === "" ? [] : [{ type: "text_delta", text: part.text }];
  }

  /**
   * Complete calls arrive as `{name, args}`. Streamed calls open with `{name, willContinue: true}`,
   * continue with `partialArgs` pieces and close with a part that no longer continues (often `{}`).
   */
  private onFunctionCall(call: GeminiFunctionCall, signature: string | undefined): ModelEvent[] {
    const out: ModelEvent[] = [];
    if (call.name) {
      if (this.pending) out.push(this.closePending());
      this.pending = { name: call.name, args: { ...(call.args ?? {}) }, signature };
    } else if (this.pending) {
      if (signature && !this.pending.signature) this.pending.signature = signature;
    } else if (call.partialArgs?.length || call.willContinue) {
      // Arguments without an opening name: keep them so they are reported rather than lost.
      this.pending = { name: "", args: {}, signature };
    } else {
      return out;
    }
    for (const arg of call.partialArgs ?? []) applyPartialArg(this.pending.args, arg);
    if (call.willContinue !== true) out.push(this.closePending());
    return out;
  }

  private closePending(): ModelEvent {
    const pending = this.pending as PendingCall;
    this.pending = undefined;
    const call: ToolCall = {
      id: `call_${this.callCount}_${this.idPrefix}`,
      name: pending.name,
      arguments: JSON.stringify(pending.args),
    };
    if (pending.signature) call.signature = pending.signature;
    this.callCount += 1;
    this.builder.toolCall(call);
    return { type: "tool_call", call };
  }

  private mapFinishReason(raw: string): FinishReason {
    if (raw === "STOP") return this.callCount > 0 ? "tool_calls" : "stop";
    if (raw === "MAX_TOKENS") return "length";
    if (CONTENT_FILTER_REASONS.has(raw)) return "content_filter";
    return "other";
  }

  private usage(): Usage | undefined {
    const u = this.usageMetadata;
    if (!u) return undefined;
    const inputTokens = u.promptTokenCount ?? 0;
    const outputTokens = u.candidatesTokenCount ?? 0;
    const usage: Usage = {
      inputTokens,
      outputTokens,
      totalTokens: u.totalTokenCount ?? inputTokens + outputTokens + (u.thoughtsTokenCount ?? 0),
    };
    if (u.thoughtsTokenCount !== undefined) usage.reasoningTokens = u.thoughtsTokenCount;
    if (u.cachedContentTokenCount !== undefined) usage.cachedInputTokens = u.cachedContentTokenCount;
    return usage;
  }
}
