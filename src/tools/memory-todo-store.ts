/** A todo list that lives for one process (one-shot runs); sessions persist theirs in the store. */
import type { TodoItem, TodoStore } from "./types.js";

export function memoryTodoStore(initial: TodoItem[] = []): TodoStore {
  let items = initial.map((item) => ({ ...item }));
  return {
    list: () => items.map((item) => ({ ...item })),
    save: (next) => {
      items = next.map((item) => ({ ...item }));
    },
  };
}
