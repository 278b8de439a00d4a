import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recallTerms } from "../../src/memory/recall-rules.js";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import { openDatabase } from "../../src/store/database.js";
import { migrations } from "../../src/store/migrations.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { newMemoryStore, openDb, tempDir } from "./helpers.js";

async function seed() {
  const { db, store } = newMemoryStore();
  const sessions = new SqliteSessionStore(db);
  const a1 = { userId: "alice", sessionId: "monday" };
  const a2 = { userId: "alice", sessionId: "tuesday" };
  const b1 = { userId: "bob", sessionId: "monday" };
  for (const ref of [a1, a2, b1]) await sessions.openSession(ref);
  await sessions.appendMessages(a1, "r1", [
    { role: "user", content: "My sister's wedding is in Lisbon next June." },
    { role: "assistant", content: [{ type: "text", text: "Congratulations! Lisbon in June is lovely." }] },
  ]);
  await sessions.appendMessages(a2, "r2", [
    { role: "user", content: [{ type: "text", text: "我下个月要去上海出差，帮我订酒店" }] },
    {
      role: "assistant",
      content: [
        { type: "reasoning", text: "hidden reasoning about Lisbon" },
        { type: "text", text: "好的，我来查一下上海的酒店。" },
      ],
    },
    { role: "system", content: "Lisbon system note" },
  ]);
  await sessions.appendMessages(b1, "r3", [
    { role: "user", content: "Bob also talks about Lisbon and 上海." },
  ]);
  return { db, store, sessions };
}

describe("recall search", () => {
  it("finds the user's own messages across sessions, never another user's", async () => {
    const { store } = await seed();
    const hits = await store.recallSearch({ userId: "alice", query: "wedding in Lisbon" });
    expect(hits.map((h) => [h.sessionId, h.role, h.text])).toEqual([
      ["monday", "user", "My sister's wedding is in Lisbon next June."],
      ["monday", "assistant", "Congratulations! Lisbon in June is lovely."],
    ]);
    expect(hits[0]?.score).toBeGreaterThan(hits[1]?.score ?? 1);
    expect((await store.recallSearch({ userId: "bob", query: "wedding" })).map((h) => h.sessionId)).toEqual(
      [],
    );
  });

  it("finds Chinese by two-character words and by longer runs", async () => {
    const { store } = await seed();
    const hits = await store.recallSearch({ userId: "alice", query: "上海" });
    expect(hits.map((h) => h.text)).toEqual([
      "好的，我来查一下上海的酒店。",
      "我下个月要去上海出差，帮我订酒店",
    ]);
    const trip = await store.recallSearch({ userId: "alice", query: "去上海出差" });
    expect(trip[0]?.text).toBe("我下个月要去上海出差，帮我订酒店");
  });

  it("indexes only user and assistant text, and can leave out the live session", async () => {
    const { store } = await seed();
    // "Lisbon" also appears in reasoning and a system message of the tuesday session: not indexed.
    expect((await store.recallSearch({ userId: "alice", query: "Lisbon" })).map((h) => h.sessionId)).toEqual([
      "monday",
      "monday",
    ]);
    expect(
      await store.recallSearch({ userId: "alice", query: "Lisbon", excludeSessionId: "monday" }),
    ).toEqual([]);
  });

  it("follows deleted sessions", async () => {
    const { db, store } = await seed();
    db.prepare("DELETE FROM sessions WHERE user_id = 'alice' AND session_key = 'monday'").run();
    expect(await store.recallSearch({ userId: "alice", query: "Lisbon" })).toEqual([]);
    expect(db.prepare("SELECT count(*) FROM messages_fts").pluck().get()).toBe(3);
  });

  it("splits queries into trigram phrases and short substrings", () => {
    expect(recallTerms("the wedding in Lisbon")).toEqual({ phrases: ["wedding", "lisbon"], substrings: [] });
    expect(recallTerms("去上海")).toEqual({ phrases: ["去上海"], substrings: ["去上", "上海"] });
    expect(recallTerms("猫")).toEqual({ phrases: [], substrings: ["猫"] });
    expect(recallTerms("my go")).toEqual({ phrases: [], substrings: ["go"] });
  });

  it("indexes messages written before the memory migration", async () => {
    const file = join(tempDir(), "dimsum.db");
    const old = openDatabase(file, { migrations: migrations.slice(0, 1) });
    // Written as that schema's rows (today's session store needs today's schema).
    old
      .prepare("INSERT INTO sessions (user_id, session_key, created_at, updated_at) VALUES ('u', 's', 1, 1)")
      .run();
    old
      .prepare(
        `INSERT INTO messages (session_id, seq, role, content_json, created_at)
         VALUES ((SELECT id FROM sessions WHERE user_id = 'u'), 1, 'user', ?, 1)`,
      )
      .run(JSON.stringify("remember the blue umbrella"));
    old.close();
    const store = new SqliteMemoryStore(openDb(file));
    expect((await store.recallSearch({ userId: "u", query: "umbrella" })).map((h) => h.text)).toEqual([
      "remember the blue umbrella",
    ]);
  });
});
