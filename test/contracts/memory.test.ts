/**
 * The memory repository contract: the same cases on SQLite and on PostgreSQL, plus a check that both
 * rank a mixed English, Chinese and Japanese collection identically (same order, same BM25 scores).
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PgBm25 } from "../../src/memory/postgres/bm25.js";
import { PostgresMemoryStore } from "../../src/memory/postgres-memory-store.js";
import { Bm25Index } from "../../src/memory/sqlite/bm25.js";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import type { MemoryStoreOptions } from "../../src/memory/store-front.js";
import type { Embedder, MemoryStore } from "../../src/memory/types.js";
import { openDatabase } from "../../src/store/database.js";
import { pgMigrations } from "../../src/store/postgres/migrations/index.js";
import { openPostgres } from "../../src/store/postgres/pg-database.js";
import { SqliteSessionStore } from "../../src/store/sqlite-session-store.js";
import { queryTerms } from "../../src/store/text/terms.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";
import { createTestDatabase, openTestPostgres, postgresAvailable } from "../support/postgres.js";
import { type Backend, describeBackends } from "./backends.js";

const DAY = 86_400_000;

function storeOn(backend: Backend, options: MemoryStoreOptions = {}): MemoryStore {
  const all = { warn: () => {}, ...options };
  return backend.kind === "sqlite"
    ? new SqliteMemoryStore(backend.db, all)
    : new PostgresMemoryStore(backend.db, all);
}

function hashEmbedder(dims = 128): Embedder {
  return { model: `test:hash-${dims}`, embed: async (texts) => texts.map((t) => hashEmbedding(t, dims)) };
}

type Content = string | Array<{ type: string; text: string }>;

/** Writes sessions and their messages the way each backend's session store does. */
async function seedMessages(
  backend: Backend,
  sessions: Array<{ userId: string; sessionId: string; messages: Array<{ role: string; content: Content }> }>,
): Promise<void> {
  if (backend.kind === "sqlite") {
    const store = new SqliteSessionStore(backend.db);
    for (const s of sessions) {
      const ref = { userId: s.userId, sessionId: s.sessionId };
      await store.openSession(ref);
      await store.appendMessages(ref, "r", s.messages as never);
    }
    return;
  }
  let at = 1;
  for (const s of sessions) {
    const row = await backend.db.one<{ id: number }>(
      "INSERT INTO sessions (user_id, session_key, created_at, updated_at) VALUES ($1, $2, 1, 1) RETURNING id",
      [s.userId, s.sessionId],
    );
    let seq = 0;
    for (const m of s.messages) {
      await backend.db.run(
        "INSERT INTO messages (session_id, seq, role, content_json, created_at) VALUES ($1, $2, $3, $4, $5)",
        [row!.id, seq++, m.role, JSON.stringify(m.content), at++],
      );
    }
  }
}

const OOLONG = "用户喜欢喝乌龙茶，不喝咖啡";
const CJK_OTHERS = [
  "用户住在上海浦东，平时坐地铁上班",
  "用户的女儿叫小美，今年六岁",
  "用户每天早上六点起床跑步",
  "用户家楼下有一家咖喱店",
];

describeBackends("memory store", (open) => {
  it("stores, reads, lists, counts, touches and forgets", async () => {
    const backend = await open();
    let now = 1_000;
    const store = storeOn(backend, { now: () => now });
    const a = await store.remember({
      userId: "alice",
      text: "  Alice is allergic to peanuts  ",
      type: "semantic",
      tags: ["Health", "health"],
      importance: 14,
      confidence: 0.7,
      sourceSessionId: "s1",
    });
    expect(a).toMatchObject({ merged: false, evicted: [] });
    expect(a.memory).toEqual({
      id: a.id,
      userId: "alice",
      type: "semantic",
      text: "Alice is allergic to peanuts",
      tags: ["health"],
      importance: 10,
      confidence: 0.7,
      sourceSessionId: "s1",
      accessCount: 0,
      createdAt: 1_000,
      updatedAt: 1_000,
    });
    now = 2_000;
    const b = await store.remember({
      userId: "alice",
      agentId: "coach",
      text: "Runs 5k on Mondays",
      type: "episodic",
    });
    await store.remember({ userId: "bob", text: "Bob likes chess", type: "semantic" });
    expect(await store.get("alice", a.id)).toEqual(a.memory);
    expect(await store.get("bob", a.id)).toBeUndefined();
    expect(await store.get("alice", "nope")).toBeUndefined();
    expect(await store.get("alice", "999999")).toBeUndefined();
    expect((await store.list("alice")).map((m) => m.id)).toEqual([b.id, a.id]);
    expect((await store.list("alice", { limit: 1, offset: 1 })).map((m) => m.id)).toEqual([a.id]);
    expect((await store.list("alice", { type: "episodic" })).map((m) => m.id)).toEqual([b.id]);
    expect((await store.list("alice", { agentId: "other" })).map((m) => m.id)).toEqual([a.id]);
    expect((await store.list("alice", { agentId: "coach" })).map((m) => m.id)).toEqual([b.id, a.id]);
    expect(await store.count("alice")).toBe(2);
    expect(await store.count("nobody")).toBe(0);

    now = 3_000;
    await store.touch("alice", [a.id, a.id, "junk", b.id]);
    expect(await store.get("alice", a.id)).toMatchObject({ accessCount: 2, lastAccessedAt: 3_000 });
    expect(await store.get("alice", b.id)).toMatchObject({ accessCount: 1 });
    await store.touch("bob", [a.id]);
    expect(await store.get("alice", a.id)).toMatchObject({ accessCount: 2 });

    expect(await store.forget("bob", a.id)).toBe(false);
    expect(await store.forget("alice", a.id)).toBe(true);
    expect(await store.forget("alice", a.id)).toBe(false);
    expect(await store.count("alice")).toBe(1);
    expect((await store.search({ userId: "alice", query: "peanuts" })).hits).toEqual([]);
  });

  it("merges exact and near duplicates in the same scope, never across agents or users", async () => {
    const backend = await open();
    const store = storeOn(backend);
    const first = await store.remember({
      userId: "u",
      text: "The user prefers dark roast coffee in the morning",
      type: "semantic",
      tags: ["coffee"],
      importance: 4,
    });
    const again = await store.remember({
      userId: "u",
      text: "the user prefers DARK roast coffee in the morning!",
      type: "semantic",
      tags: ["drinks"],
      importance: 7,
    });
    expect(again).toMatchObject({ id: first.id, merged: true, similarity: 1 });
    expect(again.memory).toMatchObject({ importance: 7, tags: ["coffee", "drinks"] });
    expect(again.memory.text).toBe("the user prefers DARK roast coffee in the morning!");
    // A longer text with one more word still counts as the same memory (Jaccard 0.8+).
    const longer = await store.remember({
      userId: "u",
      text: "The user prefers dark roast coffee in the early morning",
      type: "semantic",
    });
    expect(longer.merged).toBe(true);
    expect(longer.id).toBe(first.id);
    expect((await store.search({ userId: "u", query: "early" })).hits.map((h) => h.memory.id)).toEqual([
      first.id,
    ]);
    const otherAgent = await store.remember({
      userId: "u",
      agentId: "a1",
      text: "The user prefers dark roast coffee in the early morning",
      type: "semantic",
    });
    expect(otherAgent.merged).toBe(false);
    const otherUser = await store.remember({
      userId: "v",
      text: "The user prefers dark roast coffee in the early morning",
      type: "semantic",
    });
    expect(otherUser.merged).toBe(false);
    const distinct = await store.remember({
      userId: "u",
      text: "The user owns a grey cat",
      type: "semantic",
    });
    expect(distinct.merged).toBe(false);
    // A bulk import skips the duplicate check.
    const [bulk] = await store.rememberMany(
      [{ userId: "u", text: "The user owns a grey cat", type: "semantic" }],
      { merge: false },
    );
    expect(bulk?.merged).toBe(false);
    expect(await store.count("u")).toBe(4);
    expect(await store.count("v")).toBe(1);
  });

  it("merges by vector similarity and finds by vectors what BM25 cannot", async () => {
    const backend = await open();
    const store = storeOn(backend, { embedder: hashEmbedder() });
    expect(store.status()).toEqual({ mode: "hybrid", embeddingModel: "test:hash-128" });
    const coffee = await store.remember({
      userId: "u",
      text: "The user prefers dark roast coffee",
      type: "semantic",
    });
    await store.remember({ userId: "u", text: "The user plays tennis on Sundays", type: "episodic" });
    expect(coffee.memory).toMatchObject({ embeddingModel: "test:hash-128", embeddingDims: 128 });
    const typo = await store.search({ userId: "u", query: "cofee", minSimilarity: 0.1 });
    expect(typo.mode).toBe("hybrid");
    expect(typo.hits.map((h) => h.memory.text)).toEqual(["The user prefers dark roast coffee"]);
    expect(typo.hits[0]).toMatchObject({ vectorRank: 1 });
    expect(typo.hits[0]?.bm25Rank).toBeUndefined();
    const both = await store.search({ userId: "u", query: "dark roast coffee" });
    expect(both.hits[0]).toMatchObject({ bm25Rank: 1, vectorRank: 1 });
    // Type and agent filters apply to both lists.
    const tennis = await store.search({ userId: "u", query: "dark roast coffee", type: "episodic" });
    expect(tennis.hits.map((h) => h.memory.type)).toEqual(["episodic"]);
    // The cached index follows writes and deletes made through the store.
    const cat = await store.remember({
      userId: "u",
      text: "The user owns a grey cat named Miso",
      type: "semantic",
    });
    expect((await store.search({ userId: "u", query: "grey kitty Miso" })).hits[0]?.memory.id).toBe(cat.id);
    await store.forget("u", cat.id);
    const after = await store.search({ userId: "u", query: "grey kitty Miso", minSimilarity: 0 });
    expect(after.hits.map((h) => h.memory.id)).not.toContain(cat.id);
  });

  it("ranks by BM25, weighted by importance, and keeps agents and users apart", async () => {
    const backend = await open();
    const store = storeOn(backend);
    const tea = await store.remember({
      userId: "u",
      text: "The user drinks green tea every afternoon",
      type: "semantic",
    });
    const both = await store.remember({
      userId: "u",
      text: "Green tea and green smoothies: the user likes green drinks",
      type: "semantic",
    });
    await store.remember({ userId: "u", text: "The user walks the dog at noon", type: "episodic" });
    const own = await store.remember({
      userId: "u",
      agentId: "chef",
      text: "Cook with green tea leaves",
      type: "procedural",
    });
    await store.remember({ userId: "w", text: "green tea green tea green tea", type: "semantic" });
    const result = await store.search({ userId: "u", query: "green tea" });
    expect(result.mode).toBe("bm25");
    // The agent's short memory outranks the longer shared one (BM25 length normalisation).
    expect(result.hits.map((h) => h.memory.id)).toEqual([both.id, own.id, tea.id]);
    expect(result.hits.map((h) => h.bm25Rank)).toEqual([1, 2, 3]);
    const chef = await store.search({ userId: "u", agentId: "chef", query: "leaves" });
    expect(chef.hits.map((h) => h.memory.id)).toEqual([own.id]);
    expect((await store.search({ userId: "u", agentId: "waiter", query: "leaves" })).hits).toEqual([]);
    expect(
      (await store.search({ userId: "u", query: "green", type: "procedural" })).hits.map((h) => h.memory.id),
    ).toEqual([own.id]);
    expect((await store.search({ userId: "u", query: "   " })).hits).toEqual([]);
    expect((await store.search({ userId: "nobody", query: "green" })).hits).toEqual([]);
  });

  it("finds a Chinese memory from a natural question, and Japanese through kanji", async () => {
    const backend = await open();
    const store = storeOn(backend);
    const oolong = await store.remember({ userId: "C", text: OOLONG, type: "semantic" });
    for (const text of CJK_OTHERS) await store.remember({ userId: "C", text, type: "semantic" });
    const tea = await store.search({ userId: "C", query: "我应该喝什么茶？" });
    expect(tea.hits.map((h) => h.memory.id)).toEqual([oolong.id]);
    const coffee = await store.search({ userId: "C", query: "咖啡" });
    expect(coffee.hits[0]?.memory.id).toBe(oolong.id);
    expect(coffee.hits.map((h) => h.memory.text)).not.toContain("用户家楼下有一家咖喱店");
    expect((await store.search({ userId: "C", query: "今天股市怎么样？" })).hits).toEqual([]);
    const green = await store.remember({
      userId: "J",
      text: "ユーザーは緑茶が好きで、コーヒーは飲まない",
      type: "semantic",
    });
    await store.remember({ userId: "J", text: "ユーザーは夜十二時前に寝るようにしている", type: "semantic" });
    expect(
      (await store.search({ userId: "J", query: "私は何のお茶を飲めばいい？" })).hits[0]?.memory.id,
    ).toBe(green.id);
  });

  it("updates text, type, tags and importance, re-indexing a new text", async () => {
    const backend = await open();
    let now = 10;
    const store = storeOn(backend, { now: () => now, embedder: hashEmbedder() });
    const m = await store.remember({ userId: "u", text: "The user lives in Berlin", type: "semantic" });
    now = 20;
    const edited = await store.update("u", m.id, {
      text: "The user lives in Munich",
      tags: ["Home"],
      importance: 9,
    });
    expect(edited).toMatchObject({
      id: m.id,
      text: "The user lives in Munich",
      tags: ["home"],
      importance: 9,
      updatedAt: 20,
      embeddingModel: "test:hash-128",
    });
    expect((await store.search({ userId: "u", query: "Berlin", minSimilarity: 0.99 })).hits).toEqual([]);
    expect((await store.search({ userId: "u", query: "Munich" })).hits[0]).toMatchObject({ bm25Rank: 1 });
    const retyped = await store.update("u", m.id, { type: "episodic" });
    expect(retyped).toMatchObject({ type: "episodic", text: "The user lives in Munich" });
    expect((await store.search({ userId: "u", query: "Munich", type: "episodic" })).hits).toHaveLength(1);
    expect(await store.update("u", "12345", { text: "x" })).toBeUndefined();
    expect(await store.update("other", m.id, { text: "x" })).toBeUndefined();
  });

  it("evicts the least important, least used memories above the per-user cap", async () => {
    const backend = await open();
    let now = 100 * DAY;
    const store = storeOn(backend, { now: () => now, maxMemoriesPerUser: 3 });
    const keep = await store.remember({
      userId: "u",
      text: "Critical: the user is diabetic",
      type: "semantic",
      importance: 10,
    });
    now += DAY;
    const trivia = await store.remember({
      userId: "u",
      text: "The user once saw a red kite",
      type: "episodic",
      importance: 1,
    });
    now += DAY;
    const mid = await store.remember({
      userId: "u",
      text: "The user likes jazz",
      type: "semantic",
      importance: 5,
    });
    now += DAY;
    const next = await store.remember({
      userId: "u",
      text: "The user has two sisters",
      type: "semantic",
      importance: 2,
    });
    expect(next.evicted).toEqual([trivia.id]);
    expect(await store.count("u")).toBe(3);
    expect(await store.get("u", trivia.id)).toBeUndefined();
    expect((await store.search({ userId: "u", query: "kite" })).hits).toEqual([]);
    // A bulk import over the cap evicts too.
    const bulk = await store.rememberMany(
      [
        { userId: "u", text: "The user has a bicycle", type: "semantic", importance: 3 },
        { userId: "u", text: "The user reads sci-fi", type: "semantic", importance: 6 },
      ],
      { merge: false },
    );
    // The bicycle (importance 3) goes when the sci-fi memory arrives: jazz (5) is worth more.
    expect(bulk.map((r) => r.evicted)).toEqual([[next.id], [bulk[0]!.id]]);
    expect(await store.count("u")).toBe(3);
    expect((await store.list("u")).map((m) => m.id)).toEqual([bulk[1]!.id, mid.id, keep.id]);
  });

  it("imports many memories in one call, each searchable", async () => {
    const backend = await open();
    const store = storeOn(backend, { embedder: hashEmbedder(64) });
    const inputs = Array.from({ length: 120 }, (_, i) => ({
      userId: i % 2 === 0 ? "even" : "odd",
      text: `Memory number ${i} mentions topic${i} and the shared word bulk`,
      type: "semantic" as const,
    }));
    const results = await store.rememberMany(inputs, { merge: false });
    expect(results.map((r) => r.memory.text)).toEqual(inputs.map((i) => i.text));
    expect(new Set(results.map((r) => r.id)).size).toBe(120);
    expect(await store.count("even")).toBe(60);
    expect(await store.count("odd")).toBe(60);
    const hit = await store.search({ userId: "odd", query: "topic37" });
    expect(hit.hits[0]?.memory.text).toBe(inputs[37]!.text);
    expect((await store.search({ userId: "even", query: "topic37" })).hits[0]?.bm25Rank).toBeUndefined();
  });

  it("keeps core memory blocks with limits, agent overrides and deletion", async () => {
    const backend = await open();
    const store = storeOn(backend, { now: () => 42, coreLimit: 40 });
    const scope = { userId: "u" };
    expect(await store.coreBlocks(scope)).toEqual([]);
    expect(await store.coreAppend(scope, "User", "Name: Ada")).toEqual({
      ok: true,
      block: { label: "user", value: "Name: Ada", limit: 40, updatedAt: 42 },
    });
    await store.coreAppend(scope, "user", "Metric units");
    await store.coreAppend(scope, "persona", "Be brief.");
    expect(await store.coreBlocks(scope)).toEqual([
      { label: "persona", value: "Be brief.", limit: 40, updatedAt: 42 },
      { label: "user", value: "Name: Ada\nMetric units", limit: 40, updatedAt: 42 },
    ]);
    const refused = await store.coreAppend(scope, "user", "this line is much too long to fit in");
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.reason).toContain("over its limit of 40");
    expect(await store.coreReplace(scope, "user", "Ada", "Grace")).toMatchObject({
      ok: true,
      block: { value: "Name: Grace\nMetric units" },
    });
    expect(await store.coreReplace(scope, "user", "Paris", "Rome")).toMatchObject({ ok: false });
    expect(await store.setCoreBlock(scope, "notes", "x".repeat(60), { limit: 100 })).toMatchObject({
      ok: true,
      block: { limit: 100 },
    });
    expect(await store.coreAppend(scope, "../etc", "x")).toMatchObject({ ok: false });
    // An agent's own block replaces the shared one of the same label for that agent; an agent
    // editing a label only the user has edits the shared block.
    const agent = { userId: "u", agentId: "coach" };
    await store.setCoreBlock(agent, "style", "Be encouraging.");
    await store.setCoreBlock(scope, "style", "Be neutral.");
    expect((await store.coreBlocks(agent)).find((b) => b.label === "style")).toMatchObject({
      value: "Be encouraging.",
      agentId: "coach",
    });
    expect((await store.coreBlocks(scope)).find((b) => b.label === "style")?.value).toBe("Be neutral.");
    await store.coreAppend(agent, "persona", "Use emoji.");
    expect((await store.coreBlocks(scope)).find((b) => b.label === "persona")?.value).toBe(
      "Be brief.\nUse emoji.",
    );
    expect((await store.allCoreBlocks("u")).map((b) => [b.label, b.agentId ?? ""])).toEqual([
      ["notes", ""],
      ["persona", ""],
      ["style", ""],
      ["style", "coach"],
      ["user", ""],
    ]);
    expect(await store.deleteCoreBlock(agent, "style")).toBe(true);
    expect(await store.deleteCoreBlock(agent, "style")).toBe(false);
    expect(await store.deleteCoreBlock(scope, "Notes")).toBe(true);
    expect((await store.allCoreBlocks("u")).map((b) => b.label)).toEqual(["persona", "style", "user"]);
    expect(await store.allCoreBlocks("other")).toEqual([]);
  });

  it("appends concurrently to one core block without losing a line", async () => {
    const backend = await open();
    const store = storeOn(backend);
    const scope = { userId: "u" };
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i}`);
    const results = await Promise.all(lines.map((line) => store.coreAppend(scope, "user", line)));
    expect(results.every((r) => r.ok)).toBe(true);
    const value = (await store.coreBlocks(scope))[0]?.value.split("\n") ?? [];
    expect(value.sort()).toEqual(lines);
  });

  it("sees the writes of another instance on the same database (vector caches follow the version)", async () => {
    const backend = await open();
    const second: Backend =
      backend.kind === "sqlite" ? { ...backend, db: openDatabase(backend.file) } : backend;
    try {
      const a = storeOn(backend, { embedder: hashEmbedder() });
      const b = storeOn(second, { embedder: hashEmbedder() });
      await a.remember({ userId: "u", text: "The user prefers dark roast coffee", type: "semantic" });
      // Shares no word with the memory: only the vector index can find it.
      const typo = { userId: "u", query: "Missoo", minSimilarity: 0.1 };
      expect((await a.search(typo)).hits).toEqual([]);
      const cat = await b.remember({
        userId: "u",
        text: "The user owns a grey cat named Miso",
        type: "semantic",
      });
      const found = await a.search(typo);
      expect(found.hits.map((h) => h.memory.id)).toEqual([cat.id]);
      expect(found.hits[0]).toMatchObject({ vectorRank: 1 });
      expect(found.hits[0]?.bm25Rank).toBeUndefined();
      // The same text written through the other instance merges into it.
      const again = await a.remember({
        userId: "u",
        text: "the user owns a grey cat named Miso",
        type: "semantic",
      });
      expect(again).toMatchObject({ id: cat.id, merged: true });
      expect(await b.forget("u", cat.id)).toBe(true);
      expect((await a.search(typo)).hits).toEqual([]);
      // Two instances writing the same new memory at once store it once.
      const [x, y] = await Promise.all([
        a.remember({ userId: "u", text: "The user has a parrot called Kiwi", type: "semantic" }),
        b.remember({ userId: "u", text: "The user has a parrot called Kiwi", type: "semantic" }),
      ]);
      expect([x!.merged, y!.merged].sort()).toEqual([false, true]);
      expect(x!.id).toBe(y!.id);
      expect(await a.count("u")).toBe(2);
    } finally {
      if (second.kind === "sqlite") second.db.close();
    }
  });

  it("searches a person's past messages, in their sessions only, CJK included", async () => {
    const backend = await open();
    await seedMessages(backend, [
      {
        userId: "alice",
        sessionId: "monday",
        messages: [
          { role: "user", content: "My sister's wedding is in Lisbon next June." },
          {
            role: "assistant",
            content: [{ type: "text", text: "Congratulations! Lisbon in June is lovely." }],
          },
        ],
      },
      {
        userId: "alice",
        sessionId: "tuesday",
        messages: [
          { role: "user", content: [{ type: "text", text: "我下个月要去上海出差，帮我订酒店" }] },
          {
            role: "assistant",
            content: [
              { type: "reasoning", text: "hidden reasoning about Lisbon" },
              { type: "text", text: "好的，我来查一下上海的酒店。" },
            ],
          },
          { role: "system", content: "Lisbon system note" },
        ],
      },
      {
        userId: "bob",
        sessionId: "monday",
        messages: [{ role: "user", content: "Bob also talks about Lisbon and 上海." }],
      },
      {
        userId: "team-1",
        sessionId: "c1",
        messages: [{ role: "user", content: "The channel plans a Lisbon offsite" }],
      },
    ]);
    const store = storeOn(backend);
    const hits = await store.recallSearch({ userId: "alice", query: "wedding in Lisbon" });
    expect(hits.map((h) => [h.sessionId, h.role, h.text])).toEqual([
      ["monday", "user", "My sister's wedding is in Lisbon next June."],
      ["monday", "assistant", "Congratulations! Lisbon in June is lovely."],
    ]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    expect(await store.recallSearch({ userId: "bob", query: "wedding" })).toEqual([]);
    expect((await store.recallSearch({ userId: "alice", query: "上海" })).map((h) => h.text)).toEqual([
      "好的，我来查一下上海的酒店。",
      "我下个月要去上海出差，帮我订酒店",
    ]);
    expect((await store.recallSearch({ userId: "alice", query: "去上海出差" }))[0]?.text).toBe(
      "我下个月要去上海出差，帮我订酒店",
    );
    // Reasoning and system text are not indexed; the live session can be left out.
    expect((await store.recallSearch({ userId: "alice", query: "Lisbon" })).map((h) => h.sessionId)).toEqual([
      "monday",
      "monday",
    ]);
    expect(
      await store.recallSearch({ userId: "alice", query: "Lisbon", excludeSessionId: "monday" }),
    ).toEqual([]);
    // Channels the person is in are searched when named as owners.
    const withChannel = await store.recallSearch({
      userId: "alice",
      owners: ["alice", "team-1"],
      query: "offsite Lisbon",
      excludeSessionId: "monday",
    });
    expect(withChannel.map((h) => h.sessionId)).toEqual(["c1"]);
    expect((await store.recallSearch({ userId: "alice", query: "LISBON wedding", limit: 1 })).length).toBe(1);
  });

  it("follows deleted sessions in recall search", async () => {
    const backend = await open();
    await seedMessages(backend, [
      { userId: "u", sessionId: "s", messages: [{ role: "user", content: "remember the blue umbrella" }] },
    ]);
    const store = storeOn(backend);
    expect((await store.recallSearch({ userId: "u", query: "umbrella" })).map((h) => h.text)).toEqual([
      "remember the blue umbrella",
    ]);
    if (backend.kind === "sqlite") backend.db.prepare("DELETE FROM sessions").run();
    else await backend.db.run("DELETE FROM sessions");
    expect(await store.recallSearch({ userId: "u", query: "umbrella" })).toEqual([]);
  });
});

/** Memories of three users in English, Chinese and Japanese, and questions about them. */
const CORPUS = [
  "The user prefers dark roast coffee in the morning",
  "The user drinks green tea every afternoon, sometimes oolong tea",
  "Green tea and green smoothies: the user likes green drinks",
  "The user walks the dog at noon and in the evening",
  "The user's daughter Mia is six years old and loves drawing",
  "The user is allergic to peanuts and shellfish",
  "The user runs 5k every Monday and Thursday morning",
  "Meeting notes: the quarterly budget review moved to Friday",
  OOLONG,
  ...CJK_OTHERS,
  "用户讨厌下雨天，下雨时心情不好",
  "ユーザーは緑茶が好きで、コーヒーは飲まない",
  "ユーザーは TOEIC で 900 点を目指している",
  "ユーザーは夜十二時前に寝るようにしている",
];
const QUESTIONS = [
  "what does the user drink in the morning?",
  "green tea",
  "coffee tea",
  "how old is the daughter",
  "allergies peanuts",
  "running schedule morning",
  "我应该喝什么茶？",
  "咖啡",
  "女儿几岁",
  "私は何のお茶を飲めばいい？",
  "the user",
];

describe.skipIf(!postgresAvailable)("memory ranking on SQLite and PostgreSQL", () => {
  it("returns the same hits in the same order with the same BM25 scores", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dimsum-contract-"));
    const sqliteDb = openDatabase(join(dir, "dimsum.db"));
    const pg = await openTestPostgres();
    try {
      const now = () => 1_000_000;
      const sqlite = new SqliteMemoryStore(sqliteDb, { now, warn: () => {} });
      const postgres = new PostgresMemoryStore(pg, { now, warn: () => {} });
      for (const store of [sqlite, postgres]) {
        // Other users' memories count in the collection statistics on both.
        await store.rememberMany(
          CORPUS.map((text, i) => ({ userId: i % 3 === 0 ? "other" : "u", text, type: "semantic" as const })),
          { merge: false },
        );
        await store.rememberMany(
          CORPUS.map((text) => ({ userId: "u", text, type: "semantic" as const, importance: 3 })),
          { merge: false },
        );
      }
      for (const query of QUESTIONS) {
        const [a, b] = await Promise.all(
          [sqlite, postgres].map((s) => s.search({ userId: "u", query, limit: 20 })),
        );
        const view = (r: typeof a) => r!.hits.map((h) => [h.memory.text, h.memory.importance, h.bm25Rank]);
        expect(view(b), query).toEqual(view(a));
        for (const [i, hit] of b!.hits.entries()) expect(hit.score, query).toBeCloseTo(a!.hits[i]!.score, 12);
        // The raw BM25 relevance, before fusion: FTS5's bm25() and the SQL that mirrors it.
        const terms = queryTerms(query);
        const fts5 = new Bm25Index(sqliteDb).search({ userId: "u" }, terms, 50);
        const sql = await new PgBm25().search(pg, { userId: "u" }, terms, 50);
        expect(
          sql.map((h) => h.id),
          query,
        ).toEqual(fts5.map((h) => h.id));
        for (const [i, hit] of sql.entries()) expect(hit.score, query).toBeCloseTo(fts5[i]!.score, 9);
      }
    } finally {
      sqliteDb.close();
      rmSync(dir, { recursive: true, force: true });
      await pg.dispose();
    }
  });
});

describe.skipIf(!postgresAvailable)("memory migration on PostgreSQL", () => {
  it("indexes for recall the messages written before it", async () => {
    const created = await createTestDatabase();
    try {
      const old = await openPostgres(created.url, { migrations: pgMigrations.slice(0, 1) });
      const session = await old.one<{ id: number }>(
        "INSERT INTO sessions (user_id, session_key, created_at, updated_at) VALUES ('u', 's', 1, 1) RETURNING id",
      );
      await old.run(
        `INSERT INTO messages (session_id, seq, role, content_json, created_at) VALUES
           ($1, 0, 'user', '"remember the blue umbrella"', 1),
           ($1, 1, 'tool', '"umbrella tool output"', 2),
           ($1, 2, 'assistant', 'not json at all, umbrella', 3)`,
        [session!.id],
      );
      await old.close();
      const db = await openPostgres(created.url);
      try {
        const store = new PostgresMemoryStore(db, { warn: () => {} });
        expect((await store.recallSearch({ userId: "u", query: "umbrella" })).map((h) => h.text)).toEqual([
          "remember the blue umbrella",
        ]);
      } finally {
        await db.close();
      }
    } finally {
      await created.drop();
    }
  });
});
