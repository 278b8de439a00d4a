/**
 * Knowledge base speed: ingestion throughput for the 1,400 Cranfield abstracts (written as Markdown
 * files and added as a folder, the way `dimsum kb add` does), the no-op re-add, and query latency
 * p50/p95 at that size and at ~100,000 child chunks (a synthetic corpus: Zipf vocabulary of made-up
 * words with English function words). Vectors are `hashEmbedding` (256 dims) computed in process, so
 * no embedding API latency is included. Baselines measured in the same run: reading and hashing the
 * files (the I/O floor of ingestion), and a brute-force BM25 in plain JS over pre-tokenised chunks
 * (what a search without an index costs). Run `npm run build` first.
 */

import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { KnowledgeService } from "../dist/knowledge/knowledge-service.js";
import { simdAvailable } from "../dist/memory/vectors/dot-kernel.js";
import { openDatabase } from "../dist/store/database.js";
import { hashEmbedding } from "../dist/testing/fake-embeddings-server.js";
import { loadCranfield } from "./cranfield.mjs";
import { cranfieldMarkdown } from "./kb-quality.mjs";
import { rng, SYLLABLES, zipfWords } from "./synthetic-text.mjs";

const DIMS = 256;
const SYNTHETIC_DOCS = 5_000;
const PARAGRAPHS_PER_DOC = 20;
const QUERIES = 200;
const WARMUP = 20;
const FUNCTION_WORDS = ["the", "a", "of", "to", "and", "in", "is", "for", "on", "with", "that", "it", "as"];

const embedder = {
  model: `bench:hash-${DIMS}`,
  embed: async (texts) => texts.map((t) => hashEmbedding(t, DIMS)),
};

function syntheticCorpus(seed = 11) {
  const random = rng(seed);
  const zipf = zipfWords(random, SYLLABLES.slice(0, 15), 30_000);
  const sentence = () => {
    const words = [];
    const n = 8 + Math.floor(random() * 10);
    for (let j = 0; j < n; j++)
      words.push(random() < 0.35 ? FUNCTION_WORDS[Math.floor(random() * FUNCTION_WORDS.length)] : zipf());
    return `${words.join(" ")}.`;
  };
  const docs = [];
  const paragraphs = [];
  for (let d = 0; d < SYNTHETIC_DOCS; d++) {
    const parts = [`# ${zipf()} ${zipf()} ${zipf()}`];
    for (let p = 0; p < PARAGRAPHS_PER_DOC; p++) {
      const sentences = [];
      // About 85 words: one child chunk (~170 tokens) per paragraph.
      for (let words = 0; words < 80; words += 12) sentences.push(sentence());
      const paragraph = sentences.join(" ");
      paragraphs.push(paragraph);
      parts.push(paragraph);
    }
    docs.push({ name: `doc-${d}.md`, text: parts.join("\n\n") });
  }
  const queries = Array.from({ length: QUERIES + WARMUP }, () => {
    const words = paragraphs[Math.floor(random() * paragraphs.length)].replace(/\./g, "").split(" ");
    const pick = () => words[Math.floor(random() * words.length)];
    return [pick(), pick(), pick(), zipf()].join(" ");
  });
  return { docs, queries };
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function latency(fn, queries, warmup = WARMUP) {
  for (const q of queries.slice(0, warmup)) await fn(q);
  const samples = [];
  for (const q of queries.slice(warmup)) {
    const start = performance.now();
    await fn(q);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p95: percentile(samples, 95), n: samples.length };
}

/** Brute-force BM25 (k1 1.2, b 0.75) over pre-tokenised texts, scanning every text per query. */
function bruteForceBm25(texts) {
  const tokenize = (t) =>
    t
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean);
  const docs = texts.map((t) => {
    const tf = new Map();
    const words = tokenize(t);
    for (const w of words) tf.set(w, (tf.get(w) ?? 0) + 1);
    return { tf, length: words.length };
  });
  const df = new Map();
  for (const d of docs) for (const w of d.tf.keys()) df.set(w, (df.get(w) ?? 0) + 1);
  const avg = docs.reduce((s, d) => s + d.length, 0) / docs.length;
  return (query, limit = 10) => {
    const terms = [...new Set(tokenize(query))];
    const idf = terms.map((w) =>
      Math.log(1 + (docs.length - (df.get(w) ?? 0) + 0.5) / ((df.get(w) ?? 0) + 0.5)),
    );
    const scored = [];
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i];
      let score = 0;
      for (let j = 0; j < terms.length; j++) {
        const f = d.tf.get(terms[j]);
        if (f) score += (idf[j] * f * 2.2) / (f + 1.2 * (0.25 + (0.75 * d.length) / avg));
      }
      if (score > 0) scored.push([i, score]);
    }
    return scored.sort((a, b) => b[1] - a[1]).slice(0, limit);
  };
}

function readAndHash(dir) {
  const start = performance.now();
  let bytes = 0;
  for (const name of readdirSync(dir)) {
    const data = readFileSync(join(dir, name));
    bytes += data.byteLength;
    createHash("sha256").update(data).digest("hex");
  }
  return { ms: performance.now() - start, bytes };
}

async function cranfield(dir) {
  const data = loadCranfield();
  const folder = join(dir, "cranfield");
  mkdirSync(folder);
  for (const doc of data.docs) writeFileSync(join(folder, `cran-${doc.id}.md`), cranfieldMarkdown(doc));
  const floor = readAndHash(folder);
  const rows = [];
  const services = {};
  for (const [label, options] of [
    ["BM25 only", {}],
    [`with hashEmbedding ${DIMS}`, { embedder }],
  ]) {
    const db = openDatabase(join(dir, `cran-${rows.length}.db`));
    const kb = KnowledgeService.sqlite(db, { ...options, limits: { maxFiles: 10_000 } });
    const first = await kb.ingest("cranfield", [{ kind: "path", path: folder }]);
    const again = await kb.ingest("cranfield", [{ kind: "path", path: folder }]);
    rows.push({ label, first, again, chunks: (await kb.status()).childChunks });
    services[label] = { kb, db };
  }
  const queries = data.queries.map((q) => q.text);
  const bm25 = await latency((q) => services["BM25 only"].kb.search({ query: q, topK: 10 }), queries);
  const hybridKb = services[`with hashEmbedding ${DIMS}`].kb;
  const hybrid = await latency((q) => hybridKb.search({ query: q, topK: 10 }), queries);
  const texts = data.docs.map((d) => `${d.title}\n${d.text}`);
  const brute = bruteForceBm25(texts);
  const baseline = await latency((q) => brute(q), queries);
  for (const { db } of Object.values(services)) db.close();
  return { docs: data.docs.length, floor, rows, bm25, hybrid, baseline };
}

async function synthetic(dir) {
  const { docs, queries } = syntheticCorpus();
  const db = openDatabase(join(dir, "synthetic.db"));
  const kb = KnowledgeService.sqlite(db, { embedder, limits: { maxFiles: 10_000 } });
  const start = performance.now();
  let bytes = 0;
  for (let i = 0; i < docs.length; i += 1000) {
    const batch = docs.slice(i, i + 1000).map((d) => ({ kind: "bytes", name: d.name, data: d.text }));
    const result = await kb.ingest("synthetic", batch);
    bytes += result.bytes;
  }
  const ingestMs = performance.now() - start;
  const chunks = (await kb.status()).childChunks;
  const coldStart = performance.now();
  await kb.search({ query: queries[0], topK: 10 });
  const coldMs = performance.now() - coldStart;
  const hybrid = await latency((q) => kb.search({ query: q, topK: 10 }), queries);
  const bm25 = await latency((q) => kb.search({ query: q, topK: 10, retrievers: "bm25" }), queries);
  const texts = db.prepare("SELECT text FROM kb_child_chunks").pluck().all();
  db.close();
  const brute = bruteForceBm25(texts);
  const baseline = await latency((q) => brute(q), queries.slice(0, 40), 5);
  return { docs: docs.length, chunks, bytes, ingestMs, coldMs, hybrid, bm25, baseline };
}

const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));
const mb = (bytes) => bytes / (1024 * 1024);

/** Runs the benchmark; returns a markdown section. */
export async function run() {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-kb-speed-"));
  let cran;
  let big;
  try {
    cran = await cranfield(dir);
    big = await synthetic(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const floorRate = mb(cran.floor.bytes) / (cran.floor.ms / 1000);
  const ingestRows = cran.rows.map((r) => {
    const secs = r.first.ms / 1000;
    return (
      `| Cranfield, ${r.label} | ${cran.docs} | ${r.chunks.toLocaleString("en")} | ${(r.first.added / secs).toFixed(0)} | ` +
      `${(mb(r.first.bytes) / secs).toFixed(2)} | ${(floorRate / (mb(r.first.bytes) / secs)).toFixed(0)}x | ` +
      `${(r.again.unchanged / (r.again.ms / 1000)).toFixed(0)} |`
    );
  });
  const bigSecs = big.ingestMs / 1000;
  ingestRows.push(
    `| synthetic, with hashEmbedding ${DIMS} | ${big.docs.toLocaleString("en")} | ${big.chunks.toLocaleString("en")} | ` +
      `${(big.docs / bigSecs).toFixed(0)} | ${(mb(big.bytes) / bigSecs).toFixed(2)} | — | — |`,
  );
  const q = (label, chunks, r, base) =>
    `| ${label} | ${chunks.toLocaleString("en")} | ${ms(r.bm25.p50)} | ${ms(r.bm25.p95)} | ${ms(r.hybrid.p50)} | ${ms(r.hybrid.p95)} | ` +
    `${ms(base.p50)} | ${ms(base.p95)} | ${(base.p50 / r.hybrid.p50).toFixed(1)}x |`;
  return [
    "## Knowledge base speed",
    "",
    `Ingestion through the whole pipeline (read, hash, extract, chunk, FTS, ${DIMS}-dim hashEmbedding computed in process, ` +
      "small files written together, 64 chunks per embedding request and transaction). Cranfield: 1,400 Markdown files added as a folder; the I/O floor is reading and hashing " +
      `the same files (${floorRate.toFixed(1)} MB/s). Re-add: the same folder again, every file unchanged (hash check only).`,
    "",
    "| corpus | documents | child chunks | documents/s | MB/s | I/O floor ÷ pipeline | re-add (no-op) documents/s |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...ingestRows,
    "",
    `Query latency in ms (topK 10; ${QUERIES} queries after ${WARMUP} warm-up; Cranfield uses its 225 queries). ` +
      `Vector scan: ${simdAvailable() ? "WebAssembly SIMD int8" : "JS int8 (no SIMD)"}. The baseline is brute-force BM25 in JS ` +
      "over pre-tokenised chunks (no index), fewer queries at 100k.",
    "",
    "| corpus | child chunks | BM25 p50 | BM25 p95 | hybrid p50 | hybrid p95 | brute-force p50 | brute-force p95 | speed-up vs brute force (hybrid p50) |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    q("Cranfield", cran.rows[1].chunks, cran, cran.baseline),
    q("synthetic", big.chunks, big, big.baseline),
    "",
    `First search on the 100k corpus (loads the vector index from SQLite): ${ms(big.coldMs)} ms.`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await run());
}
