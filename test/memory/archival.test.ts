import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DimsumError } from "../../src/errors.js";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import { cosine } from "../../src/memory/vectors/quantized-index.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";
import { hashEmbedder, newMemoryStore, openDb, tempDir } from "./helpers.js";

const DAY = 86_400_000;

async function ids(store: SqliteMemoryStore, userId: string, query: string, extra = {}) {
  const result = await store.search({ userId, query, ...extra });
  return result.hits.map((h) => h.memory.text);
}

describe("archival memory: write and read", () => {
  it("stores a memory with cleaned fields and reads it back", async () => {
    const { store } = newMemoryStore({ now: () => 1_000 });
    const result = await store.remember({
      userId: "alice",
      text: "  Alice is allergic to peanuts  ",
      type: "semantic",
      tags: ["Health", "health", " food allergy "],
      importance: 14,
      confidence: 0.7,
      sourceSessionId: "s1",
      sourceRunId: "r1",
    });
    expect(result).toMatchObject({ merged: false, evicted: [] });
    expect(result.memory).toEqual({
      id: result.id,
      userId: "alice",
      type: "semantic",
      text: "Alice is allergic to peanuts",
      tags: ["health", "food-allergy"],
      importance: 10,
      confidence: 0.7,
      sourceSessionId: "s1",
      sourceRunId: "r1",
      accessCount: 0,
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    expect(await store.get("alice", result.id)).toEqual(result.memory);
    expect(await store.list("alice")).toEqual([result.memory]);
    expect(await store.count("alice")).toBe(1);
    expect(await store.forget("alice", result.id)).toBe(true);
    expect(await store.search({ userId: "alice", query: "peanuts" })).toEqual({ mode: "bm25", hits: [] });
    expect(await store.count("alice")).toBe(0);
  });

  it("rejects empty or oversized text, unknown types and a missing user with errors naming the fix", async () => {
    const { store } = newMemoryStore();
    const err = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        return e as DimsumError;
      }
      throw new Error("expected a rejection");
    };
    expect((await err(store.remember({ userId: "a", text: "  ", type: "semantic" }))).code).toBe("tool_args");
    const long = await err(store.remember({ userId: "a", text: "x".repeat(2001), type: "semantic" }));
    expect(long.message).toContain("at most 2000 characters; this one has 2001");
    const badType = await err(store.remember({ userId: "a", text: "x", type: "opinion" as "semantic" }));
    expect(badType.hint).toContain("semantic, episodic, procedural");
    const noUser = await err(store.remember({ userId: "", text: "x", type: "semantic" }));
    expect(noUser).toBeInstanceOf(DimsumError);
    expect(noUser.code).toBe("config");
  });
});

describe("retrieval modes", () => {
  it("without an embedder searches with BM25 only and says so", async () => {
    const { store } = newMemoryStore();
    expect(store.status()).toEqual({ mode: "bm25" });
    await store.remember({ userId: "u", text: "The user prefers dark roast coffee", type: "semantic" });
    await store.remember({ userId: "u", text: "The user plays tennis on Sundays", type: "episodic" });
    const result = await store.search({ userId: "u", query: "which coffee does the user prefer?" });
    expect(result.mode).toBe("bm25");
    expect(result.hits.map((h) => h.memory.text)).toEqual([
      "The user prefers dark roast coffee",
      "The user plays tennis on Sundays",
    ]);
    expect(result.hits[0]).toMatchObject({ bm25Rank: 1 });
    expect(result.hits[0]?.vectorRank).toBeUndefined();
    // A misspelling shares no word with the memory: BM25 alone cannot find it.
    expect((await store.search({ userId: "u", query: "cofee" })).hits).toEqual([]);
  });

  it("with an embedder fuses BM25 and vector ranks", async () => {
    const embedder = hashEmbedder();
    const { store } = newMemoryStore({ embedder });
    expect(store.status()).toEqual({ mode: "hybrid", embeddingModel: "test:hash-128" });
    await store.remember({ userId: "u", text: "The user prefers dark roast coffee", type: "semantic" });
    await store.remember({ userId: "u", text: "The user plays tennis on Sundays", type: "episodic" });
    const typo = await store.search({ userId: "u", query: "cofee", minSimilarity: 0.1 });
    expect(typo.mode).toBe("hybrid");
    expect(typo.hits.map((h) => h.memory.text)).toEqual(["The user prefers dark roast coffee"]);
    expect(typo.hits[0]).toMatchObject({ vectorRank: 1 });
    expect(typo.hits[0]?.bm25Rank).toBeUndefined();
    expect(typo.hits[0]?.similarity).toBeGreaterThan(0.1);

    const both = await store.search({ userId: "u", query: "dark roast coffee" });
    expect(both.hits[0]).toMatchObject({ bm25Rank: 1, vectorRank: 1 });
    expect(both.hits[0]?.score).toBeCloseTo((2 / 61) * (0.7 + 0.1 + 0.15 * 0.5), 6);
  });

  it("falls back to BM25 with a warning when the embedder fails, and still stores", async () => {
    const embedder = hashEmbedder();
    const { store, warnings } = newMemoryStore({ embedder });
    embedder.fail = true;
    const written = await store.remember({ userId: "u", text: "The user owns a grey cat", type: "semantic" });
    expect(written.warning).toContain("embedding service down");
    expect(written.memory.embeddingModel).toBeUndefined();
    const result = await store.search({ userId: "u", query: "cat" });
    expect(result.mode).toBe("bm25");
    expect(result.warning).toContain("BM25 alone");
    expect(result.hits.map((h) => h.memory.text)).toEqual(["The user owns a grey cat"]);
    expect(warnings).toHaveLength(2);
  });
});

describe("merging near-duplicates", () => {
  it("merges by cosine with vectors: newer text, union of tags, highest importance", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder(), now: () => 5_000 });
    const first = await store.remember({
      userId: "u",
      text: "The user prefers dark roast coffee",
      type: "semantic",
      tags: ["coffee"],
      importance: 4,
    });
    const second = await store.remember({
      userId: "u",
      text: "The user prefers dark roast coffee!!",
      type: "semantic",
      tags: ["drinks"],
      importance: 7,
    });
    expect(second).toMatchObject({ id: first.id, merged: true });
    expect(second.similarity).toBeGreaterThanOrEqual(0.85);
    expect(second.memory).toMatchObject({
      text: "The user prefers dark roast coffee!!",
      tags: ["coffee", "drinks"],
      importance: 7,
    });
    expect(await store.count("u")).toBe(1);
  });

  it("uses the configured cosine threshold", async () => {
    const a = "The user prefers dark roast coffee every morning";
    const b = "The user prefers darker roasted coffees most mornings";
    // Related but not a near-duplicate: cosine about 0.62, term Jaccard 0.625.
    const similarity = cosine(hashEmbedding(a, 128), hashEmbedding(b, 128));
    expect(similarity).toBeGreaterThan(0.6);
    expect(similarity).toBeLessThan(0.85);
    const strict = newMemoryStore({ embedder: hashEmbedder() }).store;
    await strict.remember({ userId: "u", text: a, type: "semantic" });
    expect((await strict.remember({ userId: "u", text: b, type: "semantic" })).merged).toBe(false);
    expect(await strict.count("u")).toBe(2);
    const loose = newMemoryStore({ embedder: hashEmbedder(), mergeThreshold: 0.6 }).store;
    await loose.remember({ userId: "u", text: a, type: "semantic" });
    const merged = await loose.remember({ userId: "u", text: b, type: "semantic" });
    expect(merged.merged).toBe(true);
    expect(merged.similarity).toBeCloseTo(similarity, 5);
  });

  it("merges near-duplicate text without vectors (term Jaccard ≥ 0.8), not merely related text", async () => {
    const { store } = newMemoryStore();
    const first = await store.remember({
      userId: "u",
      text: "User likes hiking in the Alps on weekends",
      type: "semantic",
    });
    const dup = await store.remember({
      userId: "u",
      text: "The user likes hiking in the Alps at weekends.",
      type: "semantic",
    });
    expect(dup).toMatchObject({ id: first.id, merged: true, similarity: 1 });
    const other = await store.remember({
      userId: "u",
      text: "User likes skiing in the Alps in winter",
      type: "semantic",
    });
    expect(other.merged).toBe(false);
    expect(await store.count("u")).toBe(2);
  });

  it("keeps the older text when the newer one is a shorter restatement of it", async () => {
    const { store } = newMemoryStore();
    await store.remember({
      userId: "u",
      text: "User prefers answers in Chinese with code comments in English",
      type: "procedural",
    });
    const merged = await store.remember({
      userId: "u",
      text: "User prefers answers in Chinese, code comments English",
      type: "procedural",
    });
    expect(merged.merged).toBe(true);
    expect(merged.memory.text).toBe("User prefers answers in Chinese with code comments in English");
  });

  it("never merges across agents or users", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder() });
    const text = "The user prefers tabs over spaces";
    const shared = await store.remember({ userId: "u", text, type: "procedural" });
    const agent = await store.remember({ userId: "u", agentId: "coder", text, type: "procedural" });
    const other = await store.remember({ userId: "v", text, type: "procedural" });
    expect([shared.merged, agent.merged, other.merged]).toEqual([false, false, false]);
    expect(new Set([shared.id, agent.id, other.id]).size).toBe(3);
  });
});

describe("eviction", () => {
  it("drops the lowest recency 30% + importance 40% + access 30% first, never the new one", async () => {
    let clock = 100 * DAY;
    const { store } = newMemoryStore({ maxMemoriesPerUser: 3, now: () => clock });
    await store.setCoreBlock({ userId: "u" }, "user", "Name: Ada");
    clock = 10 * DAY;
    const important = await store.remember({
      userId: "u",
      text: "old but important fact",
      type: "semantic",
      importance: 9,
    });
    const used = await store.remember({
      userId: "u",
      text: "old but often used fact",
      type: "semantic",
      importance: 2,
    });
    clock = 100 * DAY;
    for (let i = 0; i < 40; i++) await store.touch("u", [used.id]);
    const trivial = await store.remember({
      userId: "u",
      text: "fresh trivial fact",
      type: "semantic",
      importance: 2,
    });
    // Scores now: important 0.3·0.125+0.36 = 0.40; used 0.3+0.08+0.3 = 0.68; trivial 0.3+0.08 = 0.38.
    const fourth = await store.remember({
      userId: "u",
      text: "another fact of moderate weight",
      type: "semantic",
    });
    expect(fourth.evicted).toEqual([trivial.id]);
    const fifth = await store.remember({ userId: "u", text: "yet another unrelated item", type: "episodic" });
    expect(fifth.evicted).toEqual([important.id]);
    expect((await store.list("u")).map((m) => m.id).sort()).toEqual([used.id, fourth.id, fifth.id].sort());
    expect(await store.count("u")).toBe(3);
    expect(await store.coreBlocks({ userId: "u" })).toMatchObject([{ label: "user", value: "Name: Ada" }]);
    // Evicted memories are gone from the index as well.
    expect((await store.search({ userId: "u", query: "trivial" })).hits).toEqual([]);
  });
});

describe("isolation and scope", () => {
  it("never shows one user's memories to another", async () => {
    const { store } = newMemoryStore({ embedder: hashEmbedder() });
    const a = await store.remember({
      userId: "alice",
      text: "Alice's bank PIN hint is her cat's name",
      type: "semantic",
    });
    await store.remember({ userId: "bob", text: "Bob likes jazz", type: "semantic" });
    expect(await ids(store, "bob", "bank PIN cat name", { minSimilarity: 0 })).toEqual(["Bob likes jazz"]);
    expect(await ids(store, "bob", "Alice")).not.toContain(a.memory.text);
    expect(await store.get("bob", a.id)).toBeUndefined();
    expect(await store.forget("bob", a.id)).toBe(false);
    expect(await store.list("bob")).toHaveLength(1);
    expect(await store.count("alice")).toBe(1);
  });

  it("scopes by agent (shared plus the agent's own) and filters by type", async () => {
    const { store } = newMemoryStore();
    await store.remember({ userId: "u", text: "shared note about python", type: "semantic" });
    await store.remember({
      userId: "u",
      agentId: "coder",
      text: "coder note about python",
      type: "procedural",
    });
    await store.remember({
      userId: "u",
      agentId: "writer",
      text: "writer note about python",
      type: "semantic",
    });
    const sorted = async (extra: object) => (await ids(store, "u", "python note", extra)).sort();
    expect(await sorted({ agentId: "coder" })).toEqual([
      "coder note about python",
      "shared note about python",
    ]);
    expect(await sorted({})).toHaveLength(3);
    expect(await sorted({ type: "procedural" })).toEqual(["coder note about python"]);
    expect((await store.list("u", { agentId: "writer" })).map((m) => m.text).sort()).toEqual([
      "shared note about python",
      "writer note about python",
    ]);
  });
});

describe("CJK search", () => {
  it("finds Chinese memories by two-character words and longer phrases, with BM25 alone", async () => {
    const { store } = newMemoryStore();
    await store.remember({ userId: "u", text: "我每天早上喝咖啡", type: "semantic" });
    await store.remember({ userId: "u", text: "用户喜欢喝绿茶，不喜欢咖啡因太多的饮料", type: "semantic" });
    await store.remember({ userId: "u", text: "用户住在上海，周末去爬山", type: "semantic" });
    expect(await ids(store, "u", "咖啡")).toEqual(expect.arrayContaining(["我每天早上喝咖啡"]));
    expect(await ids(store, "u", "上海")).toEqual(["用户住在上海，周末去爬山"]);
    expect((await ids(store, "u", "喜欢喝茶"))[0]).toBe("用户喜欢喝绿茶，不喜欢咖啡因太多的饮料");
    expect(await ids(store, "u", "他周末做什么？")).toEqual(["用户住在上海，周末去爬山"]);
    expect(await ids(store, "u", "北京")).toEqual([]);
  });

  it("finds Japanese memories (kanji and katakana) and mixed-script text", async () => {
    const { store } = newMemoryStore();
    await store.remember({ userId: "u", text: "ユーザーは東京に住んでいます", type: "semantic" });
    await store.remember({ userId: "u", text: "ラーメンが大好きです", type: "semantic" });
    await store.remember({ userId: "u", text: "Python编程是他的工作", type: "semantic" });
    expect(await ids(store, "u", "東京")).toEqual(["ユーザーは東京に住んでいます"]);
    expect(await ids(store, "u", "ラーメン")).toEqual(["ラーメンが大好きです"]);
    expect(await ids(store, "u", "python")).toEqual(["Python编程是他的工作"]);
    expect(await ids(store, "u", "编程")).toEqual(["Python编程是他的工作"]);
  });
});

describe("the vector cache", () => {
  it("sees writes made through another connection to the same file", async () => {
    const file = join(tempDir(), "dimsum.db");
    const first = new SqliteMemoryStore(openDb(file), { embedder: hashEmbedder() });
    const second = new SqliteMemoryStore(openDb(file), { embedder: hashEmbedder() });
    await first.remember({ userId: "u", text: "The user collects vintage stamps", type: "semantic" });
    expect((await first.search({ userId: "u", query: "stamps" })).hits).toHaveLength(1);
    const added = await second.remember({
      userId: "u",
      text: "The user repairs old bicycles",
      type: "semantic",
    });
    const found = await first.search({ userId: "u", query: "old bicycles" });
    expect(found.hits[0]).toMatchObject({ memory: { id: added.id }, bm25Rank: 1, vectorRank: 1 });
    await second.forget("u", added.id);
    expect((await first.search({ userId: "u", query: "old bicycles", minSimilarity: 0.3 })).hits).toEqual([]);
  });
});

describe("batches", () => {
  it("store all or nothing, and leave no trace of a rolled-back batch in search", async () => {
    const { db, store } = newMemoryStore({ embedder: hashEmbedder() });
    await store.remember({ userId: "u", text: "The user keeps bees", type: "semantic" });
    expect((await store.search({ userId: "u", query: "bees" })).hits).toHaveLength(1);
    db.exec(
      "CREATE TEMP TRIGGER refuse BEFORE INSERT ON memories WHEN new.text = 'boom' BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    await expect(
      store.rememberMany([
        { userId: "u", text: "The user grows tomatoes", type: "semantic" },
        { userId: "u", text: "boom", type: "semantic" },
      ]),
    ).rejects.toThrow(/refused/);
    expect(await store.count("u")).toBe(1);
    const after = await store.search({ userId: "u", query: "tomatoes", minSimilarity: 0 });
    expect(after.hits.map((h) => h.memory.text)).toEqual(["The user keeps bees"]);
  });
});
