/**
 * The HTTP tool definition format (`tools/http/*.json` or the config's `httpTools`), checked with
 * zod and then for meaning (the seed's own form is taken too: `parameters` as a list of
 * `{name, type, required, description?}`, no `description` needed): every `{{param}}` must be a declared parameter (or a value an earlier
 * step extracts), paths must parse, the URL must be http(s).
 */
import * as z from "zod";
import { DimsumError } from "../../errors.js";
import { type JsonPath, parsePath, parsePathList } from "./extract.js";
import { type Placeholder, parseTemplate, placeholdersIn } from "./template.js";

export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;
export const DEFAULT_MAX_RESPONSE_CHARS = 8_000;
const MAX_STEPS = 5;

const method = z
  .string()
  .transform((m) => m.toUpperCase())
  .pipe(z.enum(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"]));

const scalar = z.union([z.string(), z.number(), z.boolean()]);

/** Fields shared by the final request and each step. */
const requestFields = {
  method: method.default("GET"),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).optional(),
  query: z.record(z.string(), scalar).optional(),
  /** An object/array (sent as JSON, or as a form with bodyType "form") or JSON text. */
  body: z.unknown().optional(),
  bodyType: z.enum(["json", "form"]).optional(),
};

const stepSchema = z
  .object({
    name: z.string().optional(),
    ...requestFields,
    /** Parameter name -> response path; the values become parameters of later requests. */
    extract: z.record(z.string().regex(/^[A-Za-z_$][\w$-]*$/, "must be a parameter name"), z.string()),
    /** Also show the extracted values to the model in the final result. */
    includeInResult: z.boolean().optional(),
    /** Said to the model when a required extracted value is missing (may use {{param}}). */
    missingMessage: z.string().optional(),
  })
  .strict();

const definitionSchema = z
  .object({
    $comment: z.string().optional(),
    name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "must be 1-64 letters, digits, _ or -"),
    description: z.string().min(1),
    parameters: z.record(z.string(), z.unknown()).default({ type: "object", properties: {} }),
    ...requestFields,
    steps: z.array(stepSchema).max(MAX_STEPS).optional(),
    timeoutMs: z.number().int().positive().max(600_000).optional(),
    responseExtract: z.string().optional(),
    maxResponseChars: z.number().int().positive().max(1_000_000).optional(),
    allowPrivateNetwork: z.boolean().optional(),
  })
  .strict();

/** One parameter in the seed's list form: `{name, type, required, description?}`. */
const listedParameter = z
  .object({
    name: z.string().regex(/^[A-Za-z_][\w-]{0,63}$/, "must be a parameter name"),
    type: z
      .string()
      .transform((t) => t.toLowerCase())
      .pipe(z.enum(["string", "number", "integer", "boolean", "array", "object"])),
    required: z.boolean().optional(),
    description: z.string().optional(),
    enum: z.array(scalar).optional(),
    default: scalar.optional(),
  })
  .strict();

/**
 * The seed's own format, made the JSON Schema form: `parameters` as a list of `{name, type, required,
 * description?}` becomes an object schema, and a missing `description` is made from the request.
 */
export function normalizeHttpToolDefinition(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
  if (Array.isArray(out.parameters)) {
    const listed = z.array(listedParameter).safeParse(out.parameters);
    if (listed.success) {
      const properties: Record<string, unknown> = {};
      for (const { name, required: _required, ...schema } of listed.data) properties[name] = schema;
      const required = listed.data.filter((p) => p.required === true).map((p) => p.name);
      out.parameters = { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
    }
  }
  if ((out.description === undefined || out.description === "") && typeof out.url === "string") {
    const name = typeof out.name === "string" ? out.name : "this tool";
    const verb = typeof out.method === "string" ? out.method.toUpperCase() : "GET";
    out.description = `${name}: calls ${verb} ${out.url.split("?")[0]}`;
  }
  return out;
}

export type HttpStepDefinition = z.output<typeof stepSchema>;
export type HttpToolDefinition = z.output<typeof definitionSchema>;

/** A request ready to render: the final one, or a step. */
export interface HttpRequestTemplate {
  method: HttpToolDefinition["method"];
  url: string;
  headers?: Record<string, string> | undefined;
  query?: Record<string, string | number | boolean> | undefined;
  body?: unknown;
  bodyType?: "json" | "form" | undefined;
}

/** A checked definition with its paths parsed. */
export interface CheckedHttpTool {
  definition: HttpToolDefinition;
  responsePaths: JsonPath[] | undefined;
  steps: Array<{ step: HttpStepDefinition; extract: Array<{ name: string; path: JsonPath }> }>;
  /** Names of the env variables the definition reads (their values are redacted). */
  envNames: string[];
}

export type DefinitionResult = { ok: true; tool: CheckedHttpTool } | { ok: false; message: string };

/** Validates one definition; the message lists the problems by field. */
export function checkHttpToolDefinition(value: unknown): DefinitionResult {
  if (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as { parameters?: unknown }).parameters)
  ) {
    const listed = z.array(listedParameter).safeParse((value as { parameters: unknown[] }).parameters);
    if (!listed.success) {
      const problems = listed.error.issues
        .slice(0, 5)
        .map((i) => `parameters.${i.path.map(String).join(".")}: ${i.message}`);
      return { ok: false, message: problems.join("; ") };
    }
  }
  const parsed = definitionSchema.safeParse(normalizeHttpToolDefinition(value));
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.map(String).join(".") || "(top level)"}: ${i.message}`);
    return { ok: false, message: problems.join("; ") };
  }
  try {
    return { ok: true, tool: checkMeaning(parsed.data) };
  } catch (err) {
    if (err instanceof DimsumError) return { ok: false, message: err.toLine() };
    throw err;
  }
}

function checkMeaning(definition: HttpToolDefinition): CheckedHttpTool {
  const schema = definition.parameters;
  if (schema.type !== undefined && schema.type !== "object") {
    throw configError('`parameters` must be a JSON Schema with "type": "object"');
  }
  const properties = schema.properties ?? {};
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) {
    throw configError("`parameters.properties` must be an object");
  }
  const known = new Set(Object.keys(properties));
  const envNames = new Set<string>();
  const steps: CheckedHttpTool["steps"] = [];
  for (const [index, step] of (definition.steps ?? []).entries()) {
    const where = `steps[${index}]${step.name ? ` (${step.name})` : ""}`;
    checkRequest(step, where, known, envNames);
    for (const placeholder of placeholdersIn(step.missingMessage ?? "")) {
      checkPlaceholder(placeholder, `${where}.missingMessage`, known);
    }
    const extract = Object.entries(step.extract).map(([name, path]) => ({ name, path: parsePath(path) }));
    if (extract.length === 0) throw configError(`${where}.extract must name at least one value to pass on`);
    for (const { name } of extract) known.add(name);
    steps.push({ step, extract });
  }
  checkRequest(definition, "the request", known, envNames);
  for (const p of placeholdersIn(definition.description)) if (p.kind === "env") envNames.add(p.name);
  const responsePaths =
    definition.responseExtract !== undefined && definition.responseExtract.trim() !== ""
      ? parsePathList(definition.responseExtract)
      : undefined;
  return { definition, responsePaths, steps, envNames: [...envNames] };
}

function checkRequest(
  request: HttpRequestTemplate,
  where: string,
  known: Set<string>,
  envNames: Set<string>,
) {
  const url = parseTemplate(request.url);
  const first = url[0];
  const startsWithEnv = typeof first !== "string" && first?.kind === "env";
  if (!startsWithEnv && !(typeof first === "string" && /^https?:\/\//i.test(first))) {
    throw configError(
      `${where}: url must start with http:// or https:// (or with {{env.NAME}} holding a base URL)`,
    );
  }
  if (request.body !== undefined && (request.method === "GET" || request.method === "HEAD")) {
    throw configError(
      `${where}: a ${request.method} request cannot have a body; use query or another method`,
    );
  }
  if (request.bodyType === "form" && (typeof request.body !== "object" || request.body === null)) {
    throw configError(`${where}: bodyType "form" needs an object body`);
  }
  for (const part of [request.url, request.headers, request.query, request.body]) {
    for (const placeholder of placeholdersIn(part)) {
      checkPlaceholder(placeholder, where, known);
      if (placeholder.kind === "env") envNames.add(placeholder.name);
    }
  }
}

function checkPlaceholder(placeholder: Placeholder, where: string, known: Set<string>): void {
  if (placeholder.kind === "param" && !known.has(placeholder.path[0]!)) {
    throw configError(
      `${where}: ${placeholder.raw} is not a declared parameter; add "${placeholder.path[0]}" to parameters.properties`,
    );
  }
}

function configError(message: string): DimsumError {
  return new DimsumError("config", message);
}
