/**
 * Conformance against the Berkeley Function Calling Leaderboard data (../shared/datasets/bfcl):
 * every definition becomes a provider-safe tool, every ground-truth call validates, and mutated
 * calls are rejected with messages that name the parameter.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { beforeAll, describe, expect, it } from "vitest";
import type { JsonSchema } from "../../src/llm/types.js";
import { JsonSchemaValidators } from "../../src/tools/json-schema.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { JsonSchemaTool } from "../../src/tools/types.js";
import { datasetsDir } from "../support/fixtures.js";

interface FunctionDef {
  name: string;
  description: string;
  parameters: unknown;
}
interface Entry {
  id: string;
  function: FunctionDef[];
}
type GroundTruthCall = Record<string, Record<string, unknown[]>>;
interface Answer {
  id: string;
  ground_truth: GroundTruthCall[];
}

const bfclDir = join(datasetsDir, "bfcl");
const ANSWERED_SETS = ["simple_python", "multiple", "parallel", "parallel_multiple"];
const ALL_SETS = [...ANSWERED_SETS, "irrelevance"];
const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Ground-truth calls the dataset itself gets wrong, so no schema-following validator can accept them:
 * - parallel_multiple_21 `linear_regression_fit`: `x`/`y` are arrays of floats, the answer passes the
 *   Python expressions "data['sales']" / "data['future_sales']" as strings.
 * - parallel_multiple_94 `sort_list`: `elements` is an array of integers, the answers are fruit names.
 */
const KNOWN_INCONSISTENT = ["parallel_multiple_21 linear_regression_fit", "parallel_multiple_94 sort_list"];

function readLines<T>(file: string): T[] {
  return readFileSync(join(bfclDir, file), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

function toTool(def: FunctionDef): JsonSchemaTool {
  return {
    kind: "json",
    name: def.name,
    description: def.description,
    parameters: def.parameters as JsonSchema,
    execute: async () => "ok",
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function propertiesOf(schema: JsonSchema): Record<string, JsonSchema> {
  return (isObject(schema.properties) ? schema.properties : {}) as Record<string, JsonSchema>;
}

/**
 * Builds one concrete value from BFCL's answer format, where nested dicts repeat the
 * `{key: [acceptable values]}` shape. `""` first means "may be omitted" unless the schema requires it.
 */
function pickArgs(acceptable: Record<string, unknown>, schema: JsonSchema): Record<string, unknown> {
  const properties = propertiesOf(schema);
  const required = new Set((schema.required as string[] | undefined) ?? []);
  const args: Record<string, unknown> = {};
  for (const [name, values] of Object.entries(acceptable)) {
    const options = Array.isArray(values) ? values : [values];
    const value = options[0] === "" && required.has(name) ? options.find((v) => v !== "") : options[0];
    if (value === "" || value === undefined) continue;
    args[name] = materialize(value, properties[name] ?? {});
  }
  return args;
}

function materialize(value: unknown, schema: JsonSchema): unknown {
  if (schema.type === "object" && isObject(value) && isObject(schema.properties))
    return pickArgs(value, schema);
  if (schema.type === "array" && Array.isArray(value) && isObject(schema.items)) {
    return value.map((item) => materialize(item, schema.items as JsonSchema));
  }
  return value;
}

function wrongValueFor(type: unknown): unknown {
  return type === "string" ? 12345 : "abc";
}

interface Call {
  label: string;
  registry: ToolRegistry;
  wireName: string;
  schema: JsonSchema;
  args: Record<string, unknown>;
}

describe("BFCL conformance", () => {
  const validators = new JsonSchemaValidators();
  const metaAjv = new Ajv({ strict: false });
  const registries = new Map<string, ToolRegistry>();
  let definitionCount = 0;
  let renamedCount = 0;
  const calls: Call[] = [];

  // Compiling ~1,900 validators takes a second or two; the generous limits only guard against a slow machine.
  beforeAll(() => {
    for (const set of ALL_SETS) {
      for (const entry of readLines<Entry>(`BFCL_v4_${set}.json`)) {
        const registry = new ToolRegistry([], { validators });
        for (const def of entry.function) registry.register(toTool(def));
        registries.set(entry.id, registry);
      }
    }
    for (const set of ANSWERED_SETS) {
      for (const answer of readLines<Answer>(`possible_answer/BFCL_v4_${set}.json`)) {
        const registry = registries.get(answer.id);
        if (!registry) throw new Error(`no definitions for ${answer.id}`);
        for (const call of answer.ground_truth) {
          for (const [name, acceptable] of Object.entries(call)) {
            const wireName = registry.wireName(name);
            if (!wireName) throw new Error(`${answer.id}: ground truth calls unknown ${name}`);
            const schema = registry.schemas().find((s) => s.name === wireName)!.parameters;
            calls.push({
              label: `${answer.id} ${name}`,
              registry,
              wireName,
              schema,
              args: pickArgs(acceptable, schema),
            });
          }
        }
      }
    }
  }, 30_000);

  it("turns every function definition into a provider-safe tool", { timeout: 30_000 }, () => {
    for (const [id, registry] of registries) {
      for (const schema of registry.schemas()) {
        definitionCount++;
        const tool = registry.resolveWireName(schema.name);
        expect(tool, `${id} ${schema.name}`).toBeDefined();
        expect(registry.wireName(tool!.name)).toBe(schema.name);
        if (tool!.name !== schema.name) renamedCount++;
        expect(schema.name, id).toMatch(WIRE_NAME);
        expect(schema.parameters.type, `${id} ${tool!.name}`).toBe("object");
        expect(isObject(schema.parameters.properties), `${id} ${tool!.name}`).toBe(true);
        expect(
          metaAjv.validateSchema(schema.parameters),
          `${id} ${tool!.name}: ${metaAjv.errorsText()}`,
        ).toBe(true);
        expect(() => validators.validatorFor(schema.parameters)).not.toThrow();
      }
    }
    expect(definitionCount).toBe(1917);
    // About a quarter of the names carry dots; each must come back to its original name (checked above).
    expect(renamedCount).toBeGreaterThan(400);
  });

  it("accepts every ground-truth call except the two the dataset gets wrong", () => {
    const rejected: string[] = [];
    for (const call of calls) {
      const result = call.registry.prepareCall(call.wireName, JSON.stringify(call.args));
      if (!result.ok) rejected.push(call.label);
    }
    expect(calls.length).toBe(1747);
    expect(rejected).toEqual(KNOWN_INCONSISTENT);
  });

  function validCalls(): Call[] {
    return calls.filter((c) => !KNOWN_INCONSISTENT.includes(c.label));
  }

  it("rejects every call with a required parameter removed, naming it", () => {
    let mutations = 0;
    const missed: string[] = [];
    for (const call of validCalls()) {
      for (const name of (call.schema.required as string[] | undefined) ?? []) {
        if (!(name in call.args)) continue;
        mutations++;
        const { [name]: _removed, ...rest } = call.args;
        const result = call.registry.prepareCall(call.wireName, JSON.stringify(rest));
        if (result.ok || !result.error.includes(`missing required parameter \`${name}\``))
          missed.push(`${call.label} ${name}`);
      }
    }
    expect(missed).toEqual([]);
    expect(mutations).toBe(3680);
  });

  it("rejects every parameter given a value of the wrong type, naming it", () => {
    let mutations = 0;
    const missed: string[] = [];
    for (const call of validCalls()) {
      const properties = propertiesOf(call.schema);
      for (const name of Object.keys(call.args)) {
        const type = properties[name]?.type;
        if (typeof type !== "string") continue;
        mutations++;
        const args = { ...call.args, [name]: wrongValueFor(type) };
        const result = call.registry.prepareCall(call.wireName, JSON.stringify(args));
        if (result.ok || !result.error.includes(`\`${name}\`: expected ${type}`))
          missed.push(`${call.label} ${name}`);
      }
    }
    expect(missed).toEqual([]);
    expect(mutations).toBe(4576);
  });

  it("rejects every enum parameter given a value outside the enum, naming it", () => {
    let mutations = 0;
    const missed: string[] = [];
    for (const call of validCalls()) {
      const properties = propertiesOf(call.schema);
      for (const name of Object.keys(call.args)) {
        const allowed = properties[name]?.enum;
        if (!Array.isArray(allowed)) continue;
        mutations++;
        const args = { ...call.args, [name]: "no-such-choice" };
        const result = call.registry.prepareCall(call.wireName, JSON.stringify(args));
        if (result.ok || !result.error.includes(`\`${name}\` must be one of: ${allowed.join(", ")}`)) {
          missed.push(`${call.label} ${name}`);
        }
      }
    }
    expect(missed).toEqual([]);
    expect(mutations).toBe(157);
  });
});
