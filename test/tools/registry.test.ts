import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DimsumError } from "../../src/errors.js";
import type { JsonSchema } from "../../src/llm/types.js";
import { JsonSchemaValidators, normalizeJsonSchema, zodToJsonSchema } from "../../src/tools/json-schema.js";
import { type PrepareResult, ToolRegistry } from "../../src/tools/registry.js";
import { defineTool, type JsonSchemaTool, type Tool, type ToolContext } from "../../src/tools/types.js";
import { testToolContext } from "../support/tool-context.js";

function makeCtx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return {
    ...testToolContext({ signal, runId: "run-1" }),
  };
}

const weatherZod = defineTool({
  name: "get_weather",
  description: "Current weather",
  parameters: z.object({
    location: z.string(),
    unit: z.enum(["celsius", "fahrenheit"]),
    days: z.number().int().min(1).max(7).default(1),
    stops: z.array(z.object({ city: z.string() })).optional(),
  }),
  execute: async (args) => JSON.stringify(args),
});

function jsonTool(name: string, parameters: JsonSchema, execute?: JsonSchemaTool["execute"]): JsonSchemaTool {
  return {
    kind: "json",
    name,
    description: `${name} tool`,
    parameters,
    execute: execute ?? (async () => "done"),
  };
}

const weatherJson = jsonTool("weather.get", {
  type: "dict",
  properties: {
    location: { type: "String" },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
    days: { type: "integer", maximum: 7 },
    coords: { type: "tuple", items: { type: "float" } },
    note: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
  required: ["location", "unit", "ghost"],
});

function errorOf(result: PrepareResult): string {
  if (result.ok) throw new Error("expected the call to be rejected");
  return result.error;
}

describe("normalizeJsonSchema", () => {
  it("maps the leaderboard type dialect to JSON Schema, recursively", () => {
    const out = normalizeJsonSchema({
      type: "dict",
      properties: {
        a: { type: "HashMap", properties: { b: { type: "double" } } },
        c: { type: "ArrayList", items: { type: "Bigint" } },
        d: { type: "Any" },
        e: { type: "bool" },
        f: { anyOf: [{ type: "char" }, { type: "long" }] },
        g: { type: ["float", "null"] },
        h: { type: "Queue" },
        i: { type: "Hashtable", additionalProperties: { type: "short" } },
        j: { type: "no-such-type" },
      },
    });
    expect(out).toEqual({
      type: "object",
      properties: {
        a: { type: "object", properties: { b: { type: "number" } } },
        c: { type: "array", items: { type: "integer" } },
        d: { type: "string" },
        e: { type: "boolean" },
        f: { anyOf: [{ type: "string" }, { type: "integer" }] },
        g: { type: ["number", "null"] },
        h: { type: "array", items: {} },
        i: { type: "object", additionalProperties: { type: "integer" } },
        j: {},
      },
    });
  });

  it("puts an object at the top, drops undeclared required names and BFCL `optional`", () => {
    expect(normalizeJsonSchema({})).toEqual({ type: "object", properties: {} });
    expect(normalizeJsonSchema(undefined)).toEqual({ type: "object", properties: {} });
    expect(
      normalizeJsonSchema({
        $schema: "https://json-schema.org/draft/2020-12/schema",
        properties: { a: { type: "string" }, b: { type: "integer", optional: "true" } },
        required: ["a", "a", "b", "missing", 3],
      }),
    ).toEqual({
      type: "object",
      properties: { a: { type: "string" }, b: { type: "integer" } },
      required: ["a"],
    });
  });

  it("never mutates its input", () => {
    const input = {
      type: "dict",
      properties: { x: { type: "float", enum: [1.5, 2.5] }, y: { type: "list" } },
      required: ["x", "nope"],
    };
    const before = JSON.stringify(input);
    const out = normalizeJsonSchema(input);
    (out.properties as { x: { enum: number[] } }).x.enum.push(9);
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe("zodToJsonSchema", () => {
  it("describes the input side with no $schema", () => {
    const out = zodToJsonSchema(weatherZod.parameters);
    expect(out.$schema).toBeUndefined();
    expect(out.type).toBe("object");
    // `days` has a default, so the model may leave it out.
    expect(out.required).toEqual(["location", "unit"]);
    expect(out.properties).toMatchObject({ unit: { enum: ["celsius", "fahrenheit"] }, days: { default: 1 } });
  });

  it("refuses a schema that is not an object", () => {
    expect(() => zodToJsonSchema(z.string())).toThrow(DimsumError);
  });
});

describe("ToolRegistry: registration", () => {
  it("stores tools in order and looks them up", () => {
    const registry = new ToolRegistry([weatherZod, weatherJson]);
    expect(registry.names()).toEqual(["get_weather", "weather.get"]);
    expect(registry.list()).toEqual([weatherZod, weatherJson]);
    expect(registry.get("weather.get")).toBe(weatherJson);
    expect(registry.has("get_weather")).toBe(true);
    expect(registry.has("nope")).toBe(false);
  });

  it("refuses duplicates and nameless tools with config errors", () => {
    const registry = new ToolRegistry([weatherZod]);
    expect(() => registry.register(weatherZod)).toThrow(/already registered/);
    expect(() => registry.register({ ...weatherJson, name: "" })).toThrow(/without a name/);
    expect(() =>
      registry.register(
        defineTool({ name: "s", description: "", parameters: z.string(), execute: async () => "" }),
      ),
    ).toThrow(/`s` has unusable parameters/);
  });

  it("offers provider-ready schemas under wire names and maps them back", () => {
    const registry = new ToolRegistry([weatherZod, weatherJson]);
    const schemas = registry.schemas();
    expect(schemas.map((s) => s.name)).toEqual(["get_weather", "weather_get"]);
    expect(schemas[1]).toEqual({
      name: "weather_get",
      description: "weather.get tool",
      parameters: {
        type: "object",
        properties: {
          location: { type: "string" },
          unit: { type: "string", enum: ["celsius", "fahrenheit"] },
          days: { type: "integer", maximum: 7 },
          coords: { type: "array", items: { type: "number" } },
          note: { anyOf: [{ type: "string" }, { type: "null" }] },
        },
        required: ["location", "unit"],
      },
    });
    expect(registry.resolveWireName("weather_get")).toBe(weatherJson);
    expect(registry.resolveWireName("weather.get")).toBeUndefined();
    expect(registry.wireName("weather.get")).toBe("weather_get");
  });

  it("keeps colliding names apart and unregisters", () => {
    const a = jsonTool("math.sum", {});
    const b = jsonTool("math_sum", {});
    const registry = new ToolRegistry([a, b]);
    const wireB = registry.wireName("math_sum")!;
    expect(registry.wireName("math.sum")).toBe("math_sum");
    expect(wireB).toMatch(/^math_sum_[0-9a-f]{8}$/);
    expect(registry.resolveWireName(wireB)).toBe(b);
    expect(registry.unregister("math.sum")).toBe(true);
    expect(registry.unregister("math.sum")).toBe(false);
    expect(registry.resolveWireName("math_sum")).toBeUndefined();
    expect(registry.names()).toEqual(["math_sum"]);
  });
});

describe("ToolRegistry: subset", () => {
  const registry = new ToolRegistry([jsonTool("math.sum", {}), jsonTool("math_sum", {}), weatherZod]);

  it("picks tools by name or wire name and keeps their wire names", () => {
    const hashed = registry.wireName("math_sum")!;
    const sub = registry.subset(["math_sum", "get_weather", "get_weather"]);
    expect(sub.names()).toEqual(["math_sum", "get_weather"]);
    expect(sub.wireName("math_sum")).toBe(hashed);
    expect(registry.subset(["get_weather", "math_sum"]).names()).toEqual(["get_weather", "math_sum"]);
    // A name wins over an equal wire name: `math_sum` is a tool's own name and `math.sum`'s wire name.
    expect(registry.subset(["math_sum"]).names()).toEqual(["math_sum"]);
    expect(registry.subset([hashed]).names()).toEqual(["math_sum"]);
  });

  it("names unknown tools and lists the available ones", () => {
    let error: DimsumError | undefined;
    try {
      registry.subset(["get_weather", "nope", "zilch"]);
    } catch (err) {
      error = err as DimsumError;
    }
    expect(error).toBeInstanceOf(DimsumError);
    expect(error?.code).toBe("config");
    expect(error?.message).toBe("Unknown tools: nope, zilch.");
    expect(error?.hint).toBe("available tools: math.sum, math_sum, get_weather");
  });
});

describe("ToolRegistry: prepareCall", () => {
  const registry = new ToolRegistry([weatherZod, weatherJson]);

  it("names an unknown tool and lists available ones", () => {
    expect(errorOf(registry.prepareCall("get_wether", "{}"))).toBe(
      "Unknown tool `get_wether`. Available tools: get_weather, weather_get.",
    );
    const many = new ToolRegistry(Array.from({ length: 14 }, (_, i) => jsonTool(`t${i}`, {})));
    expect(errorOf(many.prepareCall("x", "{}"))).toBe(
      "Unknown tool `x`. Available tools: t0, t1, t2, t3, t4, t5, t6, t7, t8, t9 and 4 more.",
    );
    expect(errorOf(new ToolRegistry().prepareCall("x", "{}"))).toContain("no tools are available");
  });

  it("accepts the original dotted name too", () => {
    const result = registry.prepareCall("weather.get", '{"location":"Paris","unit":"celsius"}');
    expect(result.ok && result.tool).toBe(weatherJson);
  });

  it("says when arguments are not JSON, with a short excerpt", () => {
    const error = errorOf(registry.prepareCall("get_weather", `{"location": "Paris", ${"x".repeat(200)}`));
    expect(error).toMatch(
      /^The arguments for `get_weather` are not valid JSON \(.+\): "\{\\"location\\": \\"Paris\\", x+…"/,
    );
    expect(error.length).toBeLessThan(250);
  });

  it("requires a JSON object", () => {
    expect(errorOf(registry.prepareCall("get_weather", "[1]"))).toBe(
      "The arguments for `get_weather` must be a JSON object, got an array.",
    );
    expect(errorOf(registry.prepareCall("get_weather", "null"))).toContain("got null");
    expect(errorOf(registry.prepareCall("get_weather", "42"))).toContain("got a number");
  });

  it("treats empty arguments as {}", () => {
    const empty = new ToolRegistry([jsonTool("ping", {})]);
    expect(empty.prepareCall("ping", "")).toMatchObject({ ok: true, args: {} });
    expect(empty.prepareCall("ping", "  ")).toMatchObject({ ok: true, args: {} });
    expect(errorOf(registry.prepareCall("get_weather", ""))).toContain(
      "missing required parameter `location`",
    );
  });

  it("applies zod defaults to valid calls", () => {
    const result = registry.prepareCall("get_weather", '{"location":"Paris","unit":"celsius"}');
    expect(result).toEqual({
      ok: true,
      tool: weatherZod,
      args: { location: "Paris", unit: "celsius", days: 1 },
    });
  });

  it("names each failing parameter of a zod tool", () => {
    expect(errorOf(registry.prepareCall("get_weather", '{"location":42,"unit":"kelvin","days":9}'))).toBe(
      "Invalid arguments for `get_weather`: `location`: expected string, got number; " +
        "`unit` must be one of: celsius, fahrenheit; `days`: Too big: expected number to be <=7.",
    );
    expect(errorOf(registry.prepareCall("get_weather", '{"location":"Paris"}'))).toBe(
      "Invalid arguments for `get_weather`: missing required parameter `unit`.",
    );
    expect(
      errorOf(registry.prepareCall("get_weather", '{"location":"P","unit":"celsius","stops":[{"city":1}]}')),
    ).toBe("Invalid arguments for `get_weather`: `stops[0].city`: expected string, got number.");
  });

  it("names each failing parameter of a JSON Schema tool", () => {
    expect(errorOf(registry.prepareCall("weather_get", '{"location":42,"unit":"kelvin","days":9}'))).toBe(
      "Invalid arguments for `weather_get`: `location`: expected string, got number; " +
        "`unit` must be one of: celsius, fahrenheit; `days` must be <= 7.",
    );
    expect(errorOf(registry.prepareCall("weather_get", '{"location":"Paris"}'))).toBe(
      "Invalid arguments for `weather_get`: missing required parameter `unit`.",
    );
    expect(
      errorOf(registry.prepareCall("weather_get", '{"location":"P","unit":"celsius","coords":[1,"x"]}')),
    ).toBe("Invalid arguments for `weather_get`: `coords[1]`: expected number, got string.");
    expect(errorOf(registry.prepareCall("weather_get", '{"location":"P","unit":"celsius","note":3}'))).toBe(
      "Invalid arguments for `weather_get`: `note`: expected string or null, got number.",
    );
  });

  it("does not coerce values", () => {
    expect(
      errorOf(registry.prepareCall("weather_get", '{"location":"P","unit":"celsius","days":"3"}')),
    ).toContain("`days`: expected integer, got string");
    expect(registry.prepareCall("weather_get", '{"location":"P","unit":"celsius","days":3}')).toMatchObject({
      ok: true,
      args: { days: 3 },
    });
  });

  it("reports unknown parameters when the schema forbids them", () => {
    const strict = new ToolRegistry([
      jsonTool("strict", {
        type: "object",
        properties: { a: { type: "string" } },
        additionalProperties: false,
      }),
    ]);
    expect(errorOf(strict.prepareCall("strict", '{"a":"x","b":1}'))).toBe(
      "Invalid arguments for `strict`: unknown parameter `b`.",
    );
  });

  it("tolerates unknown keywords and formats", () => {
    const loose = new ToolRegistry([
      jsonTool("loose", { type: "object", properties: { d: { type: "string", format: "date", "x-ui": 1 } } }),
    ]);
    expect(loose.prepareCall("loose", '{"d":"not a date"}').ok).toBe(true);
  });

  it("reports a schema that cannot compile instead of throwing", () => {
    const broken = new ToolRegistry([
      jsonTool("broken", { type: "object", properties: { a: { $ref: "#/nowhere" } } }),
    ]);
    expect(errorOf(broken.prepareCall("broken", '{"a":1}'))).toContain(
      "Could not check the arguments for `broken`",
    );
  });

  it("compiles a JSON Schema once and shares validators with subsets", () => {
    const validators = new JsonSchemaValidators();
    const parent = new ToolRegistry([weatherJson], { validators });
    const schema = parent.schemas()[0]!.parameters;
    const first = validators.validatorFor(schema);
    parent.subset(["weather.get"]).prepareCall("weather_get", '{"location":"P","unit":"celsius"}');
    expect(validators.validatorFor(schema)).toBe(first);
  });
});

describe("ToolRegistry: execute", () => {
  function prepared(registry: ToolRegistry, name: string, args = "{}") {
    const result = registry.prepareCall(name, args);
    if (!result.ok) throw new Error(result.error);
    return result;
  }

  it("turns a string into content and passes ToolResults through", async () => {
    const registry = new ToolRegistry([
      jsonTool("text", {}, async () => "hello"),
      jsonTool("rich", {}, async () => ({ content: [{ type: "text", text: "hi" }], data: { n: 1 } })),
    ]);
    expect(await registry.execute(prepared(registry, "text"), makeCtx())).toEqual({ content: "hello" });
    expect(await registry.execute(prepared(registry, "rich"), makeCtx())).toEqual({
      content: [{ type: "text", text: "hi" }],
      data: { n: 1 },
    });
  });

  it("shapes odd return values from untyped plugin tools", async () => {
    const odd = (value: unknown) => jsonTool("odd", {}, (async () => value) as JsonSchemaTool["execute"]);
    const run = async (value: unknown) => {
      const registry = new ToolRegistry([odd(value)]);
      return registry.execute(prepared(registry, "odd"), makeCtx());
    };
    expect(await run(undefined)).toEqual({ content: "" });
    expect(await run({ answer: 42 })).toEqual({ content: '{"answer":42}' });
  });

  it("passes validated args and a context to the tool", async () => {
    const registry = new ToolRegistry([weatherZod]);
    const result = await registry.execute(
      prepared(registry, "get_weather", '{"location":"Oslo","unit":"celsius"}'),
      makeCtx(),
    );
    expect(JSON.parse(result.content as string)).toEqual({ location: "Oslo", unit: "celsius", days: 1 });
  });

  it("turns a thrown error into an error result", async () => {
    const registry = new ToolRegistry([
      jsonTool("boom", {}, async () => {
        throw new Error("disk on fire");
      }),
      jsonTool("dim", {}, async () => {
        throw new DimsumError("tool_failed", "no such file", { hint: "check the path" });
      }),
    ]);
    expect(await registry.execute(prepared(registry, "boom"), makeCtx())).toEqual({
      content: "Tool `boom` failed: disk on fire",
      isError: true,
    });
    expect(await registry.execute(prepared(registry, "dim"), makeCtx())).toEqual({
      content: "Tool `dim` failed: no such file (check the path)",
      isError: true,
    });
  });

  it("stops a tool at its time limit, aborting its signal", async () => {
    let seen: AbortSignal | undefined;
    const hang: Tool = {
      ...jsonTool("wait.forever", {}, (_args, ctx) => {
        seen = ctx.signal;
        return new Promise(() => {});
      }),
      timeoutMs: 20,
    };
    const registry = new ToolRegistry([hang]);
    expect(await registry.execute(prepared(registry, "wait_forever"), makeCtx())).toEqual({
      content: "Tool `wait_forever` timed out after 20 ms (its time limit) and was stopped.",
      isError: true,
    });
    expect(seen?.aborted).toBe(true);
  });

  it("lets the caller's timeout override the tool's and the default", async () => {
    const slow: Tool = { ...jsonTool("slow", {}, () => new Promise(() => {})), timeoutMs: 600_000 };
    const registry = new ToolRegistry([slow], { defaultTimeoutMs: 600_000 });
    const result = await registry.execute(prepared(registry, "slow"), makeCtx(), { timeoutMs: 25 });
    expect(result).toEqual({
      content: "Tool `slow` timed out after 25 ms (its time limit) and was stopped.",
      isError: true,
    });
    const byDefault = new ToolRegistry([jsonTool("slow2", {}, () => new Promise(() => {}))], {
      defaultTimeoutMs: 15,
    });
    expect((await byDefault.execute(prepared(byDefault, "slow2"), makeCtx())).content).toContain(
      "after 15 ms",
    );
  });

  it("returns an aborted result when the run is aborted, and detaches from the run signal", async () => {
    const controller = new AbortController();
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const registry = new ToolRegistry([
      jsonTool("wait", {}, (_args, ctx) => {
        started();
        return new Promise((_resolve, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason)),
        );
      }),
      jsonTool("quick", {}, async () => "ok"),
    ]);
    const ctx = makeCtx(controller.signal);
    await registry.execute(prepared(registry, "quick"), ctx);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const pending = registry.execute(prepared(registry, "wait"), ctx);
    await running;
    controller.abort();
    expect(await pending).toEqual({
      content: "Tool `wait` was cancelled because the run was aborted.",
      isError: true,
    });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("does not start a tool when the run is already aborted", async () => {
    let ran = false;
    const registry = new ToolRegistry([
      jsonTool("never", {}, async () => {
        ran = true;
        return "ran";
      }),
    ]);
    const controller = new AbortController();
    controller.abort();
    const result = await registry.execute(prepared(registry, "never"), makeCtx(controller.signal));
    expect(result.isError).toBe(true);
    expect(ran).toBe(false);
  });
});
