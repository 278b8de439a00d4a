/** A minimal ToolContext for built-in tool tests: a real temp workspace and an in-memory todo list. */
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultToolsConfig } from "../../../src/tools/builtin/defaults.js";
import type { TodoItem, TodoStore, ToolContext, ToolResult, ZodTool } from "../../../src/tools/types.js";

/** Keeps todo items in memory, copying on the way in and out like a real store would. */
export class MemoryTodoStore implements TodoStore {
  items: TodoItem[] = [];
  list(): TodoItem[] {
    return this.items.map((item) => ({ ...item }));
  }
  save(items: TodoItem[]): void {
    this.items = items.map((item) => ({ ...item }));
  }
}

/** A fresh real temp folder (real path, so symlinked /tmp does not confuse comparisons). */
export async function makeTempDir(prefix = "dimsum-tools-"): Promise<string> {
  return realpath(await mkdtemp(join(tmpdir(), prefix)));
}

/** Removes a temp folder made by `makeTempDir`. */
export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** A context rooted at `workspace`; override anything per test. */
export function makeContext(workspace: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    signal: new AbortController().signal,
    workspace,
    runId: "test-run",
    todos: new MemoryTodoStore(),
    config: defaultToolsConfig(),
    ...overrides,
  };
}

/** Parses arguments through the tool's schema (applying defaults) and runs it, as the registry does. */
export async function runTool(
  tool: ZodTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolResult> {
  const parsed = tool.parameters.parse(args);
  const result = await tool.execute(parsed, ctx);
  return typeof result === "string" ? { content: result } : result;
}

/** The text of a result (all built-in tools return plain strings). */
export function textOf(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content
    .map((part) => (part.type === "text" ? part.text : `[image ${part.mimeType}]`))
    .join("");
}
