/**
 * Tool parameter schemas: zod -> JSON Schema for providers, outside schemas made provider-safe,
 * and argument validation whose messages name each failing parameter so a model can fix its call.
 */
import { createRequire } from "node:module";
import type { Ajv, ErrorObject } from "ajv";
import * as z from "zod";
import { DimsumError } from "../errors.js";
import type { JsonSchema } from "../llm/types.js";

/** Converts a zod parameter schema to the JSON Schema object providers expect at the top level. */
export function zodToJsonSchema(schema: z.ZodType): JsonSchema {
  // `io: "input"` describes what the model must send (before defaults/transforms are applied).
  const out = z.toJSONSchema(schema, {
    target: "draft-7",
    io: "input",
    unrepresentable: "any",
  }) as JsonSchema;
  delete out.$schema;
  if (out.type !== "object") {
    throw new DimsumError("config", "A tool's zod parameters must describe an object.", {
      hint: "wrap the parameters in z.object({...})",
    });
  }
  if (!isPlainObject(out.properties)) out.properties = {};
  return out;
}

/**
 * The leaderboard's type dialect (and a few other language spellings) mapped to JSON Schema types,
 * keyed by lower-case name. `any` maps to string because that is what the leaderboard does.
 */
const TYPE_ALIASES: Readonly<Record<string, string>> = {
  object: "object",
  dict: "object",
  hashmap: "object",
  hashtable: "object",
  map: "object",
  number: "number",
  float: "number",
  double: "number",
  array: "array",
  tuple: "array",
  list: "array",
  arraylist: "array",
  queue: "array",
  stack: "array",
  set: "array",
  string: "string",
  str: "string",
  char: "string",
  any: "string",
  boolean: "boolean",
  bool: "boolean",
  integer: "integer",
  int: "integer",
  byte: "integer",
  short: "integer",
  long: "integer",
  bigint: "integer",
  null: "null",
};

const SCHEMA_MAP_KEYS = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const SCHEMA_KEYS = [
  "items",
  "additionalProperties",
  "additionalItems",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedItems",
  "unevaluatedProperties",
];
const SCHEMA_LIST_KEYS = ["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/**
 * Makes a parameter schema from outside (MCP, HTTP, plugins, BFCL) provider-safe: dialect types
 * mapped, an object at the top, `required` limited to declared properties, arrays given `items`.
 * Returns a new object; the input is never mutated.
 */
export function normalizeJsonSchema(schema: unknown): JsonSchema {
  // Providers require an object at the top, whatever the schema said.
  const root = normalizeNode(isPlainObject(schema) ? { ...schema, type: "object" } : { type: "object" });
  if (!isPlainObject(root.properties)) root.properties = {};
  return root;
}

function normalizeNode(node: Record<string, unknown>): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    // `$schema` may name a draft our validator does not load; `optional` is BFCL's non-standard flag.
    if (key === "$schema" || key === "optional") continue;
    // Copied so values such as enums and defaults are not shared with the caller's object.
    out[key] = copyValue(value);
  }
  for (const key of SCHEMA_MAP_KEYS) {
    const value = node[key];
    if (value === undefined) continue;
    if (!isPlainObject(value)) {
      delete out[key];
      continue;
    }
    out[key] = Object.fromEntries(
      Object.entries(value).map(([name, sub]) => [name, normalizeSubschema(sub)]),
    );
  }
  for (const key of SCHEMA_KEYS) {
    if (isPlainObject(node[key])) out[key] = normalizeSubschema(node[key]);
  }
  for (const key of SCHEMA_LIST_KEYS) {
    const value = node[key];
    if (Array.isArray(value)) out[key] = value.map(normalizeSubschema);
  }
  normalizeType(out);
  if (out.enum !== undefined && !Array.isArray(out.enum)) delete out.enum;
  if (typeIncludes(out, "object")) normalizeRequired(out, optionalNames(node));
  else if (out.required !== undefined && !Array.isArray(out.required)) delete out.required;
  if (typeIncludes(out, "array") && out.items === undefined) out.items = {};
  return out;
}

function copyValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyValue);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = copyValue(item);
  return out;
}

function normalizeSubschema(value: unknown): unknown {
  if (typeof value === "boolean") return value;
  return isPlainObject(value) ? normalizeNode(value) : {};
}

function normalizeType(schema: JsonSchema): void {
  const { type } = schema;
  if (type === undefined) return;
  const names = (Array.isArray(type) ? type : [type])
    .map((t) => (typeof t === "string" ? TYPE_ALIASES[t.toLowerCase()] : undefined))
    .filter((t): t is string => t !== undefined);
  const unique = [...new Set(names)];
  // An unknown type name would make the validator reject the whole schema; accepting any value is safer.
  if (unique.length === 0) delete schema.type;
  else schema.type = unique.length === 1 ? unique[0] : unique;
}

/** Keeps only `required` names that are declared properties and not flagged BFCL-`optional`. */
function normalizeRequired(schema: JsonSchema, optional: Set<string> = new Set()): void {
  const properties = isPlainObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  const kept = [
    ...new Set(
      required.filter(
        (name): name is string =>
          typeof name === "string" && Object.hasOwn(properties, name) && !optional.has(name),
      ),
    ),
  ];
  if (kept.length > 0) schema.required = kept;
  else delete schema.required;
}

function optionalNames(node: Record<string, unknown>): Set<string> {
  const names = new Set<string>();
  if (!isPlainObject(node.properties)) return names;
  for (const [name, sub] of Object.entries(node.properties)) {
    if (isPlainObject(sub) && (sub.optional === true || sub.optional === "true")) names.add(name);
  }
  return names;
}

function typeIncludes(schema: JsonSchema, name: string): boolean {
  return schema.type === name || (Array.isArray(schema.type) && schema.type.includes(name));
}

/** Checks arguments; returns one message per problem, empty when they are valid. */
export type ArgumentValidator = (args: unknown) => string[];

/** Distinct schema texts remembered; beyond this the oldest are forgotten (and recompiled if seen again). */
const MAX_CACHED_SCHEMAS = 2000;

/**
 * Compiles JSON Schemas with Ajv, once per distinct schema: registries that share this object (a
 * team's agents, subsets, reconnecting MCP servers) reuse validators for equal schemas. Ajv loads on
 * first use because most runs only have zod tools and its import costs tens of milliseconds.
 */
export class JsonSchemaValidators {
  #ajv: Ajv | undefined;
  readonly #byObject = new WeakMap<object, ArgumentValidator>();
  readonly #byText = new Map<string, ArgumentValidator>();

  /** The validator for `schema` (compiled on first call); throws DimsumError if it cannot compile. */
  validatorFor(schema: JsonSchema): ArgumentValidator {
    const cached = this.#byObject.get(schema);
    if (cached) return cached;
    const text = JSON.stringify(schema);
    let validator = this.#byText.get(text);
    if (!validator) {
      validator = this.#compile(schema);
      if (this.#byText.size >= MAX_CACHED_SCHEMAS) this.#byText.delete(this.#byText.keys().next().value!);
      this.#byText.set(text, validator);
    }
    this.#byObject.set(schema, validator);
    return validator;
  }

  #compile(schema: JsonSchema): ArgumentValidator {
    const ajv = this.#instance();
    let validate: ReturnType<Ajv["compile"]>;
    try {
      validate = ajv.compile(schema);
    } catch (err) {
      throw new DimsumError(
        "config",
        `Invalid JSON Schema: ${err instanceof Error ? err.message : String(err)}`,
        {
          hint: "fix the tool's parameter schema",
          cause: err,
        },
      );
    } finally {
      // Ajv keeps every compiled schema (and its `$id`); drop it so only our WeakMap holds the validator.
      ajv.removeSchema(schema);
    }
    return (args) => (validate(args) ? [] : describeAjvErrors(validate.errors ?? []));
  }

  #instance(): Ajv {
    if (!this.#ajv) {
      const { Ajv: AjvClass } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
      // Outside schemas carry unknown keywords and formats: tolerate them, and never coerce values.
      // Without code optimisation and built-in messages (we write our own) compiling is ~3x faster,
      // which matters for MCP servers with hundreds of tools; validation speed barely changes.
      this.#ajv = new AjvClass({
        strict: false,
        allErrors: true,
        coerceTypes: false,
        useDefaults: false,
        validateFormats: false,
        verbose: true,
        messages: false,
        code: { optimize: false },
        logger: false,
      });
    }
    return this.#ajv;
  }
}

const MAX_MESSAGES = 8;

/** Turns Ajv errors into messages that name the parameter and say what was wrong. */
export function describeAjvErrors(errors: ErrorObject[]): string[] {
  const messages: string[] = [];
  const handled = new Set<ErrorObject>();
  for (const error of errors) {
    if (error.keyword !== "anyOf" && error.keyword !== "oneOf") continue;
    // With allErrors, Ajv reports every failed branch before the anyOf/oneOf error itself.
    const branches = errors.filter((e) => e !== error && e.schemaPath.startsWith(`${error.schemaPath}/`));
    for (const branch of branches) handled.add(branch);
    const types = branches.every((b) => b.keyword === "type" && b.instancePath === error.instancePath)
      ? branches.map((b) => String(b.params.type))
      : [];
    messages.push(
      types.length > 0
        ? `${label(error.instancePath)}: expected ${[...new Set(types)].join(" or ")}, got ${typeOfValue(error.data)}`
        : `${label(error.instancePath)} does not match any of the allowed forms`,
    );
  }
  for (const error of errors) {
    if (handled.has(error) || error.keyword === "anyOf" || error.keyword === "oneOf") continue;
    messages.push(describeAjvError(error));
  }
  return capMessages([...new Set(messages)]);
}

function describeAjvError(error: ErrorObject): string {
  const where = label(error.instancePath);
  const { params } = error;
  switch (error.keyword) {
    case "required":
      return `missing required parameter \`${joinPath(pointerSegments(error.instancePath), String(params.missingProperty))}\``;
    case "type":
      return `${where}: expected ${String(params.type)}, got ${typeOfValue(error.data)}`;
    case "enum":
      return `${where} must be one of: ${(params.allowedValues as unknown[]).map(showValue).join(", ")}`;
    case "const":
      return `${where} must be ${showValue(params.allowedValue)}`;
    case "additionalProperties":
      return `unknown parameter \`${joinPath(pointerSegments(error.instancePath), String(params.additionalProperty))}\``;
    default:
      return `${where} ${describeConstraint(error.keyword, params)}`;
  }
}

/** Our wording for the remaining keywords (Ajv's own messages are switched off for speed). */
function describeConstraint(keyword: string, params: Record<string, unknown>): string {
  const limit = params.limit;
  switch (keyword) {
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return `must be ${String(params.comparison)} ${String(limit)}`;
    case "minLength":
      return `must be at least ${String(limit)} characters long`;
    case "maxLength":
      return `must be at most ${String(limit)} characters long`;
    case "minItems":
      return `must have at least ${String(limit)} items`;
    case "maxItems":
      return `must have at most ${String(limit)} items`;
    case "minProperties":
      return `must have at least ${String(limit)} properties`;
    case "maxProperties":
      return `must have at most ${String(limit)} properties`;
    case "uniqueItems":
      return `must not contain duplicates (items ${String(params.j)} and ${String(params.i)} are equal)`;
    case "pattern":
      return `must match the pattern ${String(params.pattern)}`;
    case "format":
      return `must be a valid ${String(params.format)}`;
    case "multipleOf":
      return `must be a multiple of ${String(params.multipleOf)}`;
    case "not":
      return "matches a form it must not match";
    case "dependencies":
    case "dependentRequired":
      return `needs \`${String(params.missingProperty)}\` when \`${String(params.property)}\` is given`;
    case "propertyNames":
      return `has an invalid property name \`${String(params.propertyName)}\``;
    case "if":
      return `must match the "${String(params.failingKeyword)}" schema`;
    case "false schema":
      return "is not allowed";
    default:
      return `fails the \`${keyword}\` rule`;
  }
}

/** Turns zod issues into the same kind of messages; `input` is the value that was parsed. */
export function describeZodIssues(issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  const messages: string[] = [];
  for (const issue of issues) {
    const path = issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
    const where = path.length === 0 ? "arguments" : `\`${formatPath(path)}\``;
    const value = valueAt(input, path);
    const isValueCheck = ["invalid_type", "invalid_value", "invalid_union"].includes(issue.code);
    if (isValueCheck && !value.found && path.length > 0) {
      messages.push(`missing required parameter ${where}`);
      continue;
    }
    switch (issue.code) {
      case "invalid_type":
        messages.push(`${where}: expected ${zodTypeName(issue.expected)}, got ${typeOfValue(value.value)}`);
        break;
      case "invalid_value":
        messages.push(
          issue.values.length === 1
            ? `${where} must be ${showValue(issue.values[0])}`
            : `${where} must be one of: ${issue.values.map(showValue).join(", ")}`,
        );
        break;
      case "unrecognized_keys":
        for (const key of issue.keys) messages.push(`unknown parameter \`${formatPath([...path, key])}\``);
        break;
      default:
        messages.push(`${where}: ${issue.message}`);
    }
  }
  return capMessages([...new Set(messages)]);
}

function zodTypeName(expected: string): string {
  return expected === "int" ? "integer" : expected;
}

function capMessages(messages: string[]): string[] {
  if (messages.length <= MAX_MESSAGES) return messages;
  return [...messages.slice(0, MAX_MESSAGES), `(and ${messages.length - MAX_MESSAGES} more problems)`];
}

function label(instancePath: string): string {
  const segments = pointerSegments(instancePath);
  return segments.length === 0 ? "arguments" : `\`${formatPath(segments)}\``;
}

function pointerSegments(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function joinPath(segments: string[], last: string): string {
  return formatPath([...segments, last]);
}

/** `a.b[0].c`: numeric segments read as array indexes. */
function formatPath(segments: ReadonlyArray<string | number>): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number" || /^\d+$/.test(segment)) out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

function valueAt(input: unknown, path: ReadonlyArray<string | number>): { found: boolean; value?: unknown } {
  let current: unknown = input;
  for (const segment of path) {
    if (current === null || typeof current !== "object" || !Object.hasOwn(current, segment))
      return { found: false };
    current = (current as Record<string | number, unknown>)[segment];
  }
  return { found: current !== undefined, value: current };
}

function typeOfValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function showValue(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
