/**
 * Memory search latency at 1k, 10k and 100k memories of one user (p50/p95), hybrid (BM25 + vectors)
 * and BM25-only, next to a baseline that recomputes TF-IDF over every entry per query (what simple
 * agents do); plus insert throughput. Synthetic memories: 8–20 words drawn from a Zipf(1) vocabulary
 * of 20,000 made-up words with English function words mixed in; queries are 3 words of a random memory
 * plus 1 random word. Vectors are `hashEmbedding` (256 dims) computed in process, so no embedding
 * API latency is included. The same on PostgreSQL (when a server is reachable, see postgres.mjs) at
 * 1k and 10k memories (sizes: DIMSUM_BENCH_SIZES for SQLite, DIMSUM_BENCH_PG_SIZES for PostgreSQL). Run
 * `npx tsc -p tsconfig.build.json` first.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PostgresMemoryStore } from "../dist/memory/postgres-memory-store.js";
import { SqliteMemoryStore } from "../dist/memory/sqlite-memory-store.js";
import { simdAvailable } from "../dist/memory/vectors/dot-kernel.js";
import { openDatabase } from "../dist/store/database.js";
import { hashEmbedding } from "../dist/testing/fake-embeddings-server.js";
import { openBenchPostgres, postgresReachable } from "./postgres.mjs";
import { rng, SYLLABLES, zipfWords } from "./synthetic-text.mjs";

const DIMS = 256;
const SIZES = (process.env.DIMSUM_BENCH_SIZES ?? "1000,10000,100000")
  .split(",")
  .map(Number)
  .filter((n) => n > 0);
const PG_SIZES = (process.env.DIMSUM_BENCH_PG_SIZES ?? "1000,10000")
  .split(",")
  .map(Number)
  .filter((n) => n > 0);
const QUERIES = 200;
const WARMUP = 20;
const FUNCTION_WORDS = [
  "the",
  "a",
  "of",
  "to",
  "and",
  "in",
  "is",
  "for",
  "on",
  "with",
  "that",
  "user",
  "likes",
];

function makeCorpus(count, seed = 7) {
  const random = rng(seed);
  const zipf = zipfWords(random, SYLLABLES, 20_000);
  const texts = [];
  for (let i = 0; i < count; i++) {
    const words = [];
    const n = 8 + Math.floor(random() * 13);
    for (let j = 0; j < n; j++)
      words.push(random() < 0.3 ? FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)] : zipf());
    texts.push(words.join(" "));
  }
  const queries = Array.from({ length: QUERIES + WARMUP }, () => {
    const words = texts[Math.floor(random() * count)].split(" ");
    const pick = () => words[Math.floor(random() * words.length)];
    return [pick(), pick(), pick(), zipf()].join(" ");
  });
  return { texts, queries };
}

/** The baseline: tokenise every entry, count document frequencies, score TF-IDF, sort; per query. */
function tfidfSearch(texts, query, limit = 10) {
  const tokenize = (t) =>
    t
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  const docs = texts.map(tokenize);
  const df = new Map();
  for (const doc of docs) for (const w of new Set(doc)) df.set(w, (df.get(w) ?? 0) + 1);
  const terms = tokenize(query);
  const scored = [];
  docs.forEach((doc, i) => {
    const tf = new Map();
    for (const w of doc) tf.set(w, (tf.get(w) ?? 0) + 1);
    let score = 0;
    for (const w of terms) {
      const f = tf.get(w);
      if (f) score += (f / doc.length) * Math.log(docs.length / df.get(w));
    }
    if (score > 0) scored.push([i, score]);
  });
  return scored.sort((a, b) => b[1] - a[1]).slice(0, limit);
}

const embedder = {
  model: `bench:hash-${DIMS}`,
  embed: async (texts) => texts.map((t) => hashEmbedding(t, DIMS)),
};

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function time(fn, queries, warmup) {
  for (const q of queries.slice(0, warmup)) await fn(q);
  const samples = [];
  for (const q of queries.slice(warmup)) {
    const start = performance.now();
    await fn(q);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) };
}

/** Stores on a new database of the backend (hybrid and BM25-only on the same data), and how to close. */
async function openStores(backend, file) {
  const options = { embedder, maxMemoriesPerUser: 1_000_000, warn: () => {} };
  const bm25Options = { maxMemoriesPerUser: 1_000_000 };
  if (backend === "sqlite") {
    const db = openDatabase(file);
    return {
      store: new SqliteMemoryStore(db, options),
      bm25Store: new SqliteMemoryStore(db, bm25Options),
      close: async () => db.close(),
    };
  }
  const pg = await openBenchPostgres();
  return {
    store: new PostgresMemoryStore(pg.db, options),
    bm25Store: new PostgresMemoryStore(pg.db, bm25Options),
    close: () => pg.dispose(),
  };
}

async function measure(size, dir, backend = "sqlite") {
  const { texts, queries } = makeCorpus(size);
  const { store, bm25Store, close } = await openStores(backend, join(dir, `bench-${size}.db`));
  const bulkStart = performance.now();
  for (let i = 0; i < texts.length; i += 1000) {
    const batch = texts.slice(i, i + 1000).map((text) => ({ userId: "bench", text, type: "semantic" }));
    await store.rememberMany(batch, { merge: false });
  }
  const bulkPerSecond = texts.length / ((performance.now() - bulkStart) / 1000);

  const coldStart = performance.now();
  await store.search({ userId: "bench", query: queries[0] });
  const coldMs = performance.now() - coldStart;

  const hybrid = await time((q) => store.search({ userId: "bench", query: q }), queries, WARMUP);
  const bm25 = await time((q) => bm25Store.search({ userId: "bench", query: q }), queries, WARMUP);
  const baselineQueries = size >= 100_000 ? 12 : size >= 10_000 ? 40 : 100;
  const baseline = await time((q) => tfidfSearch(texts, q), queries.slice(0, baselineQueries), 2);

  // Single inserts through the full write path (embedding, near-duplicate search, FTS, eviction check).
  const singles = makeCorpus(200, 99).texts;
  const singleStart = performance.now();
  for (const text of singles) await store.remember({ userId: "bench", text, type: "semantic" });
  const singlePerSecond = singles.length / ((performance.now() - singleStart) / 1000);
  await close();
  return { backend, size, hybrid, bm25, baseline, coldMs, bulkPerSecond, singlePerSecond };
}

const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(2));

/** Runs the benchmark; returns a markdown section. */
export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-memory-"));
  const rows = [];
  try {
    for (const size of SIZES) rows.push(await measure(size, dir));
    if (await postgresReachable())
      for (const size of PG_SIZES) rows.push(await measure(size, dir, "postgres"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const lines = [
    "## Memory search",
    "",
    `One user's archival memories; synthetic text (Zipf vocabulary), ${DIMS}-dim hashEmbedding vectors computed in process; ` +
      `vector scan: ${simdAvailable() ? "WebAssembly SIMD int8" : "JS int8 (no SIMD)"}. Latency in ms over ${QUERIES} queries ` +
      "(baseline over fewer). The baseline re-tokenises every memory and recomputes TF-IDF per query.",
    "",
    "| backend | memories | hybrid p50 | hybrid p95 | BM25-only p50 | BM25-only p95 | TF-IDF baseline p50 | baseline p95 | speed-up (p50) | first search (loads vectors) | bulk insert /s | single remember /s |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (r) =>
        `| ${r.backend} | ${r.size.toLocaleString("en")} | ${fmt(r.hybrid.p50)} | ${fmt(r.hybrid.p95)} | ${fmt(r.bm25.p50)} | ${fmt(r.bm25.p95)} | ` +
        `${fmt(r.baseline.p50)} | ${fmt(r.baseline.p95)} | ${(r.baseline.p50 / r.hybrid.p50).toFixed(0)}x | ${fmt(r.coldMs)} | ` +
        `${Math.round(r.bulkPerSecond).toLocaleString("en")} | ${Math.round(r.singlePerSecond).toLocaleString("en")} |`,
    ),
    "",
    "Targets: hybrid p50 < 10 ms at 100k, and ≥ 50x faster than the baseline there. Bulk insert = `rememberMany` in batches of " +
      "1,000 without merge checks; single remember = one `remember` call each (merge check included) into the full store.",
  ];
  return lines.join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await run());
}
