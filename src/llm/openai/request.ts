/**
 * Builds the streaming Chat Completions request. Quirks read from `model.quirks`:
 * - `includeUsage` (default true): send `stream_options.include_usage`; false for servers that reject it.
 * - `maxCompletionTokens` (default false): name the limit `max_completion_tokens` (OpenAI o-series, gpt-5).
 * - `sendReasoning` (default true only for provider `deepseek`): echo reasoning as `reasoning_content`.
 * - `reasoningSplit` (MiniMax): send `reasoning_split: true`, so thinking comes as `reasoning_details`.
 * - `promptCacheKey` (default true only for provider `openai`): send `prompt_cache_key` (see cache-key.ts).
 */
import type { HttpRequestSpec } from "../adapter.js";
import { openaiReasoningFields } from "../reasoning.js";
import type { Context, ModelSpec, StreamOptions } from "../types.js";
import { addPromptCacheFields } from "./cache-key.js";
import { toOpenAiMessages } from "./messages.js";
import { openAiResponseFormat } from "./response-format.js";

/** The HTTP request for one streamed model call. */
export function buildRequest(model: ModelSpec, context: Context, options: StreamOptions): HttpRequestSpec {
  const quirks = model.quirks ?? {};
  const sendReasoning =
    typeof quirks.sendReasoning === "boolean" ? quirks.sendReasoning : model.provider === "deepseek";
  const body: Record<string, unknown> = {
    model: model.id,
    messages: toOpenAiMessages(context.system, context.messages, { sendReasoning }),
    stream: true,
  };
  if (quirks.includeUsage !== false) body.stream_options = { include_usage: true };
  // `tool_choice: "none"` is rejected by some servers, so forbidding tools means not offering any.
  if (context.tools && context.tools.length > 0 && options.toolChoice !== "none") {
    body.tools = context.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  if (options.maxTokens !== undefined) {
    body[quirks.maxCompletionTokens === true ? "max_completion_tokens" : "max_tokens"] = options.maxTokens;
  }
  if (options.temperature !== undefined) body.temperature = options.temperature;
  Object.assign(body, openaiReasoningFields(model, options.reasoning));
  if (quirks.reasoningSplit === true) body.reasoning_split = true;
  const format = options.responseFormat && openAiResponseFormat(model, options.responseFormat);
  if (format) body.response_format = format;
  addPromptCacheFields(body, model, options);

  const headers: Record<string, string> = { "content-type": "application/json", accept: "text/event-stream" };
  if (model.apiKey) headers.authorization = `Bearer ${model.apiKey}`;
  Object.assign(headers, model.headers);
  return { url: `${model.baseUrl.replace(/\/+$/, "")}/chat/completions`, headers, body };
}
