/** The built-in tool set, and a registry holding all of it or a chosen subset. */
import type { JsonSchema } from "../../llm/types.js";
import { rememberParameterSchema, ToolRegistry } from "../registry.js";
import type { Tool } from "../types.js";
import { createWebSearchTool, type WebSearchConfig } from "../web-search/index.js";
import { calculatorTool } from "./calculator.js";
import { currentTimeTool } from "./current-time.js";
import { builtinFetchTools } from "./fetch-url.js";
import { builtinFileTools } from "./files.js";
import { builtinShellTools } from "./shell.js";
import { todoTool } from "./todo.js";

/**
 * The built-ins' parameters as JSON Schema (JSON text), converted from their zod schemas when the CLI
 * is bundled (scripts/bundle-cli.mjs defines it) and so always of the same build; undefined
 * elsewhere, where the registry converts them on first use. Saves the conversion (~8 ms) in every
 * CLI run.
 */
declare const DIMSUM_BUILTIN_PARAMETERS: string | undefined;
const PRECOMPUTED: Record<string, JsonSchema> | undefined =
  typeof DIMSUM_BUILTIN_PARAMETERS === "undefined" ? undefined : JSON.parse(DIMSUM_BUILTIN_PARAMETERS);

export interface BuiltinToolOptions {
  /** Search engines for `web_search` (see `webSearchConfigFromEnv`); DuckDuckGo alone by default. */
  webSearch?: WebSearchConfig;
}

/** Every built-in tool, in the order they are offered to the model. */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  const tools = [
    calculatorTool,
    ...builtinFileTools,
    ...builtinShellTools,
    ...builtinFetchTools,
    createWebSearchTool(options.webSearch),
    todoTool,
    currentTimeTool,
  ];
  if (PRECOMPUTED) {
    for (const tool of tools) {
      const schema = PRECOMPUTED[tool.name];
      if (schema) rememberParameterSchema(tool.parameters, schema);
    }
  }
  return tools;
}

/** A registry with all built-ins, or only `names` (unknown names raise a config error listing the valid ones). */
export function createBuiltinRegistry(names?: string[], options: BuiltinToolOptions = {}): ToolRegistry {
  const registry = new ToolRegistry(builtinTools(options));
  return names ? registry.subset(names) : registry;
}
