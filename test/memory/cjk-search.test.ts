import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ChunkBm25 } from "../../src/knowledge/store/chunk-bm25.js";
import { memoryLayers } from "../../src/memory/injection.js";
import { SqliteMemoryStore } from "../../src/memory/sqlite-memory-store.js";
import { migrations, runMigrations } from "../../src/store/migrations.js";
import { indexTerms, queryTerms } from "../../src/store/text/terms.js";
import { newMemoryStore, openDb, tempDir } from "./helpers.js";

const OOLONG = "用户喜欢喝乌龙茶，不喝咖啡";
const OTHERS = [
  "用户住在上海浦东，平时坐地铁上班",
  "用户的女儿叫小美，今年六岁",
  "用户每天早上六点起床跑步",
  "用户的生日是三月十二日",
  "用户讨厌下雨天，下雨时心情不好",
];

describe("memory search in Chinese and Japanese", () => {
  it("injects the oolong memory for a question that shares no bigram with it", async () => {
    const { store } = newMemoryStore();
    const oolong = await store.remember({ userId: "C", text: OOLONG, type: "semantic" });
    for (const text of OTHERS) await store.remember({ userId: "C", text, type: "semantic" });

    const layers = await memoryLayers(store, { userId: "C", query: "我应该喝什么茶？" });
    expect(layers.memories.map((m) => m.text)).toEqual([OOLONG]);
    expect(layers.trace).toMatchObject({ mode: "bm25", ids: [oolong.id] });
    // Another person's memories stay theirs.
    expect((await memoryLayers(store, { userId: "D", query: "我应该喝什么茶？" })).memories).toEqual([]);
  });

  it("ranks a shared bigram above shared characters, and stop characters match nothing", async () => {
    const { store } = newMemoryStore();
    const coffee = await store.remember({ userId: "C", text: OOLONG, type: "semantic" });
    const cafe = await store.remember({ userId: "C", text: "用户家楼下有一家咖喱店", type: "semantic" });
    for (const text of OTHERS) await store.remember({ userId: "C", text, type: "semantic" });
    const hits = (await store.search({ userId: "C", query: "咖啡" })).hits.map((h) => h.memory.id);
    expect(hits[0]).toBe(coffee.id);
    expect(hits).not.toContain(cafe.id);
    // 我, 的, 是, 什么 are in every other sentence; alone they find nothing.
    expect((await store.search({ userId: "C", query: "我的是什么？" })).hits.length).toBeLessThanOrEqual(1);
    expect((await memoryLayers(store, { userId: "C", query: "今天股市怎么样？" })).memories).toEqual([]);
  });

  it("finds Japanese memories through kanji, not through particles", async () => {
    const { store } = newMemoryStore();
    const tea = await store.remember({
      userId: "J",
      text: "ユーザーは緑茶が好きで、コーヒーは飲まない",
      type: "semantic",
    });
    await store.remember({ userId: "J", text: "ユーザーは TOEIC で 900 点を目指している", type: "semantic" });
    await store.remember({ userId: "J", text: "ユーザーは夜十二時前に寝るようにしている", type: "semantic" });
    const layers = await memoryLayers(store, { userId: "J", query: "私は何のお茶を飲めばいい？" });
    expect(layers.trace.ids).toEqual([tea.id]);
    // している is shared with two memories, but it is grammar.
    expect((await memoryLayers(store, { userId: "J", query: "この文章を英語に翻訳して" })).memories).toEqual(
      [],
    );
  });
});

describe("migration 9 (CJK characters column)", () => {
  it("re-indexes memories and knowledge chunks written in the old one-column format", async () => {
    const file = join(tempDir(), "old.db");
    const old = new Database(file);
    runMigrations(old, migrations.slice(0, 8));
    const now = Date.now();
    const memory = old
      .prepare(
        "INSERT INTO memories (user_id, type, text, importance, confidence, created_at, updated_at) VALUES ('C', 'semantic', ?, 5, 1, ?, ?)",
      )
      .run(OOLONG, now, now);
    // The old index: characters and bigrams together in `terms`.
    old
      .prepare("INSERT INTO memories_fts (rowid, terms) VALUES (?, ?)")
      .run(memory.lastInsertRowid, indexTerms(OOLONG).join(" "));
    const kb = old
      .prepare("INSERT INTO kb_bases (name, created_at, updated_at) VALUES ('tea', ?, ?)")
      .run(now, now).lastInsertRowid;
    const doc = old
      .prepare(
        "INSERT INTO kb_documents (kb_id, source, title, mime, size, content_hash, status, created_at, updated_at) VALUES (?, 'tea.md', 'tea', 'text/markdown', 1, 'h', 'ready', ?, ?)",
      )
      .run(kb, now, now).lastInsertRowid;
    const parent = old
      .prepare("INSERT INTO kb_parent_chunks (document_id, seq, text, tokens) VALUES (?, 0, ?, 20)")
      .run(doc, "乌龙茶是半发酵的茶").lastInsertRowid;
    const child = old
      .prepare(
        "INSERT INTO kb_child_chunks (parent_id, document_id, kb_id, seq, text, tokens) VALUES (?, ?, ?, 0, ?, 20)",
      )
      .run(parent, doc, kb, "乌龙茶是半发酵的茶").lastInsertRowid;
    old
      .prepare("INSERT INTO kb_chunks_fts (rowid, terms, kb) VALUES (?, ?, ?)")
      .run(child, indexTerms("乌龙茶是半发酵的茶").join(" "), `kbid${kb}`);

    // Later migrations (10 onwards) touch other tables; migration 9 is the one under test.
    expect(runMigrations(old, migrations).applied[0]).toBe(9);
    expect(runMigrations(old, migrations)).toMatchObject({ from: migrations.length, applied: [] });
    const columns = (table: string) =>
      old.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all();
    expect(columns("memories_fts")).toEqual(["terms", "chars"]);
    expect(columns("kb_chunks_fts")).toEqual(["terms", "chars", "kb"]);
    expect(old.prepare("SELECT terms, chars FROM memories_fts").get()).toEqual({
      terms: "用户 户喜 喜欢 欢喝 喝乌 乌龙 龙茶 不喝 喝咖 咖啡",
      chars: "用 户 喜 欢 喝 乌 龙 茶 不 喝 咖 啡",
    });
    old.close();

    const db = openDb(file);
    const store = new SqliteMemoryStore(db, { warn: () => {} });
    const hits = (await store.search({ userId: "C", query: "我应该喝什么茶？" })).hits;
    expect(hits.map((h) => h.memory.text)).toEqual([OOLONG]);
    const chunks = new ChunkBm25(db).search(queryTerms("什么是发酵茶？"), 5, [Number(kb)]);
    expect(chunks.map((c) => c.id)).toEqual([Number(child)]);
  });
});
