/** `--schema FILE.json`: the JSON Schema a run's final answer must follow, read and checked up front. */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { OutputChecker, type OutputSpec } from "../agent/structured-output.js";
import { DimsumError } from "../errors.js";
import type { JsonSchema } from "../llm/types.js";

export function readOutputSchema(cwd: string, file: string): OutputSpec {
  const path = resolve(cwd, file);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new DimsumError("config", `cannot read the schema file ${path}: ${(err as Error).message}`, {
      hint: "pass --schema with the path of a JSON Schema file",
    });
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new DimsumError("config", `the schema file ${path} is not JSON: ${(err as Error).message}`, {
      hint: 'a JSON Schema is a JSON object, e.g. {"type": "object", "properties": {…}}',
    });
  }
  const spec: OutputSpec = { schema: schema as JsonSchema };
  // Compiled now, so a bad schema is reported before any model call is paid for.
  new OutputChecker(spec);
  return spec;
}
