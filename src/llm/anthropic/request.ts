/** Builds the streaming Messages API request for one model call. */
import type { HttpRequestSpec } from "../adapter.js";
import { thinkingBudgetFor } from "../reasoning.js";
import type { Context, ModelSpec, StreamOptions } from "../types.js";
import { addCacheBreakpoints } from "./cache-control.js";
import { systemPrompt, toAnthropicMessages } from "./messages.js";
import { anthropicOutputConfig } from "./response-format.js";
import type { AnthropicRequestBody } from "./wire-types.js";

const DEFAULT_BASE_URL = "https://api.anthropic.com";
const API_VERSION = "2023-06-01";
/** `max_tokens` is required by the API; used when neither the call nor the model sets one. */
const DEFAULT_MAX_TOKENS = 8192;
/** The API's smallest accepted thinking budget. */
const MIN_THINKING_BUDGET = 1024;

/** `${baseUrl}/v1/messages`, without doubling a `/v1` the base URL already ends with. */
export function messagesUrl(baseUrl: string): string {
  const base = (baseUrl.trim() === "" ? DEFAULT_BASE_URL : baseUrl.trim()).replace(/\/+$/, "");
  return /\/v1$/.test(base) ? `${base}/messages` : `${base}/v1/messages`;
}

function thinkingBudget(options: StreamOptions): number | undefined {
  const requested = thinkingBudgetFor("anthropic", options.reasoning);
  // `off` (0): no thinking block at all, which is how the API runs without thinking.
  return requested === undefined || requested === 0
    ? undefined
    : Math.max(MIN_THINKING_BUDGET, Math.floor(requested));
}

/** Translates the canonical context and options into the Anthropic request (URL, headers, body). */
export function buildAnthropicRequest(
  model: ModelSpec,
  context: Context,
  options: StreamOptions,
): HttpRequestSpec {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "anthropic-version": API_VERSION,
  };
  if (model.apiKey) headers["x-api-key"] = model.apiKey;
  Object.assign(headers, model.headers);

  let maxTokens = options.maxTokens ?? model.maxOutputTokens ?? DEFAULT_MAX_TOKENS;
  const body: AnthropicRequestBody = {
    model: model.id,
    max_tokens: maxTokens,
    stream: true,
    messages: toAnthropicMessages(context.messages),
  };
  const system = systemPrompt(context.system, context.messages);
  if (system !== undefined) body.system = system;

  if (context.tools && context.tools.length > 0) {
    body.tools = context.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.parameters,
    }));
    // Tools stay declared even when forbidden: a history with tool_use blocks is rejected without them.
    if (options.toolChoice === "none") body.tool_choice = { type: "none" };
  }

  const budget = thinkingBudget(options);
  if (budget !== undefined) {
    // The API requires max_tokens > budget_tokens; leave room for the visible answer too.
    if (maxTokens <= budget) maxTokens = budget + MIN_THINKING_BUDGET;
    body.max_tokens = maxTokens;
    body.thinking = { type: "enabled", budget_tokens: budget };
  } else if (options.temperature !== undefined) {
    // Temperature is only accepted without extended thinking.
    body.temperature = options.temperature;
  }

  const output = options.responseFormat && anthropicOutputConfig(model, options.responseFormat);
  if (output) body.output_config = output;

  addCacheBreakpoints(body, model);
  return { url: messagesUrl(model.baseUrl), headers, body };
}
