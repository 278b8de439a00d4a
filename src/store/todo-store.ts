/** Adapts a session's todo list in the SessionStore to the TodoStore the todo tool uses. */
import type { TodoItem, TodoStore } from "../tools/types.js";
import type { SessionRef, SessionStore } from "./types.js";

/** A TodoStore that reads and writes the todos of one session. */
export function todoStoreFor(store: SessionStore, ref: SessionRef): TodoStore {
  const owner: SessionRef = { userId: ref.userId, sessionId: ref.sessionId };
  return {
    list: (): Promise<TodoItem[]> => store.getTodos(owner),
    save: (items: TodoItem[]): Promise<void> => store.saveTodos(owner, items),
  };
}
