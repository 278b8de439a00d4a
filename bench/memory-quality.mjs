/**
 * Retrieval quality of memory search on the Cranfield collection (../shared/datasets/cranfield):
 * the 1,400 abstracts become one user's memories (title + text), the 225 queries are searches, and
 * the graded judgments (gain = 5 - code) give recall@10, recall@100 and nDCG@10. Compared: BM25
 * alone (with and without the BM25 work cap) and hybrid with 256- and 1024-dim hashEmbedding vectors,
 * each on SQLite and (when a server is reachable, see postgres.mjs) on PostgreSQL, with the time the
 * bulk import took. Run `npx tsc -p tsconfig.build.json` first.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PostgresMemoryStore } from "../dist/memory/postgres-memory-store.js";
import { SqliteMemoryStore } from "../dist/memory/sqlite-memory-store.js";
import { openDatabase } from "../dist/store/database.js";
import { hashEmbedding } from "../dist/testing/fake-embeddings-server.js";
import { loadCranfield } from "./cranfield.mjs";
import { openBenchPostgres, postgresReachable } from "./postgres.mjs";

const DIMS = [256, 1024];

/** Cranfield documents as memories: title and text together; two records have no text at all. */
function loadCollection() {
  const { docs, queries, qrels } = loadCranfield();
  const memories = docs
    .map((d) => ({ id: d.id, text: `${d.title}\n${d.text}`.trim() }))
    .filter((d) => d.text !== "");
  return { docs: memories, queries, qrels };
}

function ndcgAt(ranked, gains, k) {
  let dcg = 0;
  ranked.slice(0, k).forEach((doc, i) => {
    dcg += (gains.get(doc) ?? 0) / Math.log2(i + 2);
  });
  const ideal = [...gains.values()].sort((a, b) => b - a).slice(0, k);
  const idcg = ideal.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0);
  return idcg === 0 ? 0 : dcg / idcg;
}

function recallAt(ranked, gains, k) {
  const top = new Set(ranked.slice(0, k));
  let found = 0;
  for (const doc of gains.keys()) if (top.has(doc)) found++;
  return found / gains.size;
}

/** A memory store on a new database of the backend, and how to close it. */
async function openStore(backend, file, options) {
  if (backend === "sqlite") {
    const db = openDatabase(file);
    return { store: new SqliteMemoryStore(db, options), close: async () => db.close() };
  }
  const pg = await openBenchPostgres();
  return { store: new PostgresMemoryStore(pg.db, options), close: () => pg.dispose() };
}

async function evaluate(name, backend, data, options, dir) {
  const { store, close } = await openStore(backend, join(dir, `${name.replace(/\W+/g, "-")}.db`), {
    maxMemoriesPerUser: 100_000,
    maxMemoryChars: 100_000,
    candidates: 100,
    warn: () => {},
    ...options,
  });
  try {
    const started = performance.now();
    const results = await store.rememberMany(
      data.docs.map((d) => ({ userId: "cranfield", text: d.text, type: "semantic" })),
      { merge: false },
    );
    const importMs = performance.now() - started;
    const docOf = new Map(results.map((r, i) => [r.id, data.docs[i].id]));
    let ndcg = 0;
    let r10 = 0;
    let r100 = 0;
    let n = 0;
    let mode = "";
    const searchStarted = performance.now();
    for (const query of data.queries) {
      const gains = data.qrels.get(query.id);
      if (!gains || gains.size === 0) continue;
      const result = await store.search({ userId: "cranfield", query: query.text, limit: 100 });
      mode = result.mode;
      const ranked = result.hits.map((h) => docOf.get(h.memory.id));
      ndcg += ndcgAt(ranked, gains, 10);
      r10 += recallAt(ranked, gains, 10);
      r100 += recallAt(ranked, gains, 100);
      n++;
    }
    const searchMs = (performance.now() - searchStarted) / n;
    return {
      name,
      backend,
      mode,
      queries: n,
      ndcg: ndcg / n,
      r10: r10 / n,
      r100: r100 / n,
      importMs,
      searchMs,
    };
  } finally {
    await close();
  }
}

/** Runs the benchmark; returns a markdown section. */
export async function run() {
  const data = loadCollection();
  const embedder = (dims) => ({
    model: `bench:hash-${dims}`,
    embed: async (texts) => texts.map((t) => hashEmbedding(t, dims)),
  });
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-quality-"));
  const backends = (await postgresReachable()) ? ["sqlite", "postgres"] : ["sqlite"];
  const configs = [
    ["BM25 only", {}],
    ["BM25 only, no work cap", { maxPostings: Number.POSITIVE_INFINITY }],
    ...DIMS.map((dims) => [`hybrid (BM25 + hashEmbedding ${dims} dims)`, { embedder: embedder(dims) }]),
  ];
  const rows = [];
  try {
    for (const [name, options] of configs)
      for (const backend of backends) rows.push(await evaluate(name, backend, data, options, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (x) => x.toFixed(3);
  return [
    "## Memory retrieval quality (Cranfield)",
    "",
    `${data.docs.length} abstracts stored as one user's memories, ${rows[0].queries} judged queries as searches; ` +
      "gain = 5 - relevance code. hashEmbedding (the offline test embedding) hashes words and character trigrams: " +
      "it is lexical, not a semantic model, so it can at best echo BM25; a real embedding model is what hybrid is for. " +
      "Reference point from the dataset notes: plain BM25 (no stemming) ≈ nDCG@10 0.34, recall@100 0.70.",
    "",
    `Each configuration on SQLite and on PostgreSQL${backends.length === 1 ? " (no PostgreSQL server was reachable: SQLite only)" : ""}, ` +
      "with the time the bulk import (`rememberMany`, merge off, one transaction) took and the mean search time.",
    "",
    "| configuration | backend | mode | nDCG@10 | recall@10 | recall@100 | import ms | search ms |",
    "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${r.backend} | ${r.mode} | ${f(r.ndcg)} | ${f(r.r10)} | ${f(r.r100)} | ${r.importMs.toFixed(0)} | ${r.searchMs.toFixed(2)} |`,
    ),
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await run());
}
