/**
 * Structured output on Gemini: `responseMimeType: "application/json"` with `responseJsonSchema`. Older
 * Gemini models refuse it beside function declarations, so it is asked for only on a call that offers
 * no tools (the answer is checked either way). Quirk `responseFormat: "none"` sends nothing.
 */
import type { JsonSchema, ModelSpec, ResponseFormat } from "../types.js";

export function geminiResponseConfig(
  model: ModelSpec,
  format: ResponseFormat,
  toolsOffered: boolean,
): { responseMimeType: string; responseJsonSchema: JsonSchema } | undefined {
  if (toolsOffered || model.quirks?.responseFormat === "none") return undefined;
  return { responseMimeType: "application/json", responseJsonSchema: format.schema };
}
