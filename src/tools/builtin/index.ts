/** The built-in tool set, and a registry holding all of it or a chosen subset. */
import { ToolRegistry } from "../registry.js";
import type { Tool } from "../types.js";
import { createWebSearchTool, type WebSearchConfig } from "../web-search/index.js";
import { calculatorTool } from "./calculator.js";
import { currentTimeTool } from "./current-time.js";
import { builtinFetchTools } from "./fetch-url.js";
import { builtinFileTools } from "./files.js";
import { builtinShellTools } from "./shell.js";
import { todoTool } from "./todo.js";

export interface BuiltinToolOptions {
  /** Search engines for `web_search` (see `webSearchConfigFromEnv`); DuckDuckGo alone by default. */
  webSearch?: WebSearchConfig;
}

/** Every built-in tool, in the order they are offered to the model. */
export function builtinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [
    calculatorTool,
    ...builtinFileTools,
    ...builtinShellTools,
    ...builtinFetchTools,
    createWebSearchTool(options.webSearch),
    todoTool,
    currentTimeTool,
  ];
}

/** A registry with all built-ins, or only `names` (unknown names raise a config error listing the valid ones). */
export function createBuiltinRegistry(names?: string[], options: BuiltinToolOptions = {}): ToolRegistry {
  const registry = new ToolRegistry(builtinTools(options));
  return names ? registry.subset(names) : registry;
}
