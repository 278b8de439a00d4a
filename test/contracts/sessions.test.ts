import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import type { Message } from "../../src/llm/types.js";
import { todoStoreFor } from "../../src/store/todo-store.js";
import type { SessionRef } from "../../src/store/types.js";
import type { TodoItem } from "../../src/tools/types.js";
import { toolTurn } from "../store/helpers.js";
import { describeBackends, rawSql } from "./backends.js";
import { newStore } from "./session-store.js";

const a1: SessionRef = { userId: "A", sessionId: "window1" };
const a2: SessionRef = { userId: "A", sessionId: "window2" };
const b1: SessionRef = { userId: "B", sessionId: "window1" };

const image = {
  type: "image" as const,
  mimeType: "image/png",
  data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
};

/** One of every message shape providers need back exactly. */
const richHistory: Message[] = [
  { role: "system", content: "You are terse." },
  { role: "user", content: [{ type: "text", text: "What is in this picture? 图里有什么？" }, image] },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Let me look.", signature: "sig-anthropic-123" },
      { type: "reasoning", text: "", redactedData: "opaque==" },
      { type: "text", text: "Checking.", signature: "gemini-thought" },
      {
        type: "tool_call",
        id: "call_1",
        name: "view_image",
        arguments: '{"path":"a.png"}',
        signature: "fc-sig",
      },
      { type: "tool_call", id: "call_2", name: "shell", arguments: '{ "command" : "ls" }' },
    ],
  },
  {
    role: "tool",
    toolCallId: "call_1",
    toolName: "view_image",
    content: [{ type: "text", text: "here" }, image],
  },
  { role: "tool", toolCallId: "call_2", toolName: "shell", content: "exit 1", isError: true },
  { role: "assistant", content: [{ type: "text", text: "A cat." }] },
  { role: "user", content: "thanks" },
];

async function rejection(promise: Promise<unknown>): Promise<DimsumError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DimsumError);
  return err as DimsumError;
}

describeBackends("session store", (open) => {
  describe("sessions", () => {
    it("opens once per user and key, filling an empty title later", async () => {
      let clock = 1000;
      const { store } = await newStore(open, { now: () => clock });
      const created = await store.openSession(a1);
      expect(created).toEqual({
        userId: "A",
        sessionId: "window1",
        createdAt: 1000,
        updatedAt: 1000,
        messageCount: 0,
      });
      clock = 2000;
      expect(await store.openSession(a1, { title: "First" })).toMatchObject({
        title: "First",
        createdAt: 1000,
      });
      expect(await store.openSession(a1, { title: "Second" })).toMatchObject({ title: "First" });
      expect(await store.getSession(a2)).toBeUndefined();
    });

    it("lists a user's sessions, most recently active first, with message counts", async () => {
      let clock = 1;
      const { store } = await newStore(open, { now: () => clock++ });
      await store.openSession(a1);
      await store.openSession(a2);
      await store.openSession(b1);
      await store.appendMessages(a1, undefined, [{ role: "user", content: "hi" }]);
      const list = await store.listSessions("A");
      expect(list.map((s) => [s.sessionId, s.messageCount])).toEqual([
        ["window1", 1],
        ["window2", 0],
      ]);
      expect((await store.listSessions("B")).map((s) => s.sessionId)).toEqual(["window1"]);
      expect(await store.listSessions("C")).toEqual([]);
    });

    it("rejects empty ids and writes to sessions never opened", async () => {
      const { store } = await newStore(open);
      expect((await rejection(store.openSession({ userId: "", sessionId: "x" }))).code).toBe("config");
      const err = await rejection(store.appendMessages(a1, undefined, [{ role: "user", content: "hi" }]));
      expect(err.message).toContain("Session A:window1 does not exist");
    });
  });

  describe("messages", () => {
    it("round-trip exactly: reasoning with signatures, tool calls, images, error flags", async () => {
      const { store, warnings } = await newStore(open, {
        estimateTokens: (m) => JSON.stringify(m).length / 4,
      });
      await store.openSession(a1);
      const stored = await store.appendMessages(a1, "run-1", richHistory);
      expect(stored.map((s) => s.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      const loaded = await store.loadMessages(a1);
      expect(loaded).toEqual(stored);
      expect(loaded.map((s) => s.message)).toEqual(richHistory);
      expect(loaded[4]?.message).toHaveProperty("isError", true);
      expect(loaded[3]?.message).not.toHaveProperty("isError");
      expect(loaded.every((s) => s.runId === "run-1" && s.tokensEstimate !== undefined && !s.compacted)).toBe(
        true,
      );
      expect(warnings).toEqual([]);
    });

    it("keep A:window1, A:window2 and B:window1 apart", async () => {
      const { store } = await newStore(open);
      for (const ref of [a1, a2, b1]) {
        await store.openSession(ref);
        await store.appendMessages(ref, undefined, [
          { role: "user", content: `I am ${ref.userId}:${ref.sessionId}` },
        ]);
        await store.setSummary(ref, `summary of ${ref.userId}:${ref.sessionId}`);
      }
      for (const ref of [a1, a2, b1]) {
        const texts = (await store.loadMessages(ref, { includeCompacted: true })).map(
          (s) => s.message.content,
        );
        expect(texts).toEqual([`I am ${ref.userId}:${ref.sessionId}`]);
        expect(await store.getSummary(ref)).toBe(`summary of ${ref.userId}:${ref.sessionId}`);
      }
      // B compacting "window1" touches only B's window1, whatever message ids it names.
      const aIds = (await store.loadMessages(a1)).map((s) => s.id);
      await store.markCompacted(b1, Math.max(...aIds) + 10);
      expect(await store.loadMessages(a1)).toHaveLength(1);
      expect(await store.loadMessages(b1)).toHaveLength(0);
      expect(await store.loadMessages({ userId: "B", sessionId: "window2" })).toEqual([]);
    });

    it("refuse a tool call stored apart from its results, and orphan results", async () => {
      const { store } = await newStore(open);
      await store.openSession(a1);
      const [assistant, ...results] = toolTurn("t", 2);
      const lone = await rejection(store.appendMessages(a1, "r", [assistant!]));
      expect(lone.message).toContain("tool calls without results");
      expect((await rejection(store.appendMessages(a1, "r", results))).message).toContain(
        "does not answer a call",
      );
      const partial = await rejection(store.appendMessages(a1, "r", [assistant!, results[0]!]));
      expect(partial.message).toContain("t-call-1");
      expect(await store.loadMessages(a1)).toEqual([]);
      await expect(store.appendMessages(a1, "r", toolTurn("t", 2))).resolves.toHaveLength(3);
    });

    it("compact: summary and cut in one step, history kept, limit returns the newest", async () => {
      const { store } = await newStore(open);
      await store.openSession(a1);
      await store.appendMessages(a1, "r1", [{ role: "user", content: "remember 42" }]);
      const turn = await store.appendMessages(a1, "r1", toolTurn("a", 2));
      await store.appendMessages(a1, "r2", [{ role: "user", content: "next" }]);

      const cut = await rejection(store.compact(a1, { summary: "s", uptoMessageId: turn[0]!.id }));
      expect(cut.message).toContain("tool result that would lose its call");
      expect(await store.getSummary(a1)).toBeUndefined();

      expect(await store.compact(a1, { summary: "user said 42", uptoMessageId: turn[2]!.id })).toBe(4);
      expect((await store.loadMessages(a1)).map((s) => s.message.content)).toEqual(["next"]);
      const all = await store.loadMessages(a1, { includeCompacted: true });
      expect(all.map((s) => s.compacted)).toEqual([true, true, true, true, false]);
      expect((await store.getSession(a1))?.summary).toBe("user said 42");
      expect((await store.loadMessages(a1, { includeCompacted: true, limit: 2 })).map((s) => s.seq)).toEqual([
        4, 5,
      ]);
      await store.setSummary(a1, undefined);
      expect(await store.getSummary(a1)).toBeUndefined();
    });

    it("skip a row with corrupt JSON and report it instead of failing the load", async () => {
      const { store, backend, warnings } = await newStore(open);
      await store.openSession(a1);
      const stored = await store.appendMessages(a1, undefined, [
        { role: "user", content: "one" },
        { role: "user", content: "two" },
        { role: "user", content: "three" },
      ]);
      await rawSql(backend, "UPDATE messages SET content_json = '{broken' WHERE id = ?", [stored[1]!.id]);
      await rawSql(backend, "UPDATE messages SET content_json = '42' WHERE id = ?", [stored[2]!.id]);
      const loaded = await store.loadMessages(a1);
      expect(loaded.map((s) => s.message.content)).toEqual(["one"]);
      expect(warnings).toHaveLength(2);
      expect(warnings[0]).toContain(`message ${stored[1]!.id} of session A:window1`);
      expect(warnings[1]).toContain("user content is not text or parts");
    });
  });

  describe("todos", () => {
    const items: TodoItem[] = [
      { id: 1, text: "write tests", status: "done" },
      { id: 2, text: "ship", status: "in_progress" },
    ];

    it("are kept per session and replaced on save", async () => {
      const { store } = await newStore(open);
      for (const ref of [a1, a2, b1]) await store.openSession(ref);
      await store.saveTodos(a1, items);
      expect(await store.getTodos(a1)).toEqual(items);
      expect(await store.getTodos(a2)).toEqual([]);
      expect(await store.getTodos(b1)).toEqual([]);
      await store.saveTodos(a1, [items[1]!]);
      expect(await store.getTodos(a1)).toEqual([items[1]]);
    });

    it("reach the todo tool through todoStoreFor", async () => {
      const { store } = await newStore(open);
      await store.openSession(b1);
      const todos = todoStoreFor(store, b1);
      await todos.save(items);
      expect(await todos.list()).toEqual(items);
      expect(await store.getTodos(b1)).toEqual(items);
      expect(await store.getTodos(a1)).toEqual([]);
    });

    it("survive a corrupt row as an empty list with a warning", async () => {
      const { store, backend, warnings } = await newStore(open);
      await store.openSession(a1);
      await store.saveTodos(a1, items);
      await rawSql(backend, "UPDATE todos SET items_json = 'nope'");
      expect(await store.getTodos(a1)).toEqual([]);
      expect(warnings[0]).toContain("todo list of session A:window1");
    });
  });
});
