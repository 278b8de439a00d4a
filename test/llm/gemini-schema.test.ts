/** toGeminiSchema: JSON Schema rewritten into the subset Gemini's `parameters` accepts. */
import { describe, expect, it } from "vitest";
import { toGeminiJsonSchema, toGeminiSchema } from "../../src/llm/gemini/index.js";

/** Every key Gemini's Schema object knows; anything else in the output would be a 400. */
const ALLOWED = new Set([
  "type",
  "title",
  "description",
  "nullable",
  "enum",
  "format",
  "items",
  "properties",
  "required",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "minimum",
  "maximum",
  "pattern",
  "anyOf",
]);

function unknownKeys(node: unknown, path = "$"): string[] {
  if (node === null || typeof node !== "object") return [];
  if (Array.isArray(node)) return node.flatMap((n, i) => unknownKeys(n, `${path}[${i}]`));
  const out: string[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (!ALLOWED.has(key)) out.push(`${path}.${key}`);
    if (key === "properties" && value && typeof value === "object") {
      for (const [name, child] of Object.entries(value))
        out.push(...unknownKeys(child, `${path}.properties.${name}`));
    } else if (key === "items" || key === "anyOf") {
      out.push(...unknownKeys(value, `${path}.${key}`));
    }
  }
  return out;
}

const zodLike = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  additionalProperties: false,
  $defs: {
    Point: {
      type: "object",
      properties: { x: { type: "number" }, y: { type: "number" } },
      required: ["x", "y"],
    },
  },
  properties: {
    url: { type: "string", format: "uri", examples: ["https://a.example"] },
    when: { type: "string", format: "date-time", default: "now" },
    mode: { type: "string", enum: ["fast", "slow"] },
    kind: { const: "point" },
    level: { type: "integer", enum: [1, 2, 3], description: "How hard" },
    count: { type: "integer", exclusiveMinimum: 0, maximum: 10 },
    note: { type: ["string", "null"] },
    maybe: { anyOf: [{ type: "string" }, { type: "null" }] },
    either: { oneOf: [{ type: "string" }, { type: "number" }] },
    origin: { $ref: "#/$defs/Point", description: "Start" },
    path: { type: "array", items: { $ref: "#/$defs/Point" }, minItems: 1 },
    merged: {
      allOf: [
        { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        { properties: { b: { type: "boolean" } } },
      ],
    },
  },
  required: ["url", "missing"],
};

describe("toGeminiSchema", () => {
  const out = toGeminiSchema(zodLike);

  it("leaves no keyword Gemini would reject", () => {
    expect(unknownKeys(out)).toEqual([]);
  });

  it("rewrites each construct into its Gemini equivalent", () => {
    expect(out).toEqual({
      type: "object",
      properties: {
        url: { type: "string" },
        when: { type: "string", format: "date-time" },
        mode: { type: "string", enum: ["fast", "slow"] },
        kind: { type: "string", enum: ["point"] },
        level: { type: "integer", description: "How hard (allowed values: 1, 2, 3)" },
        count: { type: "integer", maximum: 10 },
        note: { type: "string", nullable: true },
        maybe: { type: "string", nullable: true },
        either: { anyOf: [{ type: "string" }, { type: "number" }] },
        origin: {
          type: "object",
          description: "Start",
          properties: { x: { type: "number" }, y: { type: "number" } },
          required: ["x", "y"],
        },
        path: {
          type: "array",
          minItems: 1,
          items: {
            type: "object",
            properties: { x: { type: "number" }, y: { type: "number" } },
            required: ["x", "y"],
          },
        },
        merged: {
          type: "object",
          properties: { a: { type: "string" }, b: { type: "boolean" } },
          required: ["a"],
        },
      },
      required: ["url"],
    });
  });

  it("cuts recursive references off instead of looping", () => {
    const tree = {
      type: "object",
      $defs: {
        Node: {
          type: "object",
          properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } } },
        },
      },
      properties: { root: { $ref: "#/$defs/Node" } },
    };
    const converted = toGeminiSchema(tree);
    expect(unknownKeys(converted)).toEqual([]);
    expect(JSON.stringify(converted).length).toBeLessThan(5000);
  });

  it("returns undefined for a parameterless tool so `parameters` can be omitted", () => {
    expect(toGeminiSchema({ type: "object", properties: {} })).toBeUndefined();
    expect(toGeminiSchema({ type: "object", additionalProperties: false })).toBeUndefined();
  });

  it("does not modify its input", () => {
    const copy = structuredClone(zodLike);
    toGeminiSchema(zodLike);
    expect(zodLike).toEqual(copy);
  });
});

describe("toGeminiJsonSchema", () => {
  it("keeps full JSON Schema and drops only the root $schema", () => {
    const { $schema: _s, ...rest } = zodLike;
    expect(toGeminiJsonSchema(zodLike)).toEqual(rest);
  });
});
