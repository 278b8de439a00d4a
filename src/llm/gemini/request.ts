/** Builds the `streamGenerateContent?alt=sse` request for one model call. */
import type { HttpRequestSpec } from "../adapter.js";
import { thinkingBudgetFor } from "../reasoning.js";
import type { Context, ModelSpec, StreamOptions, ToolSchema } from "../types.js";
import { systemInstructionText, toGeminiContents } from "./contents.js";
import { geminiResponseConfig } from "./response-format.js";
import { toGeminiJsonSchema, toGeminiSchema } from "./schema.js";
import type { GeminiFunctionDeclaration, GeminiRequestBody } from "./wire-types.js";

const DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com";

/**
 * Quirk that sends tool schemas as `parametersJsonSchema` (full JSON Schema, Gemini 2.5 and later)
 * instead of the default `parameters` in Gemini's OpenAPI subset, which every model and most
 * Gemini-compatible proxies accept.
 */
export const JSON_SCHEMA_PARAMETERS_QUIRK = "jsonSchemaParameters";

/** `${baseUrl}/v1beta/models/${id}:streamGenerateContent?alt=sse`, keeping a version the base already has. */
export function streamUrl(baseUrl: string, modelId: string): string {
  const base = (baseUrl.trim() === "" ? DEFAULT_BASE_URL : baseUrl.trim()).replace(/\/+$/, "");
  const versioned = /\/v1(alpha|beta)?$/.test(base) ? base : `${base}/v1beta`;
  const path = /^(models|tunedModels)\//.test(modelId) ? modelId : `models/${modelId}`;
  return `${versioned}/${path}:streamGenerateContent?alt=sse`;
}

function declaration(tool: ToolSchema, jsonSchema: boolean): GeminiFunctionDeclaration {
  const out: GeminiFunctionDeclaration = { name: tool.name, description: tool.description };
  if (jsonSchema) {
    out.parametersJsonSchema = toGeminiJsonSchema(tool.parameters);
  } else {
    const parameters = toGeminiSchema(tool.parameters);
    if (parameters) out.parameters = parameters;
  }
  return out;
}

/** Translates the canonical context and options into the Gemini request (URL, headers, body). */
export function buildGeminiRequest(
  model: ModelSpec,
  context: Context,
  options: StreamOptions,
): HttpRequestSpec {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (model.apiKey) headers["x-goog-api-key"] = model.apiKey;
  Object.assign(headers, model.headers);

  const body: GeminiRequestBody = { contents: toGeminiContents(context.messages) };
  const system = systemInstructionText(context.system, context.messages);
  if (system !== undefined) body.systemInstruction = { parts: [{ text: system }] };

  if (context.tools && context.tools.length > 0) {
    const jsonSchema = model.quirks?.[JSON_SCHEMA_PARAMETERS_QUIRK] === true;
    body.tools = [{ functionDeclarations: context.tools.map((t) => declaration(t, jsonSchema)) }];
    if (options.toolChoice === "none") body.toolConfig = { functionCallingConfig: { mode: "NONE" } };
  }

  const config: NonNullable<GeminiRequestBody["generationConfig"]> = {};
  const maxTokens = options.maxTokens ?? model.maxOutputTokens;
  if (maxTokens !== undefined) config.maxOutputTokens = maxTokens;
  if (options.temperature !== undefined) config.temperature = options.temperature;
  if (options.reasoning) {
    const budget = thinkingBudgetFor("gemini", options.reasoning);
    // `off` is a budget of 0 (thinking off on the models that allow it) and no thoughts to show.
    config.thinkingConfig =
      budget === undefined
        ? { includeThoughts: true }
        : budget === 0
          ? { includeThoughts: false, thinkingBudget: 0 }
          : { includeThoughts: true, thinkingBudget: budget };
  }
  const toolsOffered = (context.tools?.length ?? 0) > 0 && options.toolChoice !== "none";
  const json = options.responseFormat && geminiResponseConfig(model, options.responseFormat, toolsOffered);
  if (json) Object.assign(config, json);
  if (Object.keys(config).length > 0) body.generationConfig = config;

  return { url: streamUrl(model.baseUrl, model.id), headers, body };
}
