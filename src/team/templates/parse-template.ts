/** Checks a value as a template file; a refusal lists each wrong field as `{path, message}`. */
import { DimsumError } from "../../errors.js";
import { type Template, templateSchema } from "./template-schema.js";

/** The template, or `invalid` with the fields to fix. */
export function parseTemplate(value: unknown): Template {
  const result = templateSchema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message }));
  const first = issues[0];
  throw new DimsumError(
    "invalid",
    `This is not a usable Dimsum template${first ? `: ${first.path || "(file)"}: ${first.message}` : ""}.`,
    { issues, hint: 'export a template from Dimsum (a JSON file with "format": "dimsum-template")' },
  );
}
