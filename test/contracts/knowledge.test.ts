/**
 * The knowledge repository contract on SQLite and on PostgreSQL: bases per agent, documents written
 * whole and replaced, cascading deletes, counts, filters, BM25 ranking (PostgreSQL's term tables
 * score exactly as FTS5 does) and vectors, through the repository and through KnowledgeService.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { formatOf } from "../../src/knowledge/formats/detect.js";
import { contentHash, prepareDocument } from "../../src/knowledge/ingest/prepare.js";
import { KnowledgeService, type KnowledgeServiceOptions } from "../../src/knowledge/knowledge-service.js";
import type {
  KnowledgeRepository,
  PreparedDocument,
} from "../../src/knowledge/store/knowledge-repository.js";
import { knowledgeTermsStep } from "../../src/knowledge/store/pg-knowledge-derived.js";
import { globToRegex, PgKnowledgeRepository } from "../../src/knowledge/store/pg-knowledge-repository.js";
import { SqliteKnowledgeRepository } from "../../src/knowledge/store/sqlite-knowledge-repository.js";
import type { Embedder } from "../../src/memory/types.js";
import { openDatabase } from "../../src/store/database.js";
import { queryTerms } from "../../src/store/text/terms.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";
import { type Backend, describeBackends } from "./backends.js";

const tempDirs: string[] = [];
const sqliteDbs: Array<{ close(): void }> = [];
afterEach(() => {
  for (const db of sqliteDbs.splice(0)) db.close();
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

let clock = 1_000;
const now = () => ++clock;

function repoOf(backend: Backend, options: { maxPostings?: number } = {}): KnowledgeRepository {
  return backend.kind === "sqlite"
    ? new SqliteKnowledgeRepository(backend.db, now, options.maxPostings)
    : new PgKnowledgeRepository(backend.db, { now, ...options });
}

/** A second SQLite database, the FTS5 reference the PostgreSQL scores are compared with. */
function referenceSqlite(): SqliteKnowledgeRepository {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-kb-ref-"));
  tempDirs.push(dir);
  const db = openDatabase(join(dir, "ref.db"));
  sqliteDbs.push(db);
  return new SqliteKnowledgeRepository(db, now);
}

/** Another connection to a SQLite file, closed after the test. */
function secondConnection(file: string) {
  const db = openDatabase(file);
  sqliteDbs.push(db);
  return db;
}

function embedder(dims = 32): Embedder {
  return { model: `test:hash-${dims}`, embed: async (texts) => texts.map((t) => hashEmbedding(t, dims)) };
}

/** A document as ingestion prepares it (Markdown), with vectors when `vectors` is given. */
async function prepared(
  kbId: number,
  source: string,
  text: string,
  vectors?: Embedder,
  chunking = {},
): Promise<PreparedDocument> {
  const data = new TextEncoder().encode(text);
  const name = source.split("/").pop()!;
  const doc = await prepareDocument(
    { kbId, source, name, data, hash: contentHash(data), format: formatOf(name) ?? formatOf("x.txt")! },
    chunking,
  );
  if (vectors) {
    const children = doc.parents.flatMap((p) => p.children);
    const embedded = await vectors.embed(children.map((c) => c.indexText));
    children.forEach((c, i) => {
      c.vector = embedded[i]!;
    });
    doc.embeddingModel = vectors.model;
  }
  return doc;
}

/**
 * On PostgreSQL, the term tables must always agree with the chunks: no posting without its chunk,
 * per-base term counts equal to the postings, base totals equal to the chunks' lengths.
 */
async function expectConsistentIndex(backend: Backend): Promise<void> {
  if (backend.kind !== "postgres") return;
  const db = backend.db;
  expect(
    await db.one(
      "SELECT count(*) AS n FROM kb_chunk_terms t WHERE NOT EXISTS (SELECT 1 FROM kb_child_chunks c WHERE c.id = t.chunk_id)",
    ),
  ).toEqual({ n: 0 });
  expect(
    await db.one(`SELECT count(*) AS n FROM (
      (SELECT term, kb_id, df FROM kb_term_df EXCEPT SELECT term, kb_id, count(*)::int FROM kb_chunk_terms GROUP BY term, kb_id)
      UNION ALL
      (SELECT term, kb_id, count(*)::int FROM kb_chunk_terms GROUP BY term, kb_id EXCEPT SELECT term, kb_id, df FROM kb_term_df)) x`),
  ).toEqual({ n: 0 });
  expect(
    await db.one(`SELECT count(*) AS n FROM kb_bases b WHERE b.fts_rows <> (SELECT count(*) FROM kb_child_chunks c WHERE c.kb_id = b.id)
      OR b.fts_tokens <> (SELECT coalesce(sum(fts_len), 0) FROM kb_child_chunks c WHERE c.kb_id = b.id)`),
  ).toEqual({ n: 0 });
}

function service(repo: KnowledgeRepository, options: KnowledgeServiceOptions = {}) {
  return new KnowledgeService(repo, { now, ...options });
}

const CORPUS: Array<[string, string]> = [
  ["/docs/wings.md", "# Wings\n\nSwept wings delay compressibility drag at high subsonic speed. Wings flex."],
  ["/docs/engines.md", "# Engines\n\nTurbofan engines mix bypass air with the core exhaust for thrust."],
  [
    "/notes/landing.txt",
    "Landing gear retracts into the wing root after take-off; flaps extend for landing.",
  ],
  [
    "/notes/drag.txt",
    "Induced drag falls as speed rises, while parasite drag grows with the square of speed.",
  ],
  ["/cjk/tea.md", "# 饮品\n\n我每天早上喝一杯咖啡，下午喝绿茶。喜欢喝乌龙茶。"],
  ["/cjk/train.md", "# 旅行\n\n東京から大阪まで新幹線で行きました。"],
];

describeBackends("knowledge repository", (open, kind) => {
  it("keeps a base's owner and who sees it; setVisibility changes it, the owner stays", async () => {
    const repo = repoOf(await open());
    const plain = await repo.ensureBase("plain");
    expect([plain.owner_id ?? null, plain.visibility, plain.allowed_json]).toEqual([null, "everyone", "[]"]);
    const vault = await repo.ensureBase("vault", undefined, "", {
      ownerId: "alice",
      visibility: "people",
      allowedUsers: ["bob"],
    });
    expect([vault.owner_id, vault.visibility, JSON.parse(vault.allowed_json ?? "")]).toEqual([
      "alice",
      "people",
      ["bob"],
    ]);
    // Asking again for an existing base leaves it as it is.
    const again = await repo.ensureBase("vault", undefined, "", { ownerId: "carol", visibility: "everyone" });
    expect([again.owner_id, again.visibility]).toEqual(["alice", "people"]);
    await repo.setVisibility(vault.id, { ownerId: "carol", visibility: "private", allowedUsers: [] });
    const after = await repo.findBase("vault");
    expect([after?.owner_id, after?.visibility, after?.allowed_json]).toEqual(["alice", "private", "[]"]);
    expect((await repo.listBases(null)).map((b) => [b.name, b.visibility])).toEqual([
      ["plain", "everyone"],
      ["vault", "private"],
    ]);
  });

  it("creates bases once, finds the agent's own before the shared one, lists them per agent", async () => {
    const repo = repoOf(await open());
    const shared = await repo.ensureBase("manuals", undefined, "shared manuals");
    expect(await repo.ensureBase("manuals")).toEqual(shared);
    const own = await repo.ensureBase("manuals", "pilot");
    await repo.ensureBase("Zeta");
    await repo.ensureBase("alpha", "other");
    expect(own.id).not.toBe(shared.id);
    expect(shared).toMatchObject({
      name: "manuals",
      agent_id: "",
      description: "shared manuals",
      version: 0,
    });
    expect((await repo.findBase("manuals", "pilot"))?.id).toBe(own.id);
    expect((await repo.findBase("manuals", "nobody"))?.id).toBe(shared.id);
    expect((await repo.findBase("manuals"))?.id).toBe(shared.id);
    expect(await repo.findBase("alpha")).toBeUndefined();
    expect(await repo.findBase("missing", "pilot")).toBeUndefined();
    // Bytewise order, as SQLite compares text: upper case first.
    expect((await repo.visibleBases(undefined)).map((b) => b.name)).toEqual(["Zeta", "manuals"]);
    expect((await repo.visibleBases("pilot")).map((b) => [b.name, b.agent_id])).toEqual([
      ["Zeta", ""],
      ["manuals", ""],
      ["manuals", "pilot"],
    ]);
    expect((await repo.listBases(null)).map((b) => [b.name, b.agent_id, b.documents, b.chunks])).toEqual([
      ["Zeta", "", 0, 0],
      ["alpha", "other", 0, 0],
      ["manuals", "", 0, 0],
      ["manuals", "pilot", 0, 0],
    ]);
    expect((await repo.listBases("other")).map((b) => b.name)).toEqual(["Zeta", "alpha", "manuals"]);
    expect((await repo.listBases("")).map((b) => b.agent_id)).toEqual(["", ""]);
    expect(await repo.baseCount()).toBe(4);
  });

  it("writes documents whole, reads them back in every shape, and counts them", async () => {
    const repo = repoOf(await open());
    const base = await repo.ensureBase("kb");
    const docs = await Promise.all(
      [
        ["/b/B.md", "# Bravo\n\nBravo text about gliders."],
        ["/a/a.md", "# Alpha\n\nAlpha text about zeppelins."],
      ].map(([source, text]) => prepared(base.id, source!, text!)),
    );
    const report = await repo.writeDocuments(docs);
    expect(report.kbId).toBe(base.id);
    expect(report.after).toBeGreaterThan(report.before);
    expect(report.documentIds).toHaveLength(2);
    expect(report.removedChildIds).toEqual([]);
    expect((await repo.documents(base.id)).map((d) => d.source)).toEqual(["/a/a.md", "/b/B.md"]);
    const bravo = await repo.documentBySource(base.id, "/b/B.md");
    expect(bravo).toMatchObject({
      id: report.documentIds[0],
      kb_id: base.id,
      kb_name: "kb",
      title: "Bravo",
      mime: "text/markdown",
      status: "ready",
      error: null,
      pages: null,
      parent_count: 1,
      chunk_count: 1,
      embedding_model: null,
    });
    expect(await repo.documentById(base.id, bravo!.id)).toEqual(bravo);
    expect(await repo.documentById(base.id + 1000, bravo!.id)).toBeUndefined();
    expect(await repo.documentBySource(base.id, "/nope.md")).toBeUndefined();
    const children = await repo.childrenOf(bravo!.id);
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ document_id: bravo!.id, seq: 0, section: "Bravo" });
    expect(children[0]!.text).toContain("gliders");
    expect(await repo.children([children[0]!.id, 999_999])).toEqual([
      {
        id: children[0]!.id,
        parent_id: children[0]!.parent_id,
        document_id: bravo!.id,
        text: children[0]!.text,
        section: "Bravo",
      },
    ]);
    expect(await repo.children([])).toEqual([]);
    const [passage] = await repo.passages([children[0]!.parent_id]);
    expect(passage).toMatchObject({
      id: children[0]!.parent_id,
      document_id: bravo!.id,
      title: "Bravo",
      source: "/b/B.md",
      mime: "text/markdown",
      kb_name: "kb",
      page_start: null,
    });
    expect(await repo.passages([])).toEqual([]);
    expect(await repo.counts(undefined)).toEqual({ documents: 2, chunks: 2, withVectors: 0 });
    expect((await repo.withCounts(base)).documents).toBe(2);
    expect((await repo.withCounts(base)).chunks).toBe(2);
    expect((await repo.baseVersions([base.id])).get(base.id)).toBe(report.after);
  });

  it("replaces a document's chunks on re-ingest and keeps no trace of the old ones", async () => {
    const backend = await open();
    const repo = repoOf(backend);
    const base = await repo.ensureBase("kb");
    const first = await repo.writeDocuments([
      await prepared(base.id, "/a.md", "# Alpha\n\nThe old text mentions zeppelins and airships."),
    ]);
    const oldChildren = await repo.childrenOf(first.documentIds[0]!);
    const second = await repo.writeDocuments([
      await prepared(base.id, "/a.md", "# Alpha\n\nThe new text is about gliders instead."),
    ]);
    expect(second.documentIds).toEqual(first.documentIds);
    expect(second.before).toBeGreaterThanOrEqual(first.after);
    expect(second.removedChildIds).toEqual(oldChildren.map((c) => c.id));
    expect(await repo.children(oldChildren.map((c) => c.id))).toEqual([]);
    expect(await repo.searchText(queryTerms("zeppelins"), 10)).toEqual([]);
    const hits = await repo.searchText(queryTerms("gliders"), 10);
    expect(hits).toHaveLength(1);
    expect((await repo.children([hits[0]!.id]))[0]!.text).toContain("gliders");
    expect(await repo.counts(undefined)).toEqual({ documents: 1, chunks: 1, withVectors: 0 });
    await expectConsistentIndex(backend);
  });

  it("writes a batch naming one source twice as two writes in order, the last one winning", async () => {
    const backend = await open();
    const repo = repoOf(backend);
    const base = await repo.ensureBase("kb");
    const report = await repo.writeDocuments([
      await prepared(base.id, "/a.md", "# A\n\nFirst zeppelins."),
      await prepared(base.id, "/b.md", "# B\n\nBalloons."),
      await prepared(base.id, "/a.md", "# A\n\nThen gliders."),
    ]);
    expect(report.documentIds[0]).toBe(report.documentIds[2]);
    expect(report.documentIds[1]).not.toBe(report.documentIds[0]);
    expect(report.removedChildIds).toHaveLength(1);
    expect(await repo.searchText(queryTerms("zeppelins"), 5)).toEqual([]);
    expect(await repo.searchText(queryTerms("gliders"), 5)).toHaveLength(1);
    expect(await repo.counts(undefined)).toEqual({ documents: 2, chunks: 2, withVectors: 0 });
    await expectConsistentIndex(backend);
  });

  it("records failed documents without ever replacing a good version", async () => {
    const repo = repoOf(await open());
    const base = await repo.ensureBase("kb");
    const failed = {
      kbId: base.id,
      title: "x",
      mime: "application/pdf",
      size: 3,
      hash: "h",
      error: "no text",
    };
    await repo.writeFailed({ ...failed, source: "/scan.pdf" });
    expect(await repo.documentBySource(base.id, "/scan.pdf")).toMatchObject({
      status: "failed",
      error: "no text",
      chunk_count: 0,
    });
    await repo.writeFailed({ ...failed, source: "/scan.pdf", error: "still no text" });
    expect((await repo.documentBySource(base.id, "/scan.pdf"))?.error).toBe("still no text");
    await repo.writeDocuments([await prepared(base.id, "/good.md", "# Good\n\nReadable words.")]);
    await repo.writeFailed({ ...failed, source: "/good.md" });
    expect(await repo.documentBySource(base.id, "/good.md")).toMatchObject({ status: "ready", error: null });
    // A failed document is listed but never searched.
    expect(await repo.filteredDocuments([base.id], { mime: "application/pdf" })).toEqual([]);
  });

  it("deletes a document and a base with everything under them", async () => {
    const backend = await open();
    const repo = repoOf(backend);
    const base = await repo.ensureBase("kb");
    const other = await repo.ensureBase("other");
    const written = await repo.writeDocuments(
      await Promise.all(CORPUS.slice(0, 3).map(([s, t]) => prepared(base.id, s, t, embedder()))),
    );
    await repo.writeDocuments([await prepared(other.id, "/o.md", "# Other\n\nWings again, elsewhere.")]);
    const victim = written.documentIds[0]!;
    const victimChildren = (await repo.childrenOf(victim)).map((c) => c.id);
    const report = await repo.deleteDocument(base.id, victim);
    expect(report).toMatchObject({ kbId: base.id, documentIds: [victim], removedChildIds: victimChildren });
    expect(report.after).toBeGreaterThan(report.before);
    expect(await repo.documentById(base.id, victim)).toBeUndefined();
    expect(await repo.children(victimChildren)).toEqual([]);
    expect(await repo.searchText(queryTerms("compressibility"), 10)).toEqual([]);
    expect(await repo.counts("test:hash-32")).toEqual({ documents: 3, chunks: 3, withVectors: 2 });
    await expectConsistentIndex(backend);

    await repo.deleteBase(base.id);
    expect(await repo.findBase("kb")).toBeUndefined();
    expect(await repo.documents(base.id)).toEqual([]);
    expect(await repo.counts("test:hash-32")).toEqual({ documents: 1, chunks: 1, withVectors: 0 });
    expect(await repo.searchText(queryTerms("turbofan"), 10)).toEqual([]);
    const left = await repo.searchText(queryTerms("wings"), 10);
    expect(left).toHaveLength(1);
    expect((await repo.children([left[0]!.id]))[0]!.document_id).not.toBe(victim);
    const vectors: number[] = [];
    await repo.loadVectors(base.id, "test:hash-32", 32, (id) => vectors.push(id));
    expect(vectors).toEqual([]);
    expect(await repo.baseVersions([base.id])).toEqual(new Map());
    await expectConsistentIndex(backend);
  });

  it("filters documents by path (source, prefix, segment or glob) and mime (exact or glob)", async () => {
    const repo = repoOf(await open());
    const base = await repo.ensureBase("kb");
    const report = await repo.writeDocuments(
      await Promise.all(CORPUS.map(([s, t]) => prepared(base.id, s, t))),
    );
    const sourceOf = new Map(CORPUS.map(([s], i) => [report.documentIds[i]!, s] as const));
    const sources = async (filter: { path?: string; mime?: string }, kbIds = [base.id]) =>
      (await repo.filteredDocuments(kbIds, filter)).map((id) => sourceOf.get(id)).sort();
    expect(await sources({ path: "/docs" })).toEqual(["/docs/engines.md", "/docs/wings.md"]);
    expect(await sources({ path: "notes/" })).toEqual(["/notes/drag.txt", "/notes/landing.txt"]);
    expect(await sources({ path: "/cjk/tea.md" })).toEqual(["/cjk/tea.md"]);
    expect(await sources({ path: "*.txt" })).toEqual(["/notes/drag.txt", "/notes/landing.txt"]);
    expect(await sources({ path: "[dn]*/[a-e]*" })).toEqual(["/docs/engines.md", "/notes/drag.txt"]);
    expect(await sources({ path: "/docs/[^w]*" })).toEqual(["/docs/engines.md"]);
    expect(await sources({ path: "?ocs/w*" })).toEqual(["/docs/wings.md"]);
    expect(await sources({ path: "*.MD" })).toEqual([]);
    expect(await sources({ mime: "text/plain" })).toEqual(["/notes/drag.txt", "/notes/landing.txt"]);
    expect(await sources({ mime: "TEXT/*" })).toHaveLength(6);
    expect(await sources({ path: "/docs", mime: "text/plain" })).toEqual([]);
    expect(await sources({ path: "/docs" }, [base.id + 1000])).toEqual([]);
  });

  it("ranks chunks by BM25 exactly as SQLite's FTS5 does, inside the chosen bases and documents", async () => {
    const repo = repoOf(await open());
    const reference = referenceSqlite();
    const write = async (target: KnowledgeRepository) => {
      const a = await target.ensureBase("a");
      const b = await target.ensureBase("b");
      const ra = await target.writeDocuments(
        await Promise.all(CORPUS.map(([s, t]) => prepared(a.id, s, t, undefined, { childTokens: 12 }))),
      );
      await target.writeDocuments([await prepared(b.id, "/b.md", "# Drag\n\nDrag, drag and more drag.")]);
      return { a: a.id, b: b.id, docs: ra.documentIds };
    };
    const mine = await write(repo);
    const ref = await write(reference);
    const ranked = async (target: KnowledgeRepository, query: string, kbIds?: number[], docs?: number[]) => {
      const hits = await target.searchText(queryTerms(query), 20, kbIds, docs);
      const texts = new Map(
        (await target.children(hits.map((h) => h.id))).map((c) => [c.id, c.text] as const),
      );
      return hits.map((h) => ({ text: texts.get(h.id), score: h.score }));
    };
    for (const query of [
      "drag speed",
      "wings",
      "landing flaps wing",
      "喝茶",
      "新幹線で東京",
      "turbofan exhaust",
    ]) {
      const got = await ranked(repo, query);
      const want = await ranked(reference, query);
      expect(got.length, query).toBeGreaterThan(0);
      expect(got.map((h) => h.text)).toEqual(want.map((h) => h.text));
      got.forEach((h, i) => {
        expect(h.score).toBeCloseTo(want[i]!.score, 9);
      });
      for (let i = 1; i < got.length; i++) expect(got[i - 1]!.score).toBeGreaterThanOrEqual(got[i]!.score);
    }
    // Only the chosen bases, then only the chosen documents.
    const inB = await ranked(repo, "drag", [mine.b]);
    expect(inB.map((h) => h.text)).toEqual((await ranked(reference, "drag", [ref.b])).map((h) => h.text));
    expect(inB).toHaveLength(1);
    const dragDoc = mine.docs[3]!;
    const onlyDrag = await ranked(repo, "drag speed", [mine.a], [dragDoc]);
    expect(onlyDrag.length).toBeGreaterThan(0);
    expect(onlyDrag.map((h) => h.text)).toEqual(
      (await ranked(reference, "drag speed", [ref.a], [ref.docs[3]!])).map((h) => h.text),
    );
    expect(await repo.searchText(queryTerms("drag"), 20, [])).toEqual([]);
    expect(await repo.searchText(queryTerms("drag"), 20, undefined, [])).toEqual([]);
    expect(await repo.searchText(queryTerms("drag"), 0)).toEqual([]);
    expect(await repo.searchText([], 5)).toEqual([]);
    expect(await repo.searchText(queryTerms("nonexistentword"), 5)).toEqual([]);
  });

  it("scores only the first matches of a query of very common terms (the postings cap)", async () => {
    const backend = await open();
    const repo = repoOf(backend, { maxPostings: 2 });
    const base = await repo.ensureBase("kb");
    const texts = ["common", "common common", "common word", "common common common", "common again"];
    const report = await repo.writeDocuments(
      await Promise.all(texts.map((t, i) => prepared(base.id, `/${i}.txt`, t))),
    );
    const firstTwo = (
      await Promise.all(report.documentIds.slice(0, 2).map((id) => repo.childrenOf(id)))
    ).flatMap((c) => c.map((x) => x.id));
    const hits = await repo.searchText(queryTerms("common"), 10);
    expect(hits.map((h) => h.id).sort((a, b) => a - b)).toEqual(firstTwo);
    // The rarer term is kept and the common one dropped once both would pass the cap.
    const rare = await repo.searchText(queryTerms("common word"), 10);
    expect(rare).toHaveLength(1);
  });

  it("orders concurrent writers of one base and keeps the term counts right", async () => {
    const backend = await open();
    const repo = repoOf(backend);
    const base = await repo.ensureBase("kb");
    const docs = await Promise.all(CORPUS.map(([s, t]) => prepared(base.id, s, t)));
    const reports = await Promise.all(docs.map((d) => repo.writeDocuments([d])));
    const ranges = reports.map((r) => [r.before, r.after] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThanOrEqual(ranges[i - 1]![1]);
    await Promise.all(
      docs
        .slice(0, 3)
        .map(async (d) => repo.writeDocuments([await prepared(base.id, d.source, "# Same\n\nwings")])),
    );
    // Three chunks now say "wings" and nothing else; wings.md's old text is gone.
    const hits = await repo.searchText(queryTerms("wings"), 10);
    expect(hits).toHaveLength(3);
    await expectConsistentIndex(backend);
    const reference = referenceSqlite();
    const refBase = await reference.ensureBase("kb");
    for (const [s, t] of CORPUS.slice(3)) await reference.writeDocuments([await prepared(refBase.id, s, t)]);
    for (const [s] of CORPUS.slice(0, 3)) {
      await reference.writeDocuments([await prepared(refBase.id, s, "# Same\n\nwings")]);
    }
    const refHits = await reference.searchText(queryTerms("wings"), 10);
    hits.forEach((h, i) => {
      expect(h.score).toBeCloseTo(refHits[i]!.score, 9);
    });
    expect((await repo.searchText(queryTerms("drag"), 10))[0]!.score).toBeCloseTo(
      (await reference.searchText(queryTerms("drag"), 10))[0]!.score,
      9,
    );
  });

  it("stores vectors, replaces them, and loads them per model and size", async () => {
    const repo = repoOf(await open());
    const base = await repo.ensureBase("kb");
    const model = embedder(16);
    const report = await repo.writeDocuments(
      await Promise.all(CORPUS.slice(0, 2).map(([s, t]) => prepared(base.id, s, t, model))),
    );
    expect(report.addedVectors).toHaveLength(2);
    const loaded = new Map<number, Float32Array>();
    await repo.loadVectors(base.id, model.model, 16, (id, documentId, vector) => {
      expect(report.documentIds).toContain(documentId);
      loaded.set(id, vector);
    });
    expect([...loaded.keys()].sort()).toEqual(report.addedVectors.map((v) => v.id).sort());
    for (const added of report.addedVectors) expect([...loaded.get(added.id)!]).toEqual([...added.vector]);
    const none: number[] = [];
    await repo.loadVectors(base.id, model.model, 8, (id) => none.push(id));
    await repo.loadVectors(base.id, "other-model", 16, (id) => none.push(id));
    expect(none).toEqual([]);

    const docId = report.documentIds[0]!;
    const [child] = await repo.childrenOf(docId);
    const before = (await repo.baseVersions([base.id])).get(base.id)!;
    const fresh = new Float32Array(8).fill(0.5);
    await repo.setVectors(docId, base.id, "new-model", new Map([[child!.id, fresh]]));
    expect((await repo.baseVersions([base.id])).get(base.id)).toBeGreaterThan(before);
    expect((await repo.documentById(base.id, docId))?.embedding_model).toBe("new-model");
    const reloaded: Array<[number, number[]]> = [];
    await repo.loadVectors(base.id, "new-model", 8, (id, _doc, v) => reloaded.push([id, [...v]]));
    expect(reloaded).toEqual([[child!.id, [...fresh]]]);
    expect(await repo.counts("new-model")).toEqual({ documents: 2, chunks: 2, withVectors: 1 });
  });

  it("searches hybrid through the service, and a second instance sees the first one's writes", async () => {
    const backend = await open();
    const model = embedder(64);
    const a = service(repoOf(backend), { embedder: model });
    // A second service over the same database stands in for another server instance.
    const secondRepo =
      backend.kind === "sqlite"
        ? new SqliteKnowledgeRepository(secondConnection(backend.file), now)
        : new PgKnowledgeRepository(backend.db, { now });
    const b = service(secondRepo, { embedder: model });
    await a.ingest(
      "kb",
      CORPUS.slice(0, 4).map(([source, data]) => ({
        kind: "bytes" as const,
        name: source.slice(1),
        data,
        source,
      })),
    );
    const hybrid = await a.search({ query: "swept wings compressibility", topK: 3 });
    expect(hybrid.trace.mode).toBe("hybrid");
    expect(hybrid.trace.vector).toMatchObject({ model: model.model });
    expect(hybrid.passages[0]?.citation.source).toBe("/docs/wings.md");
    expect(hybrid.passages[0]).toMatchObject({ bm25Rank: 1, vectorRank: 1 });
    // B loads its vector index now, then A writes: B's next search must see the new chunk.
    const vectorOnly = { topK: 1, retrievers: "vector" as const };
    expect((await b.search({ query: "zeppelin airship hangar", ...vectorOnly })).passages).toHaveLength(1);
    await a.ingest("kb", [
      {
        kind: "bytes",
        name: "z.md",
        data: "# Zeppelin\n\nA zeppelin airship in its hangar.",
        source: "/z.md",
      },
    ]);
    const seen = await b.search({ query: "zeppelin airship hangar", ...vectorOnly });
    expect(seen.passages[0]?.citation.source).toBe("/z.md");
    expect(seen.passages[0]?.vectorRank).toBe(1);
    // And a deletion by B drops the chunk from A's loaded index.
    await a.search({ query: "zeppelin", ...vectorOnly });
    expect((await b.removeDocument("kb", "/z.md"))?.source).toBe("/z.md");
    const gone = await a.search({ query: "zeppelin airship hangar", ...vectorOnly });
    expect(gone.passages.every((p) => p.citation.source !== "/z.md")).toBe(true);

    expect(await a.status()).toMatchObject({
      mode: "hybrid",
      bases: 1,
      documents: 4,
      childChunks: 4,
      chunksWithoutVectors: 0,
    });
    // Words only: the nearest vector of a filtered document is a hit whatever it says.
    const filtered = await b.search({
      query: "drag",
      filter: { path: "notes/" },
      topK: 5,
      retrievers: "bm25",
    });
    expect(filtered.passages.map((p) => p.citation.source)).toEqual(["/notes/drag.txt"]);
    expect((await a.listDocuments("kb")).map((d) => d.source)).toEqual([
      "/docs/engines.md",
      "/docs/wings.md",
      "/notes/drag.txt",
      "/notes/landing.txt",
    ]);
    expect(kind).toBe(backend.kind);
  });

  it.skipIf(kind !== "postgres")(
    "rebuilds the term tables of copied rows (dimsum migrate) to the same ranking, idempotently",
    async () => {
      const backend = await open();
      if (backend.kind !== "postgres") return;
      const repo = repoOf(backend);
      const base = await repo.ensureBase("kb");
      const other = await repo.ensureBase("other", "pilot");
      await repo.writeDocuments(
        await Promise.all(CORPUS.map(([s, t]) => prepared(base.id, s, t, undefined, { childTokens: 12 }))),
      );
      await repo.writeDocuments([await prepared(other.id, "/o.md", "# Other\n\nDrag and wings elsewhere.")]);
      const queries = ["drag speed", "wings", "喝茶", "新幹線で東京", "landing flaps"];
      const search = () => Promise.all(queries.map((q) => repo.searchText(queryTerms(q), 20)));
      const before = await search();
      // What a copy of the SQLite rows leaves: chunks without postings, counts or lengths.
      await backend.db.run("TRUNCATE kb_chunk_terms, kb_term_df");
      await backend.db.run("UPDATE kb_child_chunks SET fts_len = 0");
      await backend.db.run("UPDATE kb_bases SET fts_rows = 0, fts_tokens = 0");
      expect(await repo.searchText(queryTerms("wings"), 20)).toEqual([]);
      const progress: Array<[number, number]> = [];
      await knowledgeTermsStep.run(backend.db, (done, total) => progress.push([done, total]));
      const chunks = (await repo.counts(undefined)).chunks;
      expect(progress.at(0)).toEqual([0, chunks]);
      expect(progress.at(-1)).toEqual([chunks, chunks]);
      const after = await search();
      after.forEach((hits, i) => {
        expect(hits.map((h) => h.id)).toEqual(before[i]!.map((h) => h.id));
        hits.forEach((h, j) => {
          expect(h.score).toBeCloseTo(before[i]![j]!.score, 9);
        });
      });
      await expectConsistentIndex(backend);
      await knowledgeTermsStep.run(backend.db, () => undefined);
      expect(await search()).toEqual(after);
      await expectConsistentIndex(backend);
    },
  );

  it("ingests through the service: unchanged files are no-ops, changed ones replaced, uploads re-embedded", async () => {
    const backend = await open();
    const first = embedder(16);
    const kb = service(repoOf(backend), { embedder: first });
    const upload = (data: string) => [{ kind: "bytes" as const, name: "notes.md", data }];
    expect(await kb.ingest("kb", upload("# Notes\n\nRudder and ailerons."))).toMatchObject({ added: 1 });
    expect(await kb.ingest("kb", upload("# Notes\n\nRudder and ailerons."))).toMatchObject({
      added: 0,
      unchanged: 1,
    });
    expect(await kb.ingest("kb", upload("# Notes\n\nElevator trim."))).toMatchObject({ updated: 1 });
    expect((await kb.search({ query: "rudder", retrievers: "bm25" })).passages).toEqual([]);
    expect((await kb.search({ query: "elevator", retrievers: "bm25" })).passages).toHaveLength(1);
    // Another model: the upload has no file to re-read, so reindex gives its stored chunks new vectors.
    const second = embedder(24);
    const again = service(repoOf(backend), { embedder: second });
    expect((await again.status()).chunksWithoutVectors).toBe(1);
    const reindexed = await again.reindex("kb");
    expect(reindexed).toMatchObject({ updated: 1, failed: 0 });
    expect(await again.status()).toMatchObject({ chunksWithoutVectors: 0, embeddingModel: second.model });
    const found = await again.search({ query: "elevator trim", retrievers: "vector" });
    expect(found.trace.vector).toMatchObject({ hits: 1, model: second.model });
    expect((await again.listDocuments("kb"))[0]?.embeddingModel).toBe(second.model);
  });

  it("keeps agents' bases apart in service search and removal", async () => {
    const kb = service(repoOf(await open()));
    await kb.ingest("team", [{ kind: "bytes", name: "t.md", data: "# Team\n\nShared runway notes." }]);
    await kb.ingest("mine", [{ kind: "bytes", name: "m.md", data: "# Mine\n\nPrivate runway notes." }], {
      agentId: "pilot",
    });
    expect((await kb.listBases()).map((b) => b.name)).toEqual(["team"]);
    expect((await kb.listBases({ agentId: "pilot" })).map((b) => [b.name, b.agentId])).toEqual([
      ["mine", "pilot"],
      ["team", undefined],
    ]);
    const forPilot = await kb.search({ query: "runway", agentId: "pilot" });
    expect(forPilot.passages.map((p) => p.citation.kb).sort()).toEqual(["mine", "team"]);
    const forOthers = await kb.search({ query: "runway" });
    expect(forOthers.passages.map((p) => p.citation.kb)).toEqual(["team"]);
    await expect(kb.search({ query: "runway", kb: "mine" })).rejects.toThrow(
      /no knowledge base named "mine"/,
    );
    expect(await kb.removeBase("mine")).toBe(false);
    expect(await kb.removeBase("mine", "pilot")).toBe(true);
    expect((await kb.getBase("team"))?.documents).toBe(1);
  });
});

it("translates SQLite GLOB patterns to anchored regular expressions", () => {
  expect(globToRegex("*.md")).toBe("^.*\\.md$");
  expect(globToRegex("/a?/[^x]*")).toBe("^/a./[^x].*$");
  expect(globToRegex("[]a]b")).toBe("^[]a]b$");
  expect(globToRegex("a[b")).toBe("^a\\[b$");
  expect(globToRegex("(x)+$")).toBe("^\\(x\\)\\+\\$$");
});
