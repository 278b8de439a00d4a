import { describe, expect, it } from "vitest";
import { newMemoryStore } from "./helpers.js";

describe("core memory", () => {
  it("creates blocks on first append and appends line by line", async () => {
    const { store } = newMemoryStore({ now: () => 42 });
    const scope = { userId: "u" };
    expect(await store.coreBlocks(scope)).toEqual([]);
    expect(await store.coreAppend(scope, "User", "Name: Ada")).toEqual({
      ok: true,
      block: { label: "user", value: "Name: Ada", limit: 2000, updatedAt: 42 },
    });
    await store.coreAppend(scope, "user", "Prefers metric units");
    await store.coreAppend(scope, "persona", "Be brief.");
    expect(await store.coreBlocks(scope)).toEqual([
      { label: "persona", value: "Be brief.", limit: 2000, updatedAt: 42 },
      { label: "user", value: "Name: Ada\nPrefers metric units", limit: 2000, updatedAt: 42 },
    ]);
  });

  it("refuses an append past the limit and says to condense", async () => {
    const { store } = newMemoryStore({ coreLimit: 40 });
    const scope = { userId: "u" };
    await store.coreAppend(scope, "user", "x".repeat(30));
    const refused = await store.coreAppend(scope, "user", "this line is too long to fit");
    expect(refused.ok).toBe(false);
    if (refused.ok) throw new Error("unreachable");
    expect(refused.reason).toContain(
      'Core memory block "user" would hold 59 characters, over its limit of 40',
    );
    expect(refused.reason).toContain("core_memory_replace");
    expect((await store.coreBlocks(scope))[0]?.value).toBe("x".repeat(30));
  });

  it("replaces exact text, refuses text that is absent, and deletes with an empty replacement", async () => {
    const { store } = newMemoryStore();
    const scope = { userId: "u" };
    await store.coreAppend(scope, "user", "Lives in Berlin");
    await store.coreAppend(scope, "user", "Has a dog");
    const moved = await store.coreReplace(scope, "user", "Berlin", "Munich");
    expect(moved).toMatchObject({ ok: true, block: { value: "Lives in Munich\nHas a dog" } });
    const missing = await store.coreReplace(scope, "user", "Paris", "Rome");
    expect(missing).toMatchObject({ ok: false });
    expect(!missing.ok && missing.reason).toContain("does not contain the text to replace");
    expect(await store.coreReplace(scope, "user", "Has a dog", "")).toMatchObject({
      ok: true,
      block: { value: "Lives in Munich" },
    });
    expect(await store.coreReplace(scope, "goals", "x", "y")).toMatchObject({ ok: false });
  });

  it("checks labels and replacement length", async () => {
    const { store } = newMemoryStore({ coreLimit: 20 });
    const scope = { userId: "u" };
    const bad = await store.coreAppend(scope, "../etc", "x");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.reason).toContain("not a valid block label");
    await store.coreAppend(scope, "user", "short");
    expect(await store.coreReplace(scope, "user", "short", "much much much longer text")).toMatchObject({
      ok: false,
    });
    expect(await store.setCoreBlock(scope, "user", "a".repeat(30), { limit: 50 })).toMatchObject({
      ok: true,
      block: { limit: 50 },
    });
  });

  it("keeps users apart and lets an agent's block shadow the shared one", async () => {
    const { store } = newMemoryStore();
    await store.coreAppend({ userId: "alice" }, "user", "Alice's secret");
    await store.coreAppend({ userId: "bob" }, "user", "Bob");
    expect((await store.coreBlocks({ userId: "bob" })).map((b) => b.value)).toEqual(["Bob"]);
    await store.setCoreBlock({ userId: "alice", agentId: "coder" }, "persona", "You write TypeScript.");
    await store.coreAppend({ userId: "alice" }, "persona", "You are friendly.");
    expect(await store.coreBlocks({ userId: "alice" })).toMatchObject([
      { label: "persona", value: "You are friendly." },
      { label: "user", value: "Alice's secret" },
    ]);
    expect(await store.coreBlocks({ userId: "alice", agentId: "coder" })).toMatchObject([
      { label: "persona", value: "You write TypeScript.", agentId: "coder" },
      { label: "user", value: "Alice's secret" },
    ]);
    // The agent edits the block it sees: its own persona, the shared user block.
    await store.coreAppend({ userId: "alice", agentId: "coder" }, "user", "Uses vim");
    expect((await store.coreBlocks({ userId: "alice" }))[1]?.value).toBe("Alice's secret\nUses vim");
  });
});
