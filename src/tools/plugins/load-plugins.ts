/**
 * JS tool plugins: `.js`/`.mjs` files at the top level of `<DIMSUM_HOME>/tools/` and
 * `<project>/tools/`, each default-exporting `{ name, description, parameters, execute(args, ctx) }`.
 * `parameters` is a JSON Schema object or a zod schema (anything with `safeParse`).
 *
 * SECURITY: a plugin is ordinary JavaScript imported into the Dimsum process. It runs with the full
 * rights of that process (files, network, environment variables, child processes) as soon as it is
 * loaded, before any tool call and outside every workspace and network rule. Install only plugins
 * you would run as a script yourself, and only run Dimsum in projects whose `tools/` you trust.
 */
import { execFile } from "node:child_process";
import { readdir } from "node:fs/promises";
import { extname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { z } from "zod";
import { DimsumError } from "../../errors.js";
import { importExternal } from "../../import-external.js";
import type { JsonSchema } from "../../llm/types.js";
import { zodToJsonSchema } from "../json-schema.js";
import type { JsonSchemaTool, Tool, ToolContext, ToolResult, ZodTool } from "../types.js";

export interface PluginLoadError {
  /** The plugin file (or folder, when it could not be read). */
  path: string;
  message: string;
}

export interface PluginsLoadResult {
  tools: Tool[];
  errors: PluginLoadError[];
}

const PLUGIN_EXTENSIONS = new Set([".js", ".mjs"]);
const SYNTAX_CHECK_TIMEOUT_MS = 5_000;

/** `<home>/tools`, then `<cwd>/tools` (the project's plugin wins on a name clash). */
export function defaultPluginDirs(home: string, cwd: string): string[] {
  return [join(home, "tools"), join(cwd, "tools")];
}

/** Imports every plugin file in `dirs`; broken files are reported with their path and skipped. */
export async function loadPlugins(dirs: readonly string[]): Promise<PluginsLoadResult> {
  const errors: PluginLoadError[] = [];
  const files: string[] = [];
  for (const dir of [...new Set(dirs.map((d) => resolve(d)))]) {
    const listed = await listPluginFiles(dir);
    if ("error" in listed) errors.push(listed.error);
    else files.push(...listed.files);
  }
  const loaded = await Promise.all(files.map(loadPluginFile));
  const byName = new Map<string, Tool>();
  for (const result of loaded) {
    if ("error" in result) {
      errors.push(result.error);
      continue;
    }
    byName.delete(result.tool.name);
    byName.set(result.tool.name, result.tool);
  }
  return { tools: [...byName.values()], errors };
}

async function listPluginFiles(dir: string): Promise<{ files: string[] } | { error: PluginLoadError }> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    const files = entries
      .filter((e) => (e.isFile() || e.isSymbolicLink()) && PLUGIN_EXTENSIONS.has(extname(e.name)))
      .map((e) => join(dir, e.name))
      .sort();
    return { files };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { files: [] };
    return { error: { path: dir, message: `cannot read the plugin folder: ${(err as Error).message}` } };
  }
}

async function loadPluginFile(path: string): Promise<{ tool: Tool } | { error: PluginLoadError }> {
  let module: { default?: unknown };
  try {
    module = (await importExternal(pathToFileURL(path).href)) as { default?: unknown };
  } catch (err) {
    return { error: { path, message: await describeImportError(err, path) } };
  }
  try {
    return { tool: toolFromPlugin(module.default) };
  } catch (err) {
    const message = err instanceof DimsumError ? err.toLine() : String(err);
    return { error: { path, message } };
  }
}

/** Checks a plugin's default export and turns it into a registry tool; throws DimsumError('config'). */
export function toolFromPlugin(value: unknown): Tool {
  if (typeof value !== "object" || value === null) {
    throw shapeError("has no default export object");
  }
  const plugin = value as Record<string, unknown>;
  const { name, description, parameters, execute, concurrencySafe, timeoutMs } = plugin;
  if (typeof name !== "string" || name.trim() === "") throw shapeError("`name` must be a non-empty string");
  if (typeof description !== "string" || description.trim() === "") {
    throw shapeError(`\`description\` of \`${name}\` must be a non-empty string`);
  }
  if (typeof execute !== "function") throw shapeError(`\`execute\` of \`${name}\` must be a function`);
  if (concurrencySafe !== undefined && typeof concurrencySafe !== "boolean") {
    throw shapeError(`\`concurrencySafe\` of \`${name}\` must be true or false`);
  }
  if (timeoutMs !== undefined && !(typeof timeoutMs === "number" && timeoutMs >= 0)) {
    throw shapeError(`\`timeoutMs\` of \`${name}\` must be a number of milliseconds`);
  }
  // Called as a method so plugins may use `this` for their own helpers.
  const run = (args: unknown, ctx: ToolContext) =>
    (plugin.execute as (a: unknown, c: ToolContext) => Promise<ToolResult | string>)(args, ctx);
  const base = {
    name,
    description,
    ...(concurrencySafe === undefined ? {} : { concurrencySafe }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
  if (isZodSchema(parameters)) {
    try {
      zodToJsonSchema(parameters);
    } catch (err) {
      const reason = err instanceof DimsumError ? err.message : String(err);
      throw shapeError(
        `the zod \`parameters\` of \`${name}\` cannot be used (${reason}); use zod 4's z.object({...})`,
      );
    }
    const tool: ZodTool = { ...base, kind: "zod", parameters, execute: run };
    return tool;
  }
  const schema = parameters ?? { type: "object", properties: {} };
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw shapeError(`\`parameters\` of \`${name}\` must be a JSON Schema object or a zod schema`);
  }
  const type = (schema as JsonSchema).type;
  if (type !== undefined && type !== "object") {
    throw shapeError(`\`parameters\` of \`${name}\` must describe an object ("type": "object")`);
  }
  const tool: JsonSchemaTool = { ...base, kind: "json", parameters: schema as JsonSchema, execute: run };
  return tool;
}

function isZodSchema(value: unknown): value is z.ZodType {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

function shapeError(problem: string): DimsumError {
  return new DimsumError("config", `The plugin ${problem}.`, {
    hint: "export default { name, description, parameters, execute(args, ctx) }",
  });
}

/**
 * The import failure in one line. Syntax errors are located with `node --check`, because an ES
 * module's SyntaxError carries no position (and loaders such as test runners replace it with their own).
 */
async function describeImportError(err: unknown, path: string): Promise<string> {
  const syntax = await checkSyntax(path);
  if (syntax) {
    const hint = /import statement outside a module|Unexpected token 'export'/.test(syntax.message)
      ? "; rename the file to .mjs so Node loads it as an ES module"
      : "";
    return `${syntax.message}${syntax.line === undefined ? "" : ` (line ${syntax.line})`}${hint}`;
  }
  const error = err instanceof Error ? err : new Error(String(err));
  const message = `${error.name}: ${error.message}`;
  // Errors thrown while the module runs point at it in their stack.
  const frame = error.stack
    ?.split("\n")
    .find((l) => l.includes(pathToFileURL(path).href) || l.includes(`${path}:`));
  const where = frame ? /:(\d+):\d+\)?$/.exec(frame.trim()) : null;
  return where ? `${message} (thrown at line ${where[1]} while loading)` : message;
}

/** Node's own verdict on the file's syntax: undefined when it parses. */
function checkSyntax(path: string): Promise<{ message: string; line: number | undefined } | undefined> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--check", path],
      { timeout: SYNTAX_CHECK_TIMEOUT_MS, windowsHide: true },
      (error, _stdout, stderr) => {
        if (!error) return done(undefined);
        const lines = stderr.split("\n");
        const message = lines.find((l) => /^\w*Error\b/.test(l))?.trim();
        if (!message) return done(undefined);
        const position = /:(\d+)\s*$/.exec(lines[0] ?? "");
        done({ message, line: position ? Number(position[1]) : undefined });
      },
    );
  });
}
