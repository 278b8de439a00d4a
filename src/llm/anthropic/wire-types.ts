/** The subset of the Anthropic Messages API wire format that Dimsum sends and reads. */
import type { JsonSchema } from "../types.js";

/** A prompt-cache breakpoint: the prefix up to and including the block carrying it is cached. */
export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicImageBlock {
  type: "image";
  source: { type: "base64"; media_type: string; data: string };
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AnthropicToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlock | AnthropicImageBlock>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicUserBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolResultBlock;
export type AnthropicAssistantBlock =
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock
  | AnthropicTextBlock
  | AnthropicToolUseBlock;

export type AnthropicMessage =
  | { role: "user"; content: AnthropicUserBlock[] }
  | { role: "assistant"; content: AnthropicAssistantBlock[] };

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
  cache_control?: AnthropicCacheControl;
}

export interface AnthropicRequestBody {
  model: string;
  max_tokens: number;
  stream: true;
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
  tools?: AnthropicTool[];
  tool_choice?: { type: "auto" | "none" };
  thinking?: { type: "enabled"; budget_tokens: number };
  temperature?: number;
  /** Structured output: the final text answer follows the schema. */
  output_config?: { format: { type: "json_schema"; schema: JsonSchema } };
}

/** Usage as it appears in `message_start.message.usage`, `message_delta.usage` and response bodies. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number | null } | null;
}

/** A content block as `content_block_start` announces it (or as a response body lists it). */
export interface AnthropicWireBlock {
  type: string;
  id?: string;
  name?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  data?: string;
  input?: unknown;
}

export interface AnthropicWireDelta {
  type?: string;
  text?: string;
  thinking?: string;
  signature?: string;
  partial_json?: string;
  stop_reason?: string | null;
  stop_details?: unknown;
}

/** One streamed event payload; every field is optional because the data comes off the network. */
export interface AnthropicStreamEvent {
  type?: string;
  index?: number;
  message?: { id?: string; model?: string; usage?: AnthropicUsage | null };
  content_block?: AnthropicWireBlock;
  delta?: AnthropicWireDelta;
  usage?: AnthropicUsage | null;
  error?: { type?: string; message?: string };
}

/** A complete non-streaming Messages response body. */
export interface AnthropicResponseBody {
  id?: string;
  model?: string;
  content?: AnthropicWireBlock[];
  stop_reason?: string | null;
  stop_details?: unknown;
  usage?: AnthropicUsage | null;
}
