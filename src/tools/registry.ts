/**
 * The tools one agent may use: provider-ready schemas under provider-safe names, argument checking
 * with messages a model can act on, and execution that turns every failure into an error result.
 */
import { DimsumError } from "../errors.js";
import type { JsonSchema, ToolSchema } from "../llm/types.js";
import {
  describeZodIssues,
  JsonSchemaValidators,
  normalizeJsonSchema,
  zodToJsonSchema,
} from "./json-schema.js";
import { WireNameMap } from "./tool-names.js";
import type { Tool, ToolContext, ToolResult } from "./types.js";

/** Per-call time limit when neither the caller nor the tool sets one. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

/** A call whose arguments passed the tool's schema (zod defaults applied). */
export interface PreparedCall {
  tool: Tool;
  args: Record<string, unknown>;
}

export type PrepareResult = ({ ok: true } & PreparedCall) | { ok: false; error: string };

export interface ToolRegistryOptions {
  /** Time limit for tools without their own `timeoutMs` (default 60 s). */
  defaultTimeoutMs?: number;
  /** Share compiled JSON Schema validators between registries (subsets share their parent's). */
  validators?: JsonSchemaValidators;
}

export interface ExecuteOptions {
  /** Overrides both the tool's own limit and the registry default for this call; 0 means no limit. */
  timeoutMs?: number;
}

interface Entry {
  tool: Tool;
  wireName: string;
  /** Provider-ready parameters: converted from zod, or the normalized outside schema. */
  schema: JsonSchema;
}

const MAX_LISTED_NAMES = 10;
const EXCERPT_LENGTH = 80;
// setTimeout fires at once for delays above 2^31-1 ms, so longer limits mean "no limit".
const MAX_TIMER_MS = 2_147_483_647;

/** Holds tools by name and by wire name; validates and runs calls. */
export class ToolRegistry {
  readonly #entries = new Map<string, Entry>();
  readonly #byWire = new Map<string, Entry>();
  readonly #wireNames = new WireNameMap();
  readonly #validators: JsonSchemaValidators;
  readonly #defaultTimeoutMs: number;

  constructor(tools: Iterable<Tool> = [], options: ToolRegistryOptions = {}) {
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    this.#validators = options.validators ?? new JsonSchemaValidators();
    for (const tool of tools) this.register(tool);
  }

  /** Adds a tool; throws DimsumError('config') for a duplicate name or an unusable schema. */
  register(tool: Tool): this {
    if (typeof tool.name !== "string" || tool.name === "") {
      throw new DimsumError("config", "A tool was registered without a name.", {
        hint: "give every tool a name",
      });
    }
    if (this.#entries.has(tool.name)) {
      throw new DimsumError("config", `Tool \`${tool.name}\` is already registered.`, {
        hint: "tool names must be unique; rename or drop one of them",
      });
    }
    this.#add({ tool, wireName: "", schema: parametersOf(tool) });
    return this;
  }

  /** Removes a tool by name; returns whether it was there. */
  unregister(name: string): boolean {
    const entry = this.#entries.get(name);
    if (!entry) return false;
    this.#entries.delete(name);
    this.#byWire.delete(entry.wireName);
    this.#wireNames.release(name);
    return true;
  }

  /** The tool registered under `name` (its own name, not the wire name). */
  get(name: string): Tool | undefined {
    return this.#entries.get(name)?.tool;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /** Tools in registration order. */
  list(): Tool[] {
    return [...this.#entries.values()].map((e) => e.tool);
  }

  /** Tool names in registration order. */
  names(): string[] {
    return [...this.#entries.keys()];
  }

  /**
   * A registry with only the named tools (by name or wire name), keeping their wire names.
   * Unknown names throw DimsumError('config') listing the available ones (for `--tools a,b`).
   */
  subset(names: Iterable<string>): ToolRegistry {
    const picked: Entry[] = [];
    const unknown: string[] = [];
    for (const name of names) {
      const entry = this.#entries.get(name) ?? this.#byWire.get(name);
      if (!entry) unknown.push(name);
      else if (!picked.includes(entry)) picked.push(entry);
    }
    if (unknown.length > 0) {
      const label = unknown.length === 1 ? "Unknown tool" : "Unknown tools";
      throw new DimsumError("config", `${label}: ${unknown.join(", ")}.`, {
        hint: `available tools: ${this.names().join(", ") || "(none)"}`,
      });
    }
    const copy = new ToolRegistry([], {
      defaultTimeoutMs: this.#defaultTimeoutMs,
      validators: this.#validators,
    });
    for (const entry of picked) copy.#add(entry);
    return copy;
  }

  /** What providers get: wire name, description, JSON Schema parameters. Treat as read-only. */
  schemas(): ToolSchema[] {
    return [...this.#entries.values()].map((e) => ({
      name: e.wireName,
      description: e.tool.description,
      parameters: e.schema,
    }));
  }

  /** The wire name providers see for the tool named `name`. */
  wireName(name: string): string | undefined {
    return this.#entries.get(name)?.wireName;
  }

  /** The tool behind a wire name (the reverse of name sanitising). */
  resolveWireName(wireName: string): Tool | undefined {
    return this.#byWire.get(wireName)?.tool;
  }

  /** Checks a model's call: known tool, JSON object arguments that fit the schema. Never throws. */
  prepareCall(wireName: string, rawArguments: string): PrepareResult {
    // Models occasionally echo the original (unsanitised) name; accept it when it is unambiguous.
    const entry = this.#byWire.get(wireName) ?? this.#entries.get(wireName);
    if (!entry) return { ok: false, error: this.#unknownToolMessage(wireName) };
    const parsed = parseArguments(entry.wireName, rawArguments);
    if (!parsed.ok) return parsed;
    const { tool } = entry;
    try {
      if (tool.kind === "zod") {
        const result = tool.parameters.safeParse(parsed.args);
        if (result.success) return { ok: true, tool, args: result.data as Record<string, unknown> };
        return {
          ok: false,
          error: invalidMessage(entry.wireName, describeZodIssues(result.error.issues, parsed.args)),
        };
      }
      const problems = this.#validators.validatorFor(entry.schema)(parsed.args);
      if (problems.length === 0) return { ok: true, tool, args: parsed.args };
      return { ok: false, error: invalidMessage(entry.wireName, problems) };
    } catch (err) {
      const reason = err instanceof DimsumError ? err.message : String(err);
      return { ok: false, error: `Could not check the arguments for \`${entry.wireName}\`: ${reason}` };
    }
  }

  /**
   * Runs a call from `prepareCall` under a time limit (options, then the tool's own, then the default)
   * and the context's abort signal. Never throws: failures, timeouts and aborts become error results.
   */
  async execute(
    call: { tool: Tool; args: unknown },
    ctx: ToolContext,
    options: ExecuteOptions = {},
  ): Promise<ToolResult> {
    const { tool } = call;
    const name = this.#entries.get(tool.name)?.wireName ?? tool.name;
    const limitMs = options.timeoutMs ?? tool.timeoutMs ?? this.#defaultTimeoutMs;
    if (ctx.signal.aborted) return abortedResult(name);

    // A private controller (rather than AbortSignal.any) lets us detach from ctx.signal when the call
    // ends, so a long-lived run signal does not collect one listener per tool call.
    const controller = new AbortController();
    const forwardAbort = () => controller.abort(ctx.signal.reason);
    ctx.signal.addEventListener("abort", forwardAbort, { once: true });
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<ToolResult>((resolve) => {
      controller.signal.addEventListener(
        "abort",
        () => resolve(timedOut ? timeoutResult(name, limitMs) : abortedResult(name)),
        { once: true },
      );
    });
    if (limitMs > 0 && limitMs <= MAX_TIMER_MS) {
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DimsumError("timeout", `Tool \`${name}\` timed out.`));
      }, limitMs);
    }
    try {
      const run = Promise.resolve()
        .then(() => (tool.execute as RunTool)(call.args, { ...ctx, signal: controller.signal }))
        .then(normalizeResult, (err: unknown) => failedResult(name, err));
      return await Promise.race([run, stopped]);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", forwardAbort);
    }
  }

  #add(entry: Entry): void {
    const wireName = this.#wireNames.assign(entry.tool.name, entry.wireName || undefined);
    const added = { ...entry, wireName };
    this.#entries.set(entry.tool.name, added);
    this.#byWire.set(wireName, added);
  }

  #unknownToolMessage(wireName: string): string {
    const names = [...this.#byWire.keys()];
    if (names.length === 0) return `Unknown tool \`${wireName}\`: no tools are available.`;
    const listed = names.slice(0, MAX_LISTED_NAMES).join(", ");
    const more = names.length > MAX_LISTED_NAMES ? ` and ${names.length - MAX_LISTED_NAMES} more` : "";
    return `Unknown tool \`${wireName}\`. Available tools: ${listed}${more}.`;
  }
}

type RunTool = (args: unknown, ctx: ToolContext) => Promise<ToolResult | string>;

// Converting a zod schema costs as much as the rest of building a request: do it once per schema
// object, so tools made per run around a shared schema (call_agent) are converted once too.
const convertedSchemas = new WeakMap<object, JsonSchema>();

/**
 * Records the JSON Schema of a parameter schema converted ahead of time (the built-ins', when the CLI
 * is bundled), so registries use it instead of converting again.
 */
export function rememberParameterSchema(parameters: object, schema: JsonSchema): void {
  convertedSchemas.set(parameters, schema);
}

function parametersOf(tool: Tool): JsonSchema {
  const key: object = tool.parameters;
  const cached = convertedSchemas.get(key);
  if (cached) return cached;
  const schema = convertParameters(tool);
  convertedSchemas.set(key, schema);
  return schema;
}

function convertParameters(tool: Tool): JsonSchema {
  if (tool.kind === "zod") {
    try {
      return zodToJsonSchema(tool.parameters);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new DimsumError("config", `Tool \`${tool.name}\` has unusable parameters: ${reason}`, {
        hint: "describe the parameters with z.object({...})",
        cause: err,
      });
    }
  }
  if (tool.kind === "json") return normalizeJsonSchema(tool.parameters);
  throw new DimsumError(
    "config",
    `Tool \`${String((tool as { name: unknown }).name)}\` has an unknown kind.`,
    {
      hint: 'use defineTool(...) for zod tools or kind: "json" for JSON Schema tools',
    },
  );
}

type ParsedArguments = { ok: true; args: Record<string, unknown> } | { ok: false; error: string };

function parseArguments(wireName: string, raw: string): ParsedArguments {
  if (raw.trim() === "") return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    return {
      ok: false,
      error: `The arguments for \`${wireName}\` are not valid JSON (${reason}): ${excerpt(raw)}. Send a JSON object.`,
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return { ok: false, error: `The arguments for \`${wireName}\` must be a JSON object, got ${got}.` };
  }
  return { ok: true, args: value as Record<string, unknown> };
}

function excerpt(raw: string): string {
  const text = raw.length > EXCERPT_LENGTH ? `${raw.slice(0, EXCERPT_LENGTH)}…` : raw;
  return JSON.stringify(text);
}

function invalidMessage(wireName: string, problems: string[]): string {
  return `Invalid arguments for \`${wireName}\`: ${problems.join("; ")}.`;
}

/** Accepts what tools (including untyped plugin tools) return and shapes it as a ToolResult. */
function normalizeResult(value: unknown): ToolResult {
  if (typeof value === "string") return { content: value };
  if (value === undefined || value === null) return { content: "" };
  if (typeof value === "object" && "content" in value) {
    const { content } = value as { content: unknown };
    if (typeof content === "string" || Array.isArray(content)) return value as ToolResult;
  }
  return { content: JSON.stringify(value) ?? String(value) };
}

function failedResult(name: string, err: unknown): ToolResult {
  const reason = err instanceof DimsumError ? err.toLine() : err instanceof Error ? err.message : String(err);
  return { content: `Tool \`${name}\` failed: ${reason}`, isError: true };
}

function timeoutResult(name: string, limitMs: number): ToolResult {
  return {
    content: `Tool \`${name}\` timed out after ${formatDuration(limitMs)} (its time limit) and was stopped.`,
    isError: true,
  };
}

function abortedResult(name: string): ToolResult {
  return { content: `Tool \`${name}\` was cancelled because the run was aborted.`, isError: true };
}

function formatDuration(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
