/**
 * The canonical message format and model stream events shared by every wire protocol.
 * Adapters translate to and from these types and nothing else.
 */
import type { DimsumError, ErrorCode } from "../errors.js";
import type { ModelCallLimits } from "./call-limits.js";

export type WireProtocol = "openai" | "anthropic" | "gemini";

export interface TextPart {
  type: "text";
  text: string;
  /** Gemini attaches thought signatures to parts; they must be sent back unchanged. */
  signature?: string;
}

export interface ImagePart {
  type: "image";
  mimeType: string;
  /** Base64-encoded bytes. */
  data: string;
}

export interface ReasoningPart {
  type: "reasoning";
  text: string;
  /** Anthropic thinking signature, required when the block is sent back on the next turn. */
  signature?: string;
  /** Anthropic `redacted_thinking` payload (opaque, encrypted). */
  redactedData?: string;
}

/** A complete tool call. `arguments` is the raw JSON text exactly as the model produced it. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
  /** Gemini thought signature on the function-call part. */
  signature?: string;
}

export interface ToolCallPart extends ToolCall {
  type: "tool_call";
}

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string | Array<TextPart | ImagePart>;
}

export interface AssistantMessage {
  role: "assistant";
  content: Array<TextPart | ReasoningPart | ToolCallPart>;
}

export interface ToolResultMessage {
  role: "tool";
  toolCallId: string;
  toolName: string;
  content: string | Array<TextPart | ImagePart>;
  isError?: boolean;
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** Plain JSON Schema object, as sent to providers. */
export type JsonSchema = { [key: string]: unknown };

/** A tool as the model sees it. Names are already provider-safe (`^[a-zA-Z0-9_-]{1,64}$`). */
export interface ToolSchema {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** Everything one model call needs besides the model itself. */
export interface Context {
  system?: string;
  messages: Message[];
  tools?: ToolSchema[];
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** As the provider reports it; may differ from input + output (e.g. xAI counts reasoning apart). */
  totalTokens: number;
  reasoningTokens?: number;
  /** Input tokens served from the provider's prompt cache (part of `inputTokens`). */
  cachedInputTokens?: number;
  /** Input tokens written to the prompt cache by this call (part of `inputTokens`; Anthropic bills them apart). */
  cacheWriteTokens?: number;
}

export type FinishReason =
  | "stop"
  | "length"
  | "tool_calls"
  | "content_filter"
  | "refusal"
  | "error"
  | "other";

export interface ModelPricing {
  /** USD per million input tokens. */
  input: number;
  /** USD per million output tokens. */
  output: number;
  /** USD per million cached input tokens. */
  cachedInput?: number;
  /** USD per million input tokens written to the cache (Anthropic: 1.25x input for 5 minutes). */
  cacheWrite?: number;
}

/** How long a prompt-cache entry lives where the protocol lets the caller choose (Anthropic, OpenAI). */
export type CacheTtl = "5m" | "1h";

/** A model is plain data: where it lives, how to talk to it, what it costs. */
export interface ModelSpec {
  /** Provider name as written in `provider:model`, e.g. `openai`, `deepseek`, `ollama`. */
  provider: string;
  /** Model id sent to the API. */
  id: string;
  protocol: WireProtocol;
  baseUrl: string;
  apiKey?: string;
  /** Env var that holds the key, named in auth errors. */
  apiKeyEnv?: string;
  headers?: Record<string, string>;
  contextWindow: number;
  maxOutputTokens?: number;
  pricing?: ModelPricing;
  /** Protocol-specific switches, e.g. `{ includeUsage: false }` for servers that reject stream_options. */
  quirks?: Record<string, boolean | string | number>;
  /** Deadlines of each call to this model (`modelCalls` in the config); defaults fill what is missing. */
  limits?: Partial<ModelCallLimits>;
  /** Models tried in order when this one fails before any output (see fallback-chain.ts). */
  fallbacks?: ModelSpec[];
  /** How the model writes tool calls in its text when the server has no tool parser (see text-tool-calls.ts). */
  toolCallFormat?: ToolCallFormat;
  /** Prompt-cache lifetime asked for (`cache.ttl` in the config); the provider's default when absent. */
  cacheTtl?: CacheTtl;
}

/** Markup of tool calls written as text: Hermes/Qwen `<tool_call>`, Qwen3-Coder `<function=…>`, Mistral `[TOOL_CALLS]`, Llama bare JSON. */
export type ToolCallFormat = "hermes" | "qwen3-coder" | "mistral" | "llama-json" | "auto" | "none";

/** How hard a model should think: `off` switches thinking off where the protocol can. */
export type ReasoningEffort = "off" | "low" | "medium" | "high";

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface StreamOptions {
  signal?: AbortSignal;
  /** Deadlines of this call, over the model's `limits` and the defaults (see call-limits.ts). */
  limits?: Partial<ModelCallLimits>;
  retry?: Partial<RetryPolicy>;
  maxTokens?: number;
  temperature?: number;
  /** Ask for reasoning where the protocol needs it switched on (Anthropic thinking budget, Gemini thoughts). */
  reasoning?: { budgetTokens?: number; effort?: ReasoningEffort };
  /** Forbid tools for this call even if `context.tools` is set. */
  toolChoice?: "auto" | "none";
  /** Routes calls sharing a prefix to the same cache (OpenAI `prompt_cache_key`): one per session. */
  cacheKey?: string;
  /** Ask for a JSON answer valid against a schema, where the protocol can (OpenAI, Anthropic, Gemini). */
  responseFormat?: ResponseFormat;
}

/** A structured answer: its schema, and a short name for it (`^[a-zA-Z0-9_-]{1,64}$`). */
export interface ResponseFormat {
  name: string;
  schema: JsonSchema;
}

export type ModelEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call"; call: ToolCall }
  | { type: "usage"; usage: Usage }
  | { type: "retry"; attempt: number; delayMs: number; reason: string }
  /**
   * The call moved to the next model of the chain (`provider:id` labels): `from` failed before any
   * output with `code`, or was skipped because its provider is cooling down (`skipped`).
   */
  | { type: "model_fallback"; from: string; to: string; reason: string; code: ErrorCode; skipped?: boolean }
  | {
      type: "done";
      finishReason: FinishReason;
      /** The provider's own stop reason, e.g. `end_turn`, `STOP`. */
      rawFinishReason?: string;
      message: AssistantMessage;
      usage?: Usage;
      responseId?: string;
      model?: string;
      /** Extra stop information a provider sends (Anthropic `stop_details`). */
      stopDetails?: unknown;
    }
  | { type: "error"; error: DimsumError };

/** A provider is one function. Once called it never throws: failures arrive as the final `error` event. */
export type StreamFunction = (
  model: ModelSpec,
  context: Context,
  options?: StreamOptions,
) => AsyncIterable<ModelEvent>;
