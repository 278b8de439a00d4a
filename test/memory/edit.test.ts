/**
 * A person's edits of their memory: a changed text is re-indexed and re-embedded (search finds the
 * new words and meaning, never the old), metadata edits keep the vector, other users' memories are
 * out of reach; core blocks are listed across agents and deleted one scope at a time.
 */
import { describe, expect, it } from "vitest";
import { hashEmbedder, newMemoryStore } from "./helpers.js";

describe("editing archival memories", () => {
  it("re-indexes and re-embeds a new text, and keeps the vector when only metadata changes", async () => {
    const embedder = hashEmbedder();
    const { store } = newMemoryStore({ embedder });
    const tea = await store.remember({
      userId: "u",
      text: "Drinks oolong tea every morning",
      type: "semantic",
    });
    await store.remember({ userId: "u", text: "Owns a red bicycle", type: "semantic" });
    // Load the vector index into its cache, so the edit has to invalidate it.
    expect((await store.search({ userId: "u", query: "oolong tea" })).hits[0]?.memory.id).toBe(tea.id);

    const calls = embedder.calls;
    const edited = await store.update("u", tea.id, { text: "Drinks espresso after lunch", importance: 9 });
    expect(edited).toMatchObject({ id: tea.id, text: "Drinks espresso after lunch", importance: 9 });
    expect(edited?.embeddingModel).toBe(embedder.model);
    expect(embedder.calls).toBe(calls + 1);

    const found = await store.search({ userId: "u", query: "espresso" });
    expect(found.mode).toBe("hybrid");
    expect(found.hits[0]?.memory.id).toBe(tea.id);
    const old = await store.search({ userId: "u", query: "oolong" });
    expect(old.hits.filter((h) => h.bm25Rank !== undefined).map((h) => h.memory.id)).not.toContain(tea.id);

    const before = embedder.calls;
    const retyped = await store.update("u", tea.id, { type: "procedural", tags: ["Coffee"] });
    expect(retyped).toMatchObject({
      type: "procedural",
      tags: ["coffee"],
      text: "Drinks espresso after lunch",
    });
    expect(retyped?.embeddingModel).toBe(embedder.model);
    expect(embedder.calls).toBe(before);
    expect((await store.search({ userId: "u", query: "espresso", type: "procedural" })).hits).toHaveLength(1);
  });

  it("refuses empty text, and reaches only the owner's memories", async () => {
    const { store } = newMemoryStore();
    const mine = await store.remember({ userId: "u", text: "Likes jazz", type: "semantic" });
    await expect(store.update("u", mine.id, { text: "  " })).rejects.toThrow(/needs text/);
    expect(await store.update("someone-else", mine.id, { text: "hijacked" })).toBeUndefined();
    expect(await store.update("u", "999999", { text: "x" })).toBeUndefined();
    expect((await store.get("u", mine.id))?.text).toBe("Likes jazz");
  });
});

describe("core blocks across agents", () => {
  it("lists every block of the person and deletes exactly one scope's", async () => {
    const { store } = newMemoryStore();
    // An agent's edit goes to a shared block of the same label when there is one: its own first.
    await store.setCoreBlock({ userId: "u", agentId: "scribe" }, "human", "Scribe's note");
    await store.setCoreBlock({ userId: "u" }, "human", "Shared note");
    await store.setCoreBlock({ userId: "u", agentId: "coder" }, "style", "Terse");
    await store.setCoreBlock({ userId: "other" }, "human", "Not yours");
    const all = await store.allCoreBlocks("u");
    expect(all.map((b) => [b.label, b.agentId ?? "", b.value])).toEqual([
      ["human", "", "Shared note"],
      ["human", "scribe", "Scribe's note"],
      ["style", "coder", "Terse"],
    ]);
    expect(await store.deleteCoreBlock({ userId: "u", agentId: "scribe" }, "human")).toBe(true);
    expect(await store.deleteCoreBlock({ userId: "u", agentId: "scribe" }, "human")).toBe(false);
    expect((await store.coreBlocks({ userId: "u", agentId: "scribe" })).map((b) => b.value)).toEqual([
      "Shared note",
    ]);
    expect(await store.deleteCoreBlock({ userId: "u" }, "HUMAN")).toBe(true);
    expect((await store.allCoreBlocks("u")).map((b) => b.label)).toEqual(["style"]);
    expect((await store.allCoreBlocks("other")).map((b) => b.value)).toEqual(["Not yours"]);
  });
});
