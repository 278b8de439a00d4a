/**
 * Memory search in Chinese and Japanese on a small hand-judged set (test/fixtures/cjk-memory/eval.json):
 * a Chinese and a Japanese user's memories, natural questions with the memories that answer them,
 * and a few questions no memory answers. Reports precision@k and recall@k of `search` (BM25 only,
 * the default without an embedding model), and what the injection path (`memoryLayers`, 3 memories)
 * would put into the context: precision of the injected memories, the share of questions that get
 * at least one relevant memory, and how many memories unanswerable questions get. On SQLite and
 * (when a server is reachable, see postgres.mjs) on PostgreSQL.
 * Run `npx tsc -p tsconfig.build.json` first.
 */

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { memoryLayers } from "../dist/memory/injection.js";
import { PostgresMemoryStore } from "../dist/memory/postgres-memory-store.js";
import { SqliteMemoryStore } from "../dist/memory/sqlite-memory-store.js";
import { openDatabase } from "../dist/store/database.js";
import { openBenchPostgres, postgresReachable } from "./postgres.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "..", "test", "fixtures", "cjk-memory", "eval.json");
const INJECTED = 3;

/** Loads the set; `lang` doubles as the user id, so each language is its own user's memories. */
export function loadCjkSet() {
  return JSON.parse(readFileSync(FIXTURE, "utf8"));
}

/** Per-language and overall metrics of one store over the set. */
export async function evaluateCjk(store, data) {
  const results = await store.rememberMany(
    data.memories.map((m) => ({ userId: m.lang, text: m.text, type: "semantic" })),
    { merge: false },
  );
  const docOf = new Map(results.map((r, i) => [r.id, data.memories[i].id]));
  const rows = [];
  for (const lang of [...new Set(data.queries.map((q) => q.lang)), "all"]) {
    const queries = data.queries.filter((q) => lang === "all" || q.lang === lang);
    const m = {
      lang,
      judged: 0,
      unanswerable: 0,
      p1: 0,
      p3: 0,
      r3: 0,
      r10: 0,
      injected: 0,
      injectedRelevant: 0,
      answered: 0,
      noise: 0,
    };
    for (const query of queries) {
      const relevant = new Set(query.relevant);
      const search = await store.search({ userId: query.lang, query: query.text, limit: 10 });
      const ranked = search.hits.map((h) => docOf.get(h.memory.id));
      const layers = await memoryLayers(store, { userId: query.lang, query: query.text, limit: INJECTED });
      const injected = layers.memories.map((x) => docOf.get(x.id));
      if (relevant.size === 0) {
        m.unanswerable++;
        m.noise += injected.length;
        continue;
      }
      m.judged++;
      const hitsIn = (k) => ranked.slice(0, k).filter((d) => relevant.has(d)).length;
      m.p1 += hitsIn(1);
      m.p3 += hitsIn(3) / 3;
      m.r3 += hitsIn(3) / relevant.size;
      m.r10 += hitsIn(10) / relevant.size;
      const good = injected.filter((d) => relevant.has(d)).length;
      m.injected += injected.length;
      m.injectedRelevant += good;
      if (good > 0) m.answered++;
    }
    rows.push({
      lang,
      judged: m.judged,
      unanswerable: m.unanswerable,
      p1: m.p1 / m.judged,
      p3: m.p3 / m.judged,
      r3: m.r3 / m.judged,
      r10: m.r10 / m.judged,
      injectedPrecision: m.injected === 0 ? 0 : m.injectedRelevant / m.injected,
      answered: m.answered / m.judged,
      noise: m.unanswerable === 0 ? 0 : m.noise / m.unanswerable,
    });
  }
  return rows;
}

/** Runs the benchmark; returns a markdown section. */
export async function run() {
  const data = loadCjkSet();
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-cjk-"));
  const rows = [];
  try {
    const db = openDatabase(join(dir, "cjk.db"));
    for (const row of await evaluateCjk(new SqliteMemoryStore(db, { warn: () => {} }), data))
      rows.push({ backend: "sqlite", ...row });
    db.close();
    if (await postgresReachable()) {
      const pg = await openBenchPostgres();
      try {
        for (const row of await evaluateCjk(new PostgresMemoryStore(pg.db, { warn: () => {} }), data))
          rows.push({ backend: "postgres", ...row });
      } finally {
        await pg.dispose();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (x) => x.toFixed(3);
  return [
    "## Memory retrieval quality (Chinese and Japanese)",
    "",
    `${data.memories.length} memories of a Chinese and a Japanese user, ${data.queries.length} natural questions ` +
      "judged by hand (test/fixtures/cjk-memory/eval.json), some answered by no memory. BM25 only (no embedding model), on SQLite and on PostgreSQL when a server is reachable. " +
      `Search: precision and recall at k over the answerable questions. Injection: what \`memoryLayers\` puts into the context (at most ${INJECTED}): ` +
      "precision of the injected memories, the share of questions that get a relevant one, and memories injected per unanswerable question. " +
      "Run alone: `npx tsc -p tsconfig.build.json && node bench/cjk-memory-quality.mjs`.",
    "",
    "| language | backend | questions (unanswerable) | P@1 | P@3 | R@3 | R@10 | injected precision | answered | noise per unanswerable |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (r) =>
        `| ${r.lang} | ${r.backend} | ${r.judged} (${r.unanswerable}) | ${f(r.p1)} | ${f(r.p3)} | ${f(r.r3)} | ${f(r.r10)} | ${f(r.injectedPrecision)} | ${f(r.answered)} | ${r.noise.toFixed(2)} |`,
    ),
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await run());
}
