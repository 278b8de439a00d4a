import { describe, expect, it } from "vitest";
import { renderSystemLayers, renderTurnLayers } from "../../src/agent/layered-context.js";
import { memoryLayers } from "../../src/memory/injection.js";
import { hashEmbedder, newMemoryStore } from "./helpers.js";

describe("memory injection", () => {
  it("returns core blocks and the most relevant memories, and counts their use", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder() });
    await store.coreAppend({ userId: "u" }, "user", "Name: Ada");
    await store.setCoreBlock({ userId: "u" }, "goals", "");
    const coffee = await store.remember({
      userId: "u",
      text: "Ada drinks her coffee black",
      type: "semantic",
    });
    await store.remember({ userId: "u", text: "Ada plays chess on Thursdays", type: "episodic" });
    await store.remember({ userId: "u", text: "Always answer Ada in British English", type: "procedural" });

    const layers = await memoryLayers(store, { userId: "u", query: "how do I take my coffee?" });
    expect(layers.coreMemory).toEqual([{ label: "user", value: "Name: Ada" }]);
    expect(layers.memories[0]).toEqual({
      id: coffee.id,
      type: "semantic",
      text: "Ada drinks her coffee black",
    });
    expect(layers.memories.length).toBeLessThanOrEqual(3);
    expect(layers.trace.mode).toBe("hybrid");
    expect(layers.trace.ids).toEqual(layers.memories.map((m) => m.id));
    expect(layers.trace.scores).toHaveLength(layers.memories.length);
    expect((await store.get("u", coffee.id))?.accessCount).toBe(1);

    // Core memory is part of the stable system text; recalled memories go in the turn context.
    const system = renderSystemLayers({
      system: "Be helpful.",
      coreMemory: layers.coreMemory,
      memories: layers.memories,
    });
    expect(system).toContain("# Core memory\n\n<user>\nName: Ada\n</user>");
    expect(system).not.toContain("# Relevant memories about the user");
    expect(renderTurnLayers({ memories: layers.memories })).toContain(
      `[semantic #${coffee.id}] Ada drinks her coffee black`,
    );
  });

  it("keeps within the limit and character budget, cutting only a lone oversized memory", async () => {
    const { store } = newMemoryStore();
    for (let i = 0; i < 6; i++) {
      await store.remember({
        userId: "u",
        text: `project falcon note ${i} ${"detail ".repeat(i * 10)}`,
        type: "semantic",
      });
    }
    const small = await memoryLayers(store, { userId: "u", query: "project falcon", limit: 2 });
    expect(small.memories).toHaveLength(2);
    const budgeted = await memoryLayers(store, {
      userId: "u",
      query: "project falcon",
      limit: 6,
      charBudget: 100,
    });
    expect(budgeted.memories.reduce((n, m) => n + m.text.length, 0)).toBeLessThanOrEqual(100);
    expect(budgeted.memories.length).toBeGreaterThan(0);
    const tiny = await memoryLayers(store, { userId: "u", query: "detail", limit: 1, charBudget: 10 });
    expect(tiny.memories[0]?.text).toHaveLength(10);
    expect(tiny.memories[0]?.text.endsWith("…")).toBe(true);
    expect(budgeted.trace.mode).toBe("bm25");
  });

  it("injects nothing irrelevant, nothing for an empty message, and nothing of other users", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder() });
    await store.remember({ userId: "alice", text: "Alice is vegetarian", type: "semantic" });
    expect(
      (await memoryLayers(store, { userId: "alice", query: "what is the capital of Peru" })).memories,
    ).toEqual([]);
    expect((await memoryLayers(store, { userId: "alice", query: "  " })).memories).toEqual([]);
    expect((await memoryLayers(store, { userId: "bob", query: "is Alice vegetarian?" })).memories).toEqual(
      [],
    );
    expect(
      (await memoryLayers(store, { userId: "alice", query: "is Alice vegetarian?" })).memories,
    ).toHaveLength(1);
  });
});
