/** todo: a per-session checklist the model keeps to plan and track multi-step work. */
import * as z from "zod";
import { defineTool, type TodoItem, type ZodTool } from "../types.js";
import { errorResult, toolFailure } from "./tool-error.js";

const MARKS: Record<TodoItem["status"], string> = { pending: "[ ]", in_progress: "[~]", done: "[x]" };

/** The list as the model sees it: `[ ] 1. text`, `[~]` in progress, `[x]` done. */
export function renderTodos(items: TodoItem[]): string {
  if (items.length === 0) return "(no todos)";
  const done = items.filter((item) => item.status === "done").length;
  const lines = items.map((item) => `${MARKS[item.status]} ${item.id}. ${item.text}`);
  lines.push(`(${done} of ${items.length} done)`);
  return lines.join("\n");
}

const todoParams = z.object({
  action: z.enum(["add", "update", "list", "clear"]),
  text: z.string().optional().describe("Item text (add) or new text (update)"),
  id: z.number().int().optional().describe("Item number (update)"),
  status: z
    .enum(["pending", "in_progress", "done"])
    .optional()
    .describe("New status (update) or initial status (add)"),
});

/** todo: add, update, list or clear the session's todo items. */
export const todoTool: ZodTool = defineTool({
  name: "todo",
  description:
    "Keep a todo list for the current task. action=add with text; action=update with id and a new status " +
    "(pending, in_progress, done) and/or text; action=list; action=clear. Returns the whole list.",
  parameters: todoParams,
  async execute(args, ctx) {
    try {
      const items = [...(await ctx.todos.list())];
      if (args.action === "list") return renderTodos(items);
      if (args.action === "clear") {
        await ctx.todos.save([]);
        return "Todo list cleared.";
      }
      const text = args.text?.trim();
      if (args.action === "add") {
        if (!text) throw toolFailure("action add needs text.", "pass the item text in `text`");
        const id = items.reduce((max, item) => Math.max(max, item.id), 0) + 1;
        items.push({ id, text, status: args.status ?? "pending" });
      } else {
        if (args.id === undefined)
          throw toolFailure("action update needs an id.", "pass the item number in `id`");
        const index = items.findIndex((item) => item.id === args.id);
        const current = items[index];
        if (!current) {
          const known = items.map((item) => item.id).join(", ") || "none";
          throw toolFailure(`There is no todo item ${args.id}.`, `existing ids: ${known}`);
        }
        if (!text && !args.status) {
          throw toolFailure("action update needs a new status or text.", "pass `status` and/or `text`");
        }
        items[index] = { ...current, text: text || current.text, status: args.status ?? current.status };
      }
      await ctx.todos.save(items);
      return renderTodos(items);
    } catch (err) {
      return errorResult(err);
    }
  },
});
