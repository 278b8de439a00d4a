/**
 * Form-mode elicitation as plain data: the fields of a server's requested schema (flat objects of
 * strings, numbers, booleans and enums, per the MCP spec), their defaults, and the parsing and
 * validation of what a person typed. Front ends (the chat prompt, the web form) draw on this.
 */
import type { ElicitRequestFormParams } from "@modelcontextprotocol/client";

export type RequestedSchema = ElicitRequestFormParams["requestedSchema"];
export type FormValue = string | number | boolean | string[];

export interface FormField {
  name: string;
  /** Label for people: the title, else the name. */
  label: string;
  description?: string;
  type: "string" | "number" | "integer" | "boolean" | "enum" | "multi-enum";
  required: boolean;
  default?: FormValue;
  /** Allowed values (and their labels) of enums. */
  options?: Array<{ value: string; label: string }>;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  format?: string;
}

type Prop = Record<string, unknown>;

/** The schema's properties as fields, in order. */
export function formFields(schema: RequestedSchema): FormField[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties as Record<string, Prop>).map(([name, prop]) => {
    const field: FormField = {
      name,
      label: typeof prop.title === "string" ? prop.title : name,
      type: fieldType(prop),
      required: required.has(name),
    };
    if (typeof prop.description === "string") field.description = prop.description;
    const options = enumOptions(prop);
    if (options) field.options = options;
    if (prop.default !== undefined) field.default = prop.default as FormValue;
    for (const key of ["minimum", "maximum", "minLength", "maxLength"] as const) {
      if (typeof prop[key] === "number") field[key] = prop[key] as number;
    }
    if (typeof prop.format === "string") field.format = prop.format;
    return field;
  });
}

/** The defaults the schema names (what "accept" sends for fields left empty). */
export function formDefaults(schema: RequestedSchema): Record<string, FormValue> {
  const out: Record<string, FormValue> = {};
  for (const field of formFields(schema)) if (field.default !== undefined) out[field.name] = field.default;
  return out;
}

export type ParseResult = { ok: true; value: FormValue | undefined } | { ok: false; error: string };

/** Parses one typed answer; an empty answer takes the default, or is left out when optional. */
export function parseFieldInput(field: FormField, text: string): ParseResult {
  const input = text.trim();
  if (input === "") {
    if (field.default !== undefined) return { ok: true, value: field.default };
    return field.required
      ? { ok: false, error: `${field.label} is required` }
      : { ok: true, value: undefined };
  }
  switch (field.type) {
    case "boolean": {
      if (/^(y|yes|true|1)$/i.test(input)) return { ok: true, value: true };
      if (/^(n|no|false|0)$/i.test(input)) return { ok: true, value: false };
      return { ok: false, error: "answer yes or no" };
    }
    case "number":
    case "integer": {
      const value = Number(input);
      if (!Number.isFinite(value)) return { ok: false, error: "enter a number" };
      if (field.type === "integer" && !Number.isInteger(value))
        return { ok: false, error: "enter a whole number" };
      if (field.minimum !== undefined && value < field.minimum)
        return { ok: false, error: `at least ${field.minimum}` };
      if (field.maximum !== undefined && value > field.maximum)
        return { ok: false, error: `at most ${field.maximum}` };
      return { ok: true, value };
    }
    case "enum": {
      const option = pickOption(field, input);
      return option
        ? { ok: true, value: option }
        : { ok: false, error: `choose one of ${optionList(field)}` };
    }
    case "multi-enum": {
      const picked: string[] = [];
      for (const part of input
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean)) {
        const option = pickOption(field, part);
        if (!option) return { ok: false, error: `choose from ${optionList(field)} (comma-separated)` };
        picked.push(option);
      }
      return { ok: true, value: picked };
    }
    default: {
      if (field.minLength !== undefined && input.length < field.minLength)
        return { ok: false, error: `at least ${field.minLength} characters` };
      if (field.maxLength !== undefined && input.length > field.maxLength)
        return { ok: false, error: `at most ${field.maxLength} characters` };
      if (field.format === "email" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(input))
        return { ok: false, error: "enter an email address" };
      if ((field.format === "uri" || field.format === "url") && !URL.canParse(input))
        return { ok: false, error: "enter a full URL" };
      if (field.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(input))
        return { ok: false, error: "enter a date as YYYY-MM-DD" };
      return { ok: true, value: input };
    }
  }
}

/** Checks a whole answer (as a web form sends it); returns the problems by field. */
export function validateForm(
  schema: RequestedSchema,
  content: Record<string, unknown>,
): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of formFields(schema)) {
    const value = content[field.name];
    const text =
      value === undefined || value === null ? "" : Array.isArray(value) ? value.join(",") : String(value);
    const parsed = parseFieldInput(field, text);
    if (!parsed.ok) problems[field.name] = parsed.error;
  }
  return problems;
}

function fieldType(prop: Prop): FormField["type"] {
  if (prop.type === "array") return "multi-enum";
  if (Array.isArray(prop.enum) || Array.isArray(prop.oneOf)) return "enum";
  if (prop.type === "boolean" || prop.type === "number" || prop.type === "integer") return prop.type;
  return "string";
}

function enumOptions(prop: Prop): FormField["options"] {
  const source = prop.type === "array" && isRecord(prop.items) ? prop.items : prop;
  if (Array.isArray(source.oneOf)) {
    return (source.oneOf as Prop[]).map((o) => ({
      value: String(o.const),
      label: String(o.title ?? o.const),
    }));
  }
  if (Array.isArray(source.anyOf)) {
    return (source.anyOf as Prop[]).map((o) => ({
      value: String(o.const),
      label: String(o.title ?? o.const),
    }));
  }
  if (Array.isArray(source.enum)) {
    const names = Array.isArray(source.enumNames) ? (source.enumNames as unknown[]) : [];
    return (source.enum as unknown[]).map((v, i) => ({ value: String(v), label: String(names[i] ?? v) }));
  }
  return undefined;
}

function pickOption(field: FormField, input: string): string | undefined {
  const options = field.options ?? [];
  const index = Number(input);
  if (Number.isInteger(index) && index >= 1 && index <= options.length) return options[index - 1]?.value;
  const lower = input.toLowerCase();
  return options.find((o) => o.value.toLowerCase() === lower || o.label.toLowerCase() === lower)?.value;
}

function optionList(field: FormField): string {
  return (field.options ?? []).map((o) => o.value).join(", ");
}

function isRecord(value: unknown): value is Prop {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
