/**
 * Structured output on Chat Completions: `response_format` with the schema (`json_schema`), or, for
 * servers that only know JSON mode (quirk `responseFormat: "json_object"`, e.g. DeepSeek), any JSON
 * object, the schema then being in the instructions only. Quirk `responseFormat: "none"` sends nothing.
 * Not strict: strict mode refuses schemas with optional properties, and the answer is checked anyway.
 */
import type { ModelSpec, ResponseFormat } from "../types.js";

export function openAiResponseFormat(model: ModelSpec, format: ResponseFormat): unknown {
  const mode = model.quirks?.responseFormat;
  if (mode === "none") return undefined;
  if (mode === "json_object") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: format.name, schema: format.schema, strict: false } };
}
