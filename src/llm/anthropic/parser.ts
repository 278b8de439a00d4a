/** Translates Anthropic Messages SSE events into ModelEvents. */
import { DimsumError } from "../../errors.js";
import type { SseEvent, StreamParser } from "../adapter.js";
import { AssistantMessageBuilder } from "../message-builder.js";
import type { FinishReason, ModelEvent, Usage } from "../types.js";
import { anthropicStreamError } from "./errors.js";
import type {
  AnthropicStreamEvent,
  AnthropicUsage,
  AnthropicWireBlock,
  AnthropicWireDelta,
} from "./wire-types.js";

type BlockState =
  | { kind: "text" }
  | { kind: "thinking"; hasText: boolean; signed: boolean }
  | { kind: "tool"; id: string; name: string; json: string; initialInput: unknown }
  /** Server-side tools and unknown blocks: Anthropic runs them, so nothing reaches the tool loop. */
  | { kind: "ignored" };

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "refusal",
  pause_turn: "other",
};

function num(value: number | null | undefined): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** A value from `message_start` unless it is missing or zero there (some proxies only fill it in later). */
function preferStart(start: number | undefined, later: number | undefined): number | undefined {
  return start === undefined || (start === 0 && later !== undefined) ? later : start;
}

/** The JSON text for a finished tool_use block: the streamed JSON, else the start block's input. */
function toolArguments(block: Extract<BlockState, { kind: "tool" }>): string {
  if (block.json.trim() !== "") return block.json;
  const input = block.initialInput;
  if (input !== null && typeof input === "object" && Object.keys(input).length > 0)
    return JSON.stringify(input);
  return "{}";
}

/** Stateful parser for one Anthropic response stream. */
export class AnthropicStreamParser implements StreamParser {
  private readonly builder = new AssistantMessageBuilder();
  private readonly blocks = new Map<number, BlockState>();
  private started = false;
  private stopped = false;
  private responseId: string | undefined;
  private model: string | undefined;
  private startUsage: AnthropicUsage = {};
  private deltaUsage: AnthropicUsage = {};
  private stopReason: string | undefined;
  private stopDetails: unknown;
  private failure: DimsumError | undefined;
  /** Whether the builder's latest part is reasoning, so a text-less thinking block needs its own part. */
  private lastWasReasoning = false;

  /** Translates one SSE event. A stream error is held back and reported by `finish`, as the final event. */
  push(event: SseEvent): ModelEvent[] {
    if (this.failure || event.data.trim() === "") return [];
    let payload: AnthropicStreamEvent;
    try {
      payload = JSON.parse(event.data) as AnthropicStreamEvent;
    } catch {
      this.failure = new DimsumError(
        "provider_unavailable",
        `Anthropic sent an event that is not JSON: ${event.data.slice(0, 200)}`,
        { hint: "A proxy between Dimsum and Anthropic may be altering the stream; retry or check it." },
      );
      return [];
    }
    switch (payload.type ?? event.event) {
      case "message_start":
        this.onMessageStart(payload);
        return [];
      case "content_block_start":
        return this.onBlockStart(payload.index ?? 0, payload.content_block);
      case "content_block_delta":
        return this.onBlockDelta(payload.index ?? 0, payload.delta);
      case "content_block_stop":
        return this.onBlockStop(payload.index ?? 0);
      case "message_delta":
        this.onMessageDelta(payload);
        return [];
      case "message_stop":
        this.stopped = true;
        return [];
      case "error":
        this.failure = anthropicStreamError(payload.error);
        return [];
      default:
        // ping and event types added after this was written carry nothing we need
        return [];
    }
  }

  /** Returns `usage` (when known) and then `done`, or `error` when the stream failed or was cut short. */
  finish(): ModelEvent[] {
    const usage = this.usage();
    const out: ModelEvent[] = usage ? [{ type: "usage", usage }] : [];
    if (this.failure) return [...out, { type: "error", error: this.failure }];
    if (!this.stopped) {
      const error = new DimsumError(
        "provider_unavailable",
        this.started
          ? "The Anthropic stream ended early, before message_stop; the response is incomplete."
          : "The Anthropic stream ended early, before message_start; no response was received.",
        {
          hint: "Retry the request; if it keeps happening, check proxies or timeouts on the way to the API.",
          retryable: true,
        },
      );
      return [...out, { type: "error", error }];
    }
    const done: Extract<ModelEvent, { type: "done" }> = {
      type: "done",
      finishReason: this.stopReason === undefined ? "other" : (FINISH_REASONS[this.stopReason] ?? "other"),
      message: this.builder.build(),
    };
    if (this.stopReason !== undefined) done.rawFinishReason = this.stopReason;
    if (usage) done.usage = usage;
    if (this.responseId) done.responseId = this.responseId;
    if (this.model) done.model = this.model;
    if (this.stopDetails !== undefined && this.stopDetails !== null) done.stopDetails = this.stopDetails;
    return [...out, done];
  }

  private onMessageStart(payload: AnthropicStreamEvent): void {
    // Some servers repeat message_start; the first one describes the message.
    if (this.started) return;
    this.started = true;
    this.responseId = payload.message?.id || undefined;
    this.model = payload.message?.model || undefined;
    this.startUsage = payload.message?.usage ?? {};
  }

  private onBlockStart(index: number, block: AnthropicWireBlock | undefined): ModelEvent[] {
    const out: ModelEvent[] = [];
    switch (block?.type) {
      case "text":
        this.blocks.set(index, { kind: "text" });
        if (block.text) out.push(...this.text(block.text));
        break;
      case "thinking": {
        const state: BlockState = { kind: "thinking", hasText: false, signed: false };
        this.blocks.set(index, state);
        if (block.thinking) out.push(...this.thinking(state, block.thinking));
        if (block.signature) this.sign(state, block.signature);
        break;
      }
      case "redacted_thinking":
        this.blocks.set(index, { kind: "ignored" });
        if (block.data) {
          this.builder.redactedReasoning(block.data);
          this.lastWasReasoning = true;
        }
        break;
      case "tool_use":
        this.blocks.set(index, {
          kind: "tool",
          id: block.id ?? `toolu_missing_${index}`,
          name: block.name ?? "",
          json: "",
          initialInput: block.input,
        });
        break;
      default:
        this.blocks.set(index, { kind: "ignored" });
    }
    return out;
  }

  private onBlockDelta(index: number, delta: AnthropicWireDelta | undefined): ModelEvent[] {
    const block = this.blocks.get(index);
    if (!block || !delta) return [];
    if (delta.type === "text_delta" && block.kind === "text" && delta.text) return this.text(delta.text);
    if (delta.type === "thinking_delta" && block.kind === "thinking" && delta.thinking) {
      return this.thinking(block, delta.thinking);
    }
    if (delta.type === "signature_delta" && block.kind === "thinking" && delta.signature) {
      this.sign(block, delta.signature);
    } else if (delta.type === "input_json_delta" && block.kind === "tool" && delta.partial_json) {
      block.json += delta.partial_json;
    }
    return [];
  }

  private onBlockStop(index: number): ModelEvent[] {
    const block = this.blocks.get(index);
    this.blocks.delete(index);
    if (block?.kind !== "tool") return [];
    const call = { id: block.id, name: block.name, arguments: toolArguments(block) };
    this.builder.toolCall(call);
    this.lastWasReasoning = false;
    return [{ type: "tool_call", call }];
  }

  private onMessageDelta(payload: AnthropicStreamEvent): void {
    const delta = payload.delta;
    if (delta?.stop_reason) this.stopReason = delta.stop_reason;
    if (delta?.stop_details !== undefined && delta.stop_details !== null)
      this.stopDetails = delta.stop_details;
    if (payload.usage) this.deltaUsage = { ...this.deltaUsage, ...payload.usage };
  }

  private text(text: string): ModelEvent[] {
    this.builder.text(text);
    this.lastWasReasoning = false;
    return [{ type: "text_delta", text }];
  }

  private thinking(block: Extract<BlockState, { kind: "thinking" }>, text: string): ModelEvent[] {
    this.builder.reasoning(text);
    block.hasText = true;
    this.lastWasReasoning = true;
    return [{ type: "reasoning_delta", text }];
  }

  /** Signs the block's reasoning part (signatures may arrive in pieces, which the builder joins). */
  private sign(block: Extract<BlockState, { kind: "thinking" }>, signature: string): void {
    if (!block.hasText && !block.signed && this.lastWasReasoning) {
      // A thinking block without text would otherwise extend the previous block's signature. The
      // builder has no "start a reasoning part" call; an empty text part with an empty signature
      // separates the two and is dropped again by build().
      this.builder.text("", "");
    }
    this.builder.reasoningSignature(signature);
    block.signed = true;
    this.lastWasReasoning = true;
  }

  /** Input counts come from message_start, the output count from the last message_delta. */
  private usage(): Usage | undefined {
    const s = this.startUsage;
    const d = this.deltaUsage;
    const input = preferStart(num(s.input_tokens), num(d.input_tokens));
    const cacheRead = preferStart(num(s.cache_read_input_tokens), num(d.cache_read_input_tokens));
    const cacheWrite = preferStart(num(s.cache_creation_input_tokens), num(d.cache_creation_input_tokens));
    const output = num(d.output_tokens) ?? num(s.output_tokens);
    if (input === undefined && output === undefined) return undefined;
    const inputTokens = (input ?? 0) + (cacheRead ?? 0) + (cacheWrite ?? 0);
    const outputTokens = output ?? 0;
    const usage: Usage = { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
    const thinking =
      num(d.output_tokens_details?.thinking_tokens) ?? num(s.output_tokens_details?.thinking_tokens);
    if (thinking !== undefined) usage.reasoningTokens = thinking;
    if (cacheRead !== undefined) usage.cachedInputTokens = cacheRead;
    // Zero writes are left out, as in every protocol without cache writes.
    if (cacheWrite) usage.cacheWriteTokens = cacheWrite;
    return usage;
  }
}
