/**
 * Rewrites JSON Schema into the OpenAPI-3.0 subset that Gemini's `FunctionDeclaration.parameters`
 * accepts. Unknown keywords (`$schema`, `additionalProperties`, `examples`, ...) make the whole
 * request fail with 400, so only the documented Schema fields are kept.
 */
import type { JsonSchema } from "../types.js";

type Node = { [key: string]: unknown };

/** Keywords copied as they are (after type checks); everything else is dropped or rewritten. */
const PLAIN_KEYS = ["title", "description", "pattern"] as const;
const NUMBER_KEYS = [
  "minimum",
  "maximum",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
] as const;
/** Gemini accepts only these `format` values on strings; others are rejected. */
const STRING_FORMATS = new Set(["enum", "date-time"]);
/** How deep a `$ref` may be followed; recursive schemas are cut off there. */
const MAX_REF_DEPTH = 8;

function isNode(value: unknown): value is Node {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Resolves a same-document `$ref` such as `#/$defs/Item` or `#/definitions/Item`. */
function resolveRef(root: Node, ref: string): Node | undefined {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (!isNode(node)) return undefined;
    node = node[key];
  }
  return isNode(node) ? node : undefined;
}

function appendDescription(node: Node, note: string): void {
  node.description =
    typeof node.description === "string" && node.description !== "" ? `${node.description} (${note})` : note;
}

class Converter {
  constructor(private readonly root: Node) {}

  convert(input: unknown, refDepth: number): Node {
    if (!isNode(input)) return {};
    let schema = input;
    if (typeof schema.$ref === "string") {
      const target = refDepth < MAX_REF_DEPTH ? resolveRef(this.root, schema.$ref) : undefined;
      const { $ref: _ref, ...siblings } = schema;
      if (!target) return this.convert({ type: "object", ...siblings }, refDepth);
      schema = { ...target, ...siblings };
      refDepth += 1;
    }
    const out: Node = {};
    this.copyType(schema, out, refDepth);
    for (const key of PLAIN_KEYS) if (typeof schema[key] === "string") out[key] = schema[key];
    for (const key of NUMBER_KEYS) if (typeof schema[key] === "number") out[key] = schema[key];
    if (schema.nullable === true) out.nullable = true;
    this.copyEnum(schema, out);
    if (typeof schema.format === "string" && out.type === "string" && STRING_FORMATS.has(schema.format)) {
      out.format = schema.format;
    }
    if (isNode(schema.properties)) {
      const properties: Node = {};
      for (const [name, value] of Object.entries(schema.properties))
        properties[name] = this.convert(value, refDepth);
      out.properties = properties;
      const required = Array.isArray(schema.required)
        ? schema.required.filter((r): r is string => typeof r === "string" && r in properties)
        : [];
      if (required.length > 0) out.required = required;
    }
    if (Array.isArray(schema.items)) {
      // Tuple schemas have no Gemini equivalent; any of the positions is the closest fit.
      out.items = this.union(schema.items, refDepth);
    } else if (schema.items !== undefined) {
      out.items = this.convert(schema.items, refDepth);
    }
    const alternatives = [schema.anyOf, schema.oneOf].find(Array.isArray);
    if (alternatives) Object.assign(out, this.union(alternatives, refDepth));
    if (Array.isArray(schema.allOf)) this.mergeAll(schema.allOf, out, refDepth);
    return out;
  }

  /** `type: [x, "null"]` becomes `type: x, nullable: true`; several types become `anyOf`. */
  private copyType(schema: Node, out: Node, refDepth: number): void {
    const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
    const concrete = types.filter((t): t is string => typeof t === "string" && t !== "null");
    if (types.includes("null")) out.nullable = true;
    if (concrete.length === 1) out.type = concrete[0];
    else if (concrete.length > 1)
      out.anyOf = concrete.map((type) => this.convert({ ...schema, type }, refDepth));
  }

  /** Gemini enums are strings; `const` is a one-value enum; other values survive as a description note. */
  private copyEnum(schema: Node, out: Node): void {
    const values = Array.isArray(schema.enum) ? schema.enum : "const" in schema ? [schema.const] : undefined;
    if (!values) return;
    if (values.includes(null)) out.nullable = true;
    const present = values.filter((v) => v !== null);
    if (present.length === 0) return;
    if (present.every((v) => typeof v === "string") && (out.type === undefined || out.type === "string")) {
      out.type = "string";
      out.enum = present;
    } else {
      appendDescription(out, `allowed values: ${present.map((v) => JSON.stringify(v)).join(", ")}`);
    }
  }

  /** anyOf/oneOf: `null` branches become `nullable`; a single remaining branch is inlined. */
  private union(branches: unknown[], refDepth: number): Node {
    const converted: Node[] = [];
    let nullable = false;
    for (const branch of branches) {
      if (isNode(branch) && branch.type === "null" && Object.keys(branch).length === 1) nullable = true;
      else converted.push(this.convert(branch, refDepth));
    }
    const node: Node =
      converted.length === 1 ? { ...converted[0] } : converted.length === 0 ? {} : { anyOf: converted };
    if (nullable) node.nullable = true;
    return node;
  }

  /** allOf: merges the parts' properties and required lists; other keywords: first one wins. */
  private mergeAll(parts: unknown[], out: Node, refDepth: number): void {
    for (const part of parts) {
      const converted = this.convert(part, refDepth);
      for (const [key, value] of Object.entries(converted)) {
        if (key === "properties" && isNode(value))
          out.properties = { ...(isNode(out.properties) ? out.properties : {}), ...value };
        else if (key === "required" && Array.isArray(value)) {
          out.required = [...new Set([...(Array.isArray(out.required) ? out.required : []), ...value])];
        } else if (!(key in out)) out[key] = value;
      }
    }
  }
}

/**
 * Converts a tool's JSON Schema into Gemini's Schema dialect. Returns `undefined` for a schema with
 * no properties: Gemini rejects an OBJECT without properties, and a function may omit `parameters`.
 */
export function toGeminiSchema(jsonSchema: JsonSchema): JsonSchema | undefined {
  const converted = new Converter(jsonSchema).convert(jsonSchema, 0);
  if (
    converted.type === "object" &&
    (!isNode(converted.properties) || Object.keys(converted.properties).length === 0)
  ) {
    return undefined;
  }
  return converted;
}

/**
 * Prepares a schema for `parametersJsonSchema`, which takes full JSON Schema: only the root
 * `$schema` marker is removed, since some API versions still reject it.
 */
export function toGeminiJsonSchema(jsonSchema: JsonSchema): JsonSchema {
  const { $schema: _schema, ...rest } = jsonSchema;
  return rest;
}
