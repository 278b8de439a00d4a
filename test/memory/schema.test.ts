import { describe, expect, it } from "vitest";
import { migrations, schemaVersion } from "../../src/store/migrations.js";
import { newMemoryStore } from "./helpers.js";

describe("memory schema (migration 2)", () => {
  it("adds the memory tables after the sessions migration", () => {
    const { db } = newMemoryStore();
    expect(migrations[1]?.name).toContain("long-term memory");
    expect(schemaVersion(db)).toBe(migrations.length);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all();
    expect(tables).toEqual(
      expect.arrayContaining([
        "memories",
        "memories_fts",
        "core_memory",
        "memory_user_state",
        "messages_fts",
      ]),
    );
  });

  it("keeps per-user counts and versions, and drops FTS rows, whoever writes", async () => {
    const { db, store } = newMemoryStore();
    const a = await store.remember({ userId: "u", text: "first fact about apples", type: "semantic" });
    await store.remember({ userId: "u", text: "second fact about pears", type: "semantic" });
    const state = () => db.prepare("SELECT version, count FROM memory_user_state WHERE user_id = 'u'").get();
    expect(state()).toEqual({ version: 2, count: 2 });
    // A write from outside the store (another tool, a manual fix) still moves the version.
    db.prepare("UPDATE memories SET text = 'edited' WHERE id = ?").run(Number(a.id));
    expect(state()).toEqual({ version: 3, count: 2 });
    db.prepare("DELETE FROM memories WHERE id = ?").run(Number(a.id));
    expect(state()).toEqual({ version: 4, count: 1 });
    expect(db.prepare("SELECT count(*) FROM memories_fts").pluck().get()).toBe(1);
    expect(await store.count("u")).toBe(1);
  });
});
