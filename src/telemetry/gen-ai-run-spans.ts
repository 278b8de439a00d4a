/**
 * Reads one run's agent events into OpenTelemetry GenAI spans and metrics: `invoke_agent {agent}`
 * for the run, a `chat {model}` child per model call, and an `execute_tool {tool}` child of the call
 * that asked for the tool. Loaded only when an OTLP endpoint is configured.
 */
import {
  type Context,
  context,
  type Histogram,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { AgentEvent } from "../agent/events.js";
import type { ObservedRun, RunObserver } from "../agent/run-observer.js";
import type { ModelSpec, UserMessage } from "../llm/types.js";

export interface GenAiInstruments {
  tracer: Tracer;
  tokenUsage: Histogram;
  operationDuration: Histogram;
  captureContent: boolean;
}

/** `gen_ai.provider.name` of a model: the well-known names of the conventions where they apply. */
export function providerNameOf(model: ModelSpec): string {
  if (model.protocol === "gemini") return "gcp.gemini";
  if (model.provider === "azure") return "azure.ai.openai";
  if (model.provider === "xai") return "x_ai";
  return model.provider;
}

function textOfInput(input: UserMessage["content"]): string {
  return typeof input === "string"
    ? input
    : input.map((p) => (p.type === "text" ? p.text : `[${p.mimeType}]`)).join("");
}

interface OpenChat {
  span: Span;
  ctx: Context;
  started: number;
  text: string;
}

/** One run's spans. */
export class GenAiRunSpans implements RunObserver {
  readonly #in: GenAiInstruments;
  readonly #run: ObservedRun;
  readonly #agentSpan: Span;
  readonly #agentCtx: Context;
  readonly #started = performance.now();
  readonly #base: Record<string, string>;
  #chat: OpenChat | undefined;
  /** The context of the last model call: the tools it asked for are its children. */
  #lastChatCtx: Context | undefined;
  readonly #tools = new Map<string, Span>();
  #ended = false;
  #errorType: string | undefined;

  constructor(instruments: GenAiInstruments, run: ObservedRun) {
    this.#in = instruments;
    this.#run = run;
    this.#base = {
      "gen_ai.provider.name": providerNameOf(run.model),
      "gen_ai.request.model": run.model.id,
    };
    this.#agentSpan = instruments.tracer.startSpan(`invoke_agent ${run.agentId}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        "gen_ai.operation.name": "invoke_agent",
        ...this.#base,
        "gen_ai.agent.id": run.agentId,
        "gen_ai.agent.name": run.agentName ?? run.agentId,
        "gen_ai.conversation.id": run.conversationId,
        "dimsum.run.id": run.runId,
      },
    });
    if (instruments.captureContent && run.input !== "") {
      this.#agentSpan.setAttribute(
        "gen_ai.input.messages",
        JSON.stringify([{ role: "user", parts: [{ type: "text", content: textOfInput(run.input) }] }]),
      );
    }
    this.#agentCtx = trace.setSpan(context.active(), this.#agentSpan);
  }

  record(event: AgentEvent): void {
    if (this.#ended) return;
    switch (event.type) {
      case "turn_start":
        this.#endChat();
        this.#startChat();
        return;
      case "text_delta":
        if (this.#chat && this.#in.captureContent) this.#chat.text += event.text;
        return;
      case "usage":
        this.#finishChat(event);
        return;
      case "tool_call":
        this.#startTool(event);
        return;
      case "tool_result":
        this.#endTool(event);
        return;
      case "done":
        this.#agentSpan.setAttributes({
          "gen_ai.response.model": this.#run.model.id,
          "gen_ai.response.finish_reasons": [event.finishReason],
          "gen_ai.usage.input_tokens": event.usage.inputTokens,
          "gen_ai.usage.output_tokens": event.usage.outputTokens,
          ...(event.usage.cachedInputTokens !== undefined
            ? { "gen_ai.usage.cache_read.input_tokens": event.usage.cachedInputTokens }
            : {}),
        });
        if (this.#in.captureContent) {
          this.#agentSpan.setAttribute(
            "gen_ai.output.messages",
            JSON.stringify([
              {
                role: "assistant",
                parts: [{ type: "text", content: event.answer }],
                finish_reason: event.finishReason,
              },
            ]),
          );
        }
        return;
      case "waiting":
        this.#agentSpan.setAttribute("dimsum.run.status", "waiting");
        return;
      case "error":
        this.#errorType = event.code;
        if (this.#chat) this.#failChat(event.code, event.message);
        for (const span of this.#tools.values()) fail(span, event.code, event.message);
        this.#tools.clear();
        fail(this.#agentSpan, event.code, event.message);
        return;
    }
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    // A run whose reader stopped early (cancelled) ends its open spans as such.
    if (this.#chat) this.#failChat("cancelled", "the run stopped");
    for (const span of this.#tools.values()) fail(span, "cancelled", "the run stopped");
    this.#tools.clear();
    this.#in.operationDuration.record((performance.now() - this.#started) / 1000, {
      "gen_ai.operation.name": "invoke_agent",
      ...this.#base,
      ...(this.#errorType ? { "error.type": this.#errorType } : {}),
    });
    this.#agentSpan.end();
  }

  #startChat(): void {
    const span = this.#in.tracer.startSpan(
      `chat ${this.#run.model.id}`,
      { kind: SpanKind.CLIENT, attributes: { "gen_ai.operation.name": "chat", ...this.#base } },
      this.#agentCtx,
    );
    const ctx = trace.setSpan(this.#agentCtx, span);
    this.#chat = { span, ctx, started: performance.now(), text: "" };
    this.#lastChatCtx = ctx;
  }

  #finishChat(event: Extract<AgentEvent, { type: "usage" }>): void {
    const chat = this.#chat;
    if (!chat) return;
    const { usage } = event;
    chat.span.setAttributes({
      "gen_ai.response.model": this.#run.model.id,
      "gen_ai.usage.input_tokens": usage.inputTokens,
      "gen_ai.usage.output_tokens": usage.outputTokens,
      ...(usage.cachedInputTokens !== undefined
        ? { "gen_ai.usage.cache_read.input_tokens": usage.cachedInputTokens }
        : {}),
      ...(usage.reasoningTokens !== undefined
        ? { "gen_ai.usage.reasoning_tokens": usage.reasoningTokens }
        : {}),
    });
    if (this.#in.captureContent && chat.text !== "") {
      chat.span.setAttribute(
        "gen_ai.output.messages",
        JSON.stringify([{ role: "assistant", parts: [{ type: "text", content: chat.text }] }]),
      );
    }
    const attributes = {
      "gen_ai.operation.name": "chat",
      ...this.#base,
      "gen_ai.response.model": this.#run.model.id,
    };
    this.#in.tokenUsage.record(usage.inputTokens, { ...attributes, "gen_ai.token.type": "input" });
    this.#in.tokenUsage.record(usage.outputTokens, { ...attributes, "gen_ai.token.type": "output" });
    this.#in.operationDuration.record((performance.now() - chat.started) / 1000, attributes);
    chat.span.end();
    this.#chat = undefined;
  }

  #failChat(errorType: string, message: string): void {
    const chat = this.#chat;
    if (!chat) return;
    fail(chat.span, errorType, message);
    this.#in.operationDuration.record((performance.now() - chat.started) / 1000, {
      "gen_ai.operation.name": "chat",
      ...this.#base,
      "error.type": errorType,
    });
    chat.span.end();
    this.#chat = undefined;
  }

  #endChat(): void {
    // A model call that reported no usage (a provider without it) still ends when the next begins.
    const chat = this.#chat;
    if (!chat) return;
    chat.span.end();
    this.#chat = undefined;
  }

  #startTool(event: Extract<AgentEvent, { type: "tool_call" }>): void {
    if (this.#tools.has(event.id)) return;
    const span = this.#in.tracer.startSpan(
      `execute_tool ${event.name}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": event.name,
          "gen_ai.tool.call.id": event.id,
          "gen_ai.tool.type": "function",
          ...(this.#in.captureContent ? { "gen_ai.tool.call.arguments": JSON.stringify(event.args) } : {}),
        },
      },
      this.#lastChatCtx ?? this.#agentCtx,
    );
    this.#tools.set(event.id, span);
  }

  #endTool(event: Extract<AgentEvent, { type: "tool_result" }>): void {
    let span = this.#tools.get(event.id);
    if (!span) {
      // A result without its call (a resumed run's call was made before the restart).
      this.#startTool({
        type: "tool_call",
        runId: event.runId,
        id: event.id,
        name: event.name,
        args: undefined,
      });
      span = this.#tools.get(event.id);
    }
    if (!span) return;
    this.#tools.delete(event.id);
    if (this.#in.captureContent) span.setAttribute("gen_ai.tool.call.result", event.output);
    // The result is content: it goes on the span only when content capture is on.
    if (!event.ok)
      fail(span, "tool_error", this.#in.captureContent ? event.output.slice(0, 500) : "the tool failed");
    span.end();
  }
}

function fail(span: Span, errorType: string, message: string): void {
  span.setAttribute("error.type", errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
