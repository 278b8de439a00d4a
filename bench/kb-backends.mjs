/**
 * Knowledge base retrieval quality on SQLite and on PostgreSQL, same run (issue 17: PostgreSQL
 * nDCG@10 ≥ 0.98 × SQLite). The Cranfield collection (../shared/datasets/cranfield) is ingested
 * through `KnowledgeService` into a SQLite file and into a fresh PostgreSQL database (BM25 over term
 * tables, vectors as BYTEA searched in memory; no pgvector), then the 225 judged queries run on
 * both: BM25 alone, and hybrid with hashEmbedding (the offline embedding in src/testing). Also
 * reported: ingestion time and mean search latency. PostgreSQL is the server at
 * DIMSUM_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres); without one the
 * section says so. Run `npm run build` first.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { KnowledgeService } from "../dist/knowledge/knowledge-service.js";
import { createPostgresKnowledgeService } from "../dist/knowledge/postgres.js";
import { openDatabase } from "../dist/store/database.js";
import { openPostgres } from "../dist/store/postgres/pg-database.js";
import { hashEmbedding } from "../dist/testing/fake-embeddings-server.js";
import { loadCranfield } from "./cranfield.mjs";
import { cranfieldMarkdown, evaluate } from "./kb-quality.mjs";

const SERVER = process.env.DIMSUM_BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const DIMS = Number(process.env.KB_DIMS ?? 256);

async function admin(sql) {
  const client = new pg.Client({ connectionString: SERVER, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function hashEmbedder(dims) {
  return { model: `bench:hash-${dims}`, embed: async (texts) => texts.map((t) => hashEmbedding(t, dims)) };
}

/** Ingests the collection; returns the service and the ingestion time. */
async function ingest(service, data) {
  const sources = data.docs.map((d) => ({
    kind: "bytes",
    name: `cran-${d.id}.md`,
    data: cranfieldMarkdown(d),
  }));
  const started = performance.now();
  const result = await service.ingest("cranfield", sources);
  return { ms: performance.now() - started, result };
}

/** The documents each judged query ranks first (top 10), to compare the backends query by query. */
async function topTen(service, data, retrievers) {
  const out = [];
  for (const query of data.queries) {
    if (!data.qrels.get(query.id)?.size) continue;
    const { passages } = await service.search({ query: query.text, topK: 10, retrievers });
    out.push(passages.map((p) => p.citation.source).join(" "));
  }
  return out;
}

async function measure(label, service, data, retrievers) {
  const started = performance.now();
  const row = await evaluate(label, service, data, retrievers);
  const queryMs = (performance.now() - started) / row.queries;
  return { ...row, queryMs, top: await topTen(service, data, retrievers) };
}

/** Runs the benchmark; returns a markdown section. */
export async function run() {
  const data = loadCranfield();
  const title = "## Knowledge base on SQLite and PostgreSQL (Cranfield, issue 17)";
  const name = `dimsum_bench_kb_${process.pid}`;
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (err) {
    return `${title}\n\nSkipped: no PostgreSQL server at ${SERVER} (${err.message}). Set DIMSUM_BENCH_POSTGRES_URL.`;
  }
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const dir = mkdtempSync(join(tmpdir(), "dimsum-bench-kb-backends-"));
  const rows = [];
  let pgDb;
  const sqliteDbs = [];
  try {
    pgDb = await openPostgres(url.toString());
    const embedder = hashEmbedder(DIMS);
    const backends = [
      {
        kind: "SQLite",
        open: (n) => {
          const db = openDatabase(join(dir, `${n}.db`));
          sqliteDbs.push(db);
          return KnowledgeService.sqlite(db, options(n));
        },
      },
      { kind: "PostgreSQL", open: (n) => createPostgresKnowledgeService(pgDb, options(n)) },
    ];
    function options(n) {
      return { limits: { maxFiles: 10_000 }, ...(n === "hybrid" ? { embedder } : {}) };
    }
    for (const backend of backends) {
      // One base per configuration: the BM25-only one first, dropped before the hybrid one is made,
      // so both backends score each configuration over the same corpus statistics.
      const plain = backend.open("bm25");
      const plainIngest = await ingest(plain, data);
      rows.push({
        kind: backend.kind,
        config: "BM25 only",
        ingestMs: plainIngest.ms,
        ...(await measure("bm25", plain, data, undefined)),
      });
      await plain.removeBase("cranfield");
      const hybrid = backend.open("hybrid");
      const hybridIngest = await ingest(hybrid, data);
      rows.push({
        kind: backend.kind,
        config: `hybrid BM25 + hashEmbedding ${DIMS} dims`,
        ingestMs: hybridIngest.ms,
        ...(await measure("hybrid", hybrid, data, "hybrid")),
      });
      rows.push({
        kind: backend.kind,
        config: `vector only (hashEmbedding ${DIMS} dims)`,
        ingestMs: undefined,
        ...(await measure("vector", hybrid, data, "vector")),
      });
    }
  } finally {
    for (const db of sqliteDbs) db.close();
    await pgDb?.close();
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (x) => x.toFixed(3);
  const configs = [...new Set(rows.map((r) => r.config))];
  const lines = configs.map((config) => {
    const lite = rows.find((r) => r.kind === "SQLite" && r.config === config);
    const post = rows.find((r) => r.kind === "PostgreSQL" && r.config === config);
    const ingestCell = (r) => (r.ingestMs === undefined ? "" : `${(r.ingestMs / 1000).toFixed(1)} s`);
    const same = lite.top.filter((t, i) => t === post.top[i]).length;
    return `| ${config} | ${f(lite.ndcg)} | ${f(post.ndcg)} | ${(post.ndcg / lite.ndcg).toFixed(3)} | ${same}/${lite.top.length} | ${f(lite.r100)} | ${f(post.r100)} | ${lite.queryMs.toFixed(2)} / ${post.queryMs.toFixed(2)} ms | ${lite.ingestMs === undefined ? "(same base)" : `${ingestCell(lite)} / ${ingestCell(post)}`} |`;
  });
  const worst = Math.min(
    ...configs.map(
      (c) =>
        rows.find((r) => r.kind === "PostgreSQL" && r.config === c).ndcg /
        rows.find((r) => r.kind === "SQLite" && r.config === c).ndcg,
    ),
  );
  return [
    title,
    "",
    `${data.docs.length} Cranfield abstracts ingested through KnowledgeService into a SQLite file (FTS5) and a fresh PostgreSQL database ` +
      "(BM25 over term tables, vectors as BYTEA in an in-memory int8 index, no pgvector), " +
      `${rows[0].queries} judged queries on each, same run. Ratio = PostgreSQL / SQLite nDCG@10 (target ≥ 0.98); "same top 10" counts the queries whose ten passages come back identical, in the same order. ` +
      "Latency is the mean `search()` time per query (topK 100); ingestion includes chunking and, for hybrid, hashEmbedding.",
    "",
    "| configuration | nDCG@10 SQLite | nDCG@10 PostgreSQL | ratio | same top 10 | recall@100 SQLite | recall@100 PostgreSQL | query SQLite / PostgreSQL | ingest SQLite / PostgreSQL |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ...lines,
    "",
    `Lowest ratio: ${worst.toFixed(3)} (${worst >= 0.98 ? "meets" : "does NOT meet"} the 0.98 target).`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(await run());
}
