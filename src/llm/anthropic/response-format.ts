/**
 * Structured output on the Messages API: `output_config.format` (generally available; it works with
 * tools). The API wants every object closed, so objects that do not say otherwise get
 * `additionalProperties: false`: stricter than asked, never looser. Quirk `responseFormat: "none"`
 * sends nothing (servers that predate it), leaving the schema to the instructions.
 */
import type { JsonSchema, ModelSpec, ResponseFormat } from "../types.js";

export function anthropicOutputConfig(
  model: ModelSpec,
  format: ResponseFormat,
): { format: { type: "json_schema"; schema: JsonSchema } } | undefined {
  if (model.quirks?.responseFormat === "none") return undefined;
  return { format: { type: "json_schema", schema: closeObjects(format.schema) as JsonSchema } };
}

function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (typeof node !== "object" || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    // Under these keys are names, not schemas: map their values, never the map itself.
    out[key] =
      key === "properties" || key === "$defs" || key === "definitions"
        ? Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, closeObjects(v)]))
        : closeObjects(value);
  }
  if (out.type === "object" && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}
