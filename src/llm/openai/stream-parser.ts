/**
 * Translates a Chat Completions SSE stream (OpenAI and the many servers that copy it) into ModelEvents.
 * Vendor differences handled here are catalogued in ../shared/fixtures/provider-streams/README.md.
 */
import { DimsumError } from "../../errors.js";
import type { SseEvent, StreamParser } from "../adapter.js";
import { AssistantMessageBuilder } from "../message-builder.js";
import type { FinishReason, ModelEvent, ModelSpec, Usage } from "../types.js";
import { streamError } from "./error-message.js";
import { asArray, asRecord, asString, type JsonRecord } from "./json.js";
import { ToolCallAssembler } from "./tool-call-assembler.js";
import { mapFinishReason, toUsage } from "./usage.js";

/** A parser for one streamed response of `model`. */
export function createParser(model: ModelSpec): StreamParser {
  return new ChatCompletionsParser(model.provider);
}

/** Stateful parser; also fed whole non-streaming bodies by `parseChatCompletion`. */
export class ChatCompletionsParser implements StreamParser {
  private readonly builder = new AssistantMessageBuilder();
  private readonly toolCalls = new ToolCallAssembler();
  private responseId: string | undefined;
  private model: string | undefined;
  private rawFinishReason: string | undefined;
  /** The last non-null top-level `usage`: the one every vendor means as final. */
  private usage: Usage | undefined;
  /** Usage found elsewhere (Groq `x_groq.usage`, Kimi `choices[].usage`), used only when no top-level one came. */
  private fallbackUsage: Usage | undefined;
  private refused = false;
  private sawDone = false;
  private ended = false;

  constructor(private readonly provider: string) {}

  push(event: SseEvent): ModelEvent[] {
    if (this.ended || this.sawDone) return [];
    const data = event.data.trim();
    if (data === "") return [];
    if (data === "[DONE]") {
      this.sawDone = true;
      return [];
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      return this.fail(
        new DimsumError(
          "provider_unavailable",
          `${this.provider} sent a stream chunk that is not JSON: ${data.slice(0, 200)}`,
          {
            hint: "check that the base URL points at an OpenAI-compatible /v1 endpoint",
          },
        ),
      );
    }
    const chunk = asRecord(parsed);
    if (!chunk) return [];
    if (chunk.error !== undefined && chunk.error !== null)
      return this.fail(streamError(chunk, this.provider));
    // A few servers send `event: error` with the bare error object as data.
    if (event.event === "error") return this.fail(streamError({ error: chunk }, this.provider));
    return this.pushChunk(chunk);
  }

  /** Folds one parsed chunk (or a whole completion, its `message` standing in for `delta`). */
  pushChunk(chunk: JsonRecord): ModelEvent[] {
    this.responseId ||= asString(chunk.id) || undefined;
    this.model ||= asString(chunk.model) || undefined;
    const usage = asRecord(chunk.usage);
    if (usage) this.usage = toUsage(usage) ?? this.usage;
    const groqUsage = asRecord(asRecord(chunk.x_groq)?.usage);
    if (groqUsage) this.fallbackUsage = toUsage(groqUsage) ?? this.fallbackUsage;

    const out: ModelEvent[] = [];
    for (const item of asArray(chunk.choices) ?? []) {
      const choice = asRecord(item);
      // n > 1 is never requested; ignore any other choice rather than interleave two answers.
      if (!choice || (choice.index !== undefined && choice.index !== 0)) continue;
      const choiceUsage = asRecord(choice.usage);
      if (choiceUsage) this.fallbackUsage = toUsage(choiceUsage) ?? this.fallbackUsage;
      const delta = asRecord(choice.delta) ?? asRecord(choice.message);
      if (delta) this.pushDelta(delta, out);
      const finish = asString(choice.finish_reason);
      if (finish) {
        this.rawFinishReason = finish;
        // Arguments are complete once a finish reason arrives; usage may still follow in a later chunk.
        this.flushToolCalls(out);
      }
    }
    return out;
  }

  finish(): ModelEvent[] {
    if (this.ended) return [];
    if (this.rawFinishReason === undefined && !this.sawDone) {
      return this.fail(
        new DimsumError(
          "provider_unavailable",
          `The ${this.provider} stream ended early, before the model finished.`,
          {
            hint: "the connection dropped mid-response; try again, and check any proxy between you and the server",
          },
        ),
      );
    }
    this.ended = true;
    const out: ModelEvent[] = [];
    this.flushToolCalls(out);
    const usage = this.usage ?? this.fallbackUsage;
    if (usage) out.push({ type: "usage", usage });
    const done: Extract<ModelEvent, { type: "done" }> = {
      type: "done",
      finishReason: this.finishReason(),
      message: this.builder.build(),
    };
    if (this.rawFinishReason !== undefined) done.rawFinishReason = this.rawFinishReason;
    if (usage) done.usage = usage;
    if (this.responseId) done.responseId = this.responseId;
    if (this.model) done.model = this.model;
    out.push(done);
    return out;
  }

  private pushDelta(delta: JsonRecord, out: ModelEvent[]): void {
    // vLLM/OpenRouter/Ollama name the field `reasoning`; some servers send both with the same text.
    const reasoning =
      asString(delta.reasoning_content) || asString(delta.reasoning) || reasoningDetailsText(delta);
    if (reasoning) this.reasoning(reasoning, out);
    const content = delta.content;
    if (typeof content === "string") this.text(content, out);
    else for (const part of asArray(content) ?? []) this.contentPart(asRecord(part), out);
    const refusal = asString(delta.refusal);
    if (refusal) {
      this.refused = true;
      this.text(refusal, out);
    }
    for (const call of asArray(delta.tool_calls) ?? []) {
      const record = asRecord(call);
      if (record) this.toolCalls.add(record);
    }
  }

  // Mistral sends typed parts: `text`, and `thinking` wrapping a string or nested `text` parts.
  private contentPart(part: JsonRecord | undefined, out: ModelEvent[]): void {
    if (part?.type === "text") this.text(asString(part.text) ?? "", out);
    if (part?.type !== "thinking") return;
    if (typeof part.thinking === "string") this.reasoning(part.thinking, out);
    for (const inner of asArray(part.thinking) ?? []) {
      const text = asString(asRecord(inner)?.text);
      if (text) this.reasoning(text, out);
    }
  }

  private text(text: string, out: ModelEvent[]): void {
    if (text === "") return;
    this.builder.text(text);
    out.push({ type: "text_delta", text });
  }

  private reasoning(text: string, out: ModelEvent[]): void {
    if (text === "") return;
    this.builder.reasoning(text);
    out.push({ type: "reasoning_delta", text });
  }

  private flushToolCalls(out: ModelEvent[]): void {
    for (const call of this.toolCalls.drain()) {
      this.builder.toolCall(call);
      out.push({ type: "tool_call", call });
    }
  }

  private finishReason(): FinishReason {
    const mapped = this.rawFinishReason === undefined ? "stop" : mapFinishReason(this.rawFinishReason);
    // Several servers say `stop` (or something unknown) after emitting calls; the calls are what matter.
    if (this.toolCalls.count > 0 && (mapped === "stop" || mapped === "other")) return "tool_calls";
    if (this.refused && mapped === "stop") return "refusal";
    return mapped;
  }

  private fail(error: DimsumError): ModelEvent[] {
    this.ended = true;
    return [{ type: "error", error }];
  }
}

/** MiniMax's `reasoning_details: [{type: "reasoning.text", text}]` (with `reasoning_split`), as text. */
function reasoningDetailsText(delta: JsonRecord): string {
  let text = "";
  for (const detail of asArray(delta.reasoning_details) ?? []) text += asString(asRecord(detail)?.text) ?? "";
  return text;
}
