import { describe, expect, it } from "vitest";
import { renderTodos, todoTool } from "../../../src/tools/builtin/todo.js";
import { MemoryTodoStore, makeContext, runTool, textOf } from "./context.js";

function setup() {
  const todos = new MemoryTodoStore();
  const ctx = makeContext("/tmp", { todos });
  const call = (args: Record<string, unknown>) => runTool(todoTool, args, ctx);
  return { todos, call };
}

describe("todo", () => {
  it("adds, updates and lists items, rendering their status", async () => {
    const { todos, call } = setup();
    await call({ action: "add", text: "read the code" });
    await call({ action: "add", text: "write tests" });
    await call({ action: "add", text: "ship it" });
    await call({ action: "update", id: 1, status: "done" });
    const result = await call({ action: "update", id: 2, status: "in_progress", text: "write good tests" });
    expect(textOf(result)).toBe(
      "[x] 1. read the code\n[~] 2. write good tests\n[ ] 3. ship it\n(1 of 3 done)",
    );
    expect(textOf(await call({ action: "list" }))).toBe(textOf(result));
    expect(todos.items).toEqual([
      { id: 1, text: "read the code", status: "done" },
      { id: 2, text: "write good tests", status: "in_progress" },
      { id: 3, text: "ship it", status: "pending" },
    ]);
  });

  it("clears the list and numbers new items from 1 again", async () => {
    const { todos, call } = setup();
    await call({ action: "add", text: "a" });
    expect(textOf(await call({ action: "clear" }))).toBe("Todo list cleared.");
    expect(textOf(await call({ action: "list" }))).toBe("(no todos)");
    await call({ action: "add", text: "b" });
    expect(todos.items).toEqual([{ id: 1, text: "b", status: "pending" }]);
  });

  it("reports unknown ids, missing text and empty updates", async () => {
    const { call } = setup();
    await call({ action: "add", text: "a" });
    const unknown = await call({ action: "update", id: 7, status: "done" });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe("There is no todo item 7. (existing ids: 1)");
    expect(textOf(await call({ action: "add", text: "   " }))).toContain("action add needs text");
    expect(textOf(await call({ action: "update", status: "done" }))).toContain("needs an id");
    expect(textOf(await call({ action: "update", id: 1 }))).toContain("needs a new status or text");
  });

  it("renders an empty list", () => {
    expect(renderTodos([])).toBe("(no todos)");
  });
});
