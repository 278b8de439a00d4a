import { describe, expect, it } from "vitest";
import { createMemoryTools } from "../../src/memory/tools.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolContext, ToolResult } from "../../src/tools/types.js";
import { testToolContext } from "../support/tool-context.js";
import { hashEmbedder, newMemoryStore } from "./helpers.js";

function ctxFor(userId: string | undefined, sessionId = "s-live"): ToolContext {
  const ctx: ToolContext = {
    ...testToolContext({ runId: "run-7" }),
    sessionId,
  };
  if (userId !== undefined) ctx.userId = userId;
  return ctx;
}

function setup(options: Parameters<typeof createMemoryTools>[1] = {}) {
  const { db, store } = newMemoryStore({ embedder: hashEmbedder() });
  const registry = new ToolRegistry(createMemoryTools(store, options));
  // `null` runs the call with no user id at all.
  const call = async (name: string, args: unknown, userId: string | null = "alice"): Promise<ToolResult> => {
    const prepared = registry.prepareCall(name, JSON.stringify(args));
    if (!prepared.ok) return { content: prepared.error, isError: true };
    return registry.execute(prepared, ctxFor(userId ?? undefined));
  };
  return { db, store, registry, call };
}

describe("memory tools", () => {
  it("registers five tools with provider-ready schemas", () => {
    const { registry } = setup();
    expect(registry.names()).toEqual([
      "core_memory_append",
      "core_memory_replace",
      "memory_write",
      "memory_search",
      "recall_search",
    ]);
    const write = registry.schemas().find((s) => s.name === "memory_write");
    expect(write?.parameters).toMatchObject({ required: ["text", "type"] });
  });

  it("writes and searches archival memory for the calling user, with ids, types and scores", async () => {
    const { call, store } = setup();
    const saved = await call("memory_write", {
      text: "Prefers answers in Chinese",
      type: "procedural",
      importance: 8,
    });
    expect(saved.isError).toBeUndefined();
    expect(saved.content).toBe("Saved memory #1 (procedural).");
    const stored = await store.get("alice", "1");
    expect(stored).toMatchObject({ sourceSessionId: "s-live", sourceRunId: "run-7", importance: 8 });

    const again = await call("memory_write", { text: "prefers answers in Chinese.", type: "procedural" });
    expect(again.content).toMatch(/^Merged into existing memory #1 \(similarity 1\)/);

    const found = await call("memory_search", { query: "which language for answers?" });
    expect(found.content).toMatch(
      /^mode: hybrid, 1 result\n#1 \[procedural, importance 8, score 0\.\d+\] prefers answers in Chinese\.$/,
    );
    expect(found.data).toMatchObject({ mode: "hybrid", results: [{ id: "1", type: "procedural" }] });
    expect((await store.get("alice", "1"))?.accessCount).toBe(1);

    const otherUser = await call("memory_search", { query: "answers in Chinese" }, "bob");
    expect(otherUser.content).toBe("mode: hybrid, 0 results: no memory matched.");
  });

  it("edits core memory and reports refusals as errors the model can act on", async () => {
    const { call, store } = setup();
    const appended = await call("core_memory_append", { label: "user", text: "Name: Alice" });
    expect(appended.content).toBe('Core memory block "user" now holds 11 of 2000 characters:\nName: Alice');
    const replaced = await call("core_memory_replace", { label: "user", old: "Alice", new: "Alice Chen" });
    expect(replaced.isError).toBeUndefined();
    expect(await store.coreBlocks({ userId: "alice" })).toMatchObject([{ value: "Name: Alice Chen" }]);
    const full = await call("core_memory_append", { label: "user", text: "x".repeat(2000) });
    expect(full.isError).toBe(true);
    expect(full.content).toContain("over its limit of 2000");
  });

  it("searches past conversations, leaving out the live session", async () => {
    const { call, db } = setup();
    const sessions = new SqliteSessionStore(db);
    for (const sessionId of ["s-old", "s-live"]) {
      await sessions.openSession({ userId: "alice", sessionId });
      await sessions.appendMessages({ userId: "alice", sessionId }, undefined, [
        { role: "user", content: `my locker code is in the ${sessionId} notebook` },
      ]);
    }
    const result = await call("recall_search", { query: "locker code" });
    expect(result.content).toMatch(
      /^\[message 1, session s-old, user, .*\] my locker code is in the s-old notebook$/,
    );
    expect(await call("recall_search", { query: "giraffe" })).toMatchObject({
      content: "No earlier message matched.",
    });
  });

  it("refuses to work without a user id, and validates arguments", async () => {
    const { call } = setup();
    const anonymous = await call("memory_search", { query: "x" }, null);
    expect(anonymous).toMatchObject({ isError: true });
    expect(anonymous.content).toContain("no user id");
    const badType = await call("memory_write", { text: "x", type: "opinion" });
    expect(badType.isError).toBe(true);
    expect(badType.content).toContain("type");
  });

  it("scopes to one agent when asked", async () => {
    const { call, store } = setup({ agentId: "coder" });
    await call("memory_write", { text: "Uses pnpm, not npm", type: "procedural" });
    expect((await store.list("alice"))[0]?.agentId).toBe("coder");
  });
});
