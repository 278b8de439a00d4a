/** The built-in tool set, and a registry holding all of it or a chosen subset. */
import { ToolRegistry } from "../registry.js";
import type { Tool } from "../types.js";
import { calculatorTool } from "./calculator.js";
import { currentTimeTool } from "./current-time.js";
import { builtinFetchTools } from "./fetch-url.js";
import { builtinFileTools } from "./files.js";
import { builtinShellTools } from "./shell.js";
import { todoTool } from "./todo.js";

/** Every built-in tool, in the order they are offered to the model. */
export function builtinTools(): Tool[] {
  return [
    calculatorTool,
    ...builtinFileTools,
    ...builtinShellTools,
    ...builtinFetchTools,
    todoTool,
    currentTimeTool,
  ];
}

/** A registry with all built-ins, or only `names` (unknown names raise a config error listing the valid ones). */
export function createBuiltinRegistry(names?: string[]): ToolRegistry {
  const registry = new ToolRegistry(builtinTools());
  return names ? registry.subset(names) : registry;
}
