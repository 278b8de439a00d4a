import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fuseToParents } from "../../src/knowledge/retrieval/fuse.js";
import { createEmbedder } from "../../src/memory/embedder.js";
import {
  type FakeEmbeddingsServer,
  startFakeEmbeddingsServer,
} from "../../src/testing/fake-embeddings-server.js";
import { filler, hashEmbedder, minimalPdf, newService } from "./helpers.js";

let embeddings: FakeEmbeddingsServer;
beforeAll(async () => {
  embeddings = await startFakeEmbeddingsServer({ dims: 64 });
});
afterAll(() => embeddings.close());

function httpEmbedder() {
  return createEmbedder(
    {
      provider: "openai",
      id: "embed-test",
      protocol: "openai",
      baseUrl: `${embeddings.url}/v1`,
      apiKey: "k",
      contextWindow: 8192,
    },
    { retry: { maxRetries: 0 } },
  );
}

const docs = [
  {
    kind: "bytes" as const,
    name: "wings.md",
    data: "# Wings\n\nSwept wings delay compressibility drag at high subsonic speed.",
  },
  {
    kind: "bytes" as const,
    name: "engines.md",
    data: "# Engines\n\nTurbofan engines mix bypass air with the core exhaust.",
  },
  {
    kind: "bytes" as const,
    name: "landing.txt",
    data: "Landing gear retracts into the wing root after take-off.",
  },
];

describe("fuseToParents", () => {
  it("adds reciprocal ranks (k = 60), keeps each parent once with its best child first", () => {
    const parentOf = new Map([
      [1, 10],
      [2, 10],
      [3, 11],
      [4, 12],
    ]);
    const fusion = fuseToParents([1, 2, 3], [3, 4], parentOf);
    expect(fusion.children).toBe(4);
    expect(fusion.parents).toEqual([
      { parentId: 11, fusedScore: 1 / 63 + 1 / 61, childIds: [3], bm25Rank: 3, vectorRank: 1 },
      { parentId: 10, fusedScore: 1 / 61, childIds: [1, 2], bm25Rank: 1 },
      { parentId: 12, fusedScore: 1 / 62, childIds: [4], vectorRank: 2 },
    ]);
    const k1 = fuseToParents([1], [4], parentOf, 1);
    expect(k1.parents.map((p) => p.fusedScore)).toEqual([1 / 2, 1 / 2]);
  });
});

describe("search", () => {
  it("runs on BM25 alone without an embedder, and says so", async () => {
    const { kb } = newService();
    await kb.ingest("aero", docs);
    expect(await kb.status()).toMatchObject({ mode: "bm25", bases: 1, documents: 3, childChunks: 3 });
    expect((await kb.status()).note).toContain("set DIMSUM_EMBEDDING_MODEL");
    const result = await kb.search({ query: "How do swept wings affect drag?" });
    expect(result.trace).toMatchObject({
      mode: "bm25",
      bases: ["aero"],
      rrfK: 60,
      rerank: { status: "skipped" },
    });
    expect(result.trace.vector).toBeUndefined();
    expect(result.passages[0]?.citation).toMatchObject({
      title: "Wings",
      source: "wings.md",
      section: "Wings",
    });
    expect(result.passages[0]?.bm25Rank).toBe(1);
    const vectorOnly = await kb.search({ query: "wings", retrievers: "vector" });
    expect(vectorOnly.passages).toEqual([]);
    expect(vectorOnly.trace.warnings).toEqual([
      "vector search asked for, but no embedding model is configured",
    ]);
  });

  it("cites the section of the best-matching child when one parent spans several short sections", async () => {
    const { kb } = newService();
    const handbook =
      "# Handbook\n\n## Onboarding\n\nNew staff receive a brass compass on day one.\n\n" +
      "## Payroll\n\nSalaries are paid on the last weekday of each month.";
    await kb.ingest("staff", [{ kind: "bytes", name: "handbook.md", data: handbook }]);
    expect(await kb.status()).toMatchObject({ documents: 1 });
    const payroll = await kb.search({ query: "when are salaries paid" });
    expect(payroll.passages[0]?.citation.section).toBe("Handbook › Payroll");
    // Both sections share the parent passage, so its text holds both.
    expect(payroll.passages[0]?.text).toContain("brass compass");
    const onboarding = await kb.search({ query: "brass compass" });
    expect(onboarding.passages[0]?.citation.section).toBe("Handbook › Onboarding");
  });

  it("fuses BM25 with vectors from an embeddings API, and falls back to BM25 when the API fails", async () => {
    const { kb } = newService({ embedder: httpEmbedder() });
    await kb.ingest("aero", docs);
    const before = embeddings.requests.length;
    const result = await kb.search({ query: "turbofan bypass", topK: 2 });
    expect(embeddings.requests.length).toBe(before + 1);
    expect(result.trace.mode).toBe("hybrid");
    expect(result.trace.vector).toMatchObject({ hits: 3, model: "openai:embed-test" });
    expect(result.passages).toHaveLength(2);
    expect(result.passages[0]).toMatchObject({ citation: { title: "Engines" }, bm25Rank: 1, vectorRank: 1 });
    expect(result.passages[0]!.fusedScore).toBeCloseTo(2 / 61, 10);

    embeddings.failNext({ status: 500 });
    const degraded = await kb.search({ query: "turbofan bypass" });
    expect(degraded.trace.mode).toBe("bm25");
    expect(degraded.trace.vector).toMatchObject({ error: expect.stringContaining("500") });
    expect(degraded.trace.warnings[0]).toMatch(/^vector search failed, BM25 alone served this query/);
    expect(degraded.passages[0]?.citation.title).toBe("Engines");
  });

  it("expands matching children to their parent once, listing every matched child", async () => {
    const { kb, db } = newService({ chunking: { parentTokens: 400, childTokens: 30, overlapTokens: 0 } });
    const text = [
      "# Icing",
      "Rime ice forms on leading edges in cold clouds with small droplets.",
      filler(30, "gap"),
      "Clear ice from large droplets is heavier; rime ice is brittle and white.",
      filler(30, "more"),
    ].join("\n\n");
    await kb.ingest("kb", [
      { kind: "bytes", name: "icing.md", data: text },
      {
        kind: "bytes",
        name: "other.md",
        data: "# Other\n\nNothing about frozen water here, only rime in poetry.",
      },
    ]);
    const result = await kb.search({ query: "rime ice", topK: 5 });
    const icing = result.passages.filter((p) => p.citation.title === "Icing");
    expect(icing).toHaveLength(1);
    const matched = icing[0]!.citation.matchedChunkIds;
    expect(matched.length).toBeGreaterThanOrEqual(2);
    const parents = db
      .prepare(
        `SELECT DISTINCT parent_id FROM kb_child_chunks WHERE id IN (${matched.map(Number).join(",")})`,
      )
      .pluck()
      .all();
    expect(parents).toEqual([Number(icing[0]!.citation.chunkId)]);
    expect(icing[0]!.text).toContain("Rime ice forms");
    expect(icing[0]!.text).toContain("Clear ice");
    expect(result.trace.parents).toBeLessThan(result.trace.fused);
  });

  it("finds Chinese and Japanese text by words inside unsegmented sentences", async () => {
    const { kb } = newService({ embedder: hashEmbedder() });
    await kb.ingest("cjk", [
      { kind: "bytes", name: "coffee.md", data: "# 饮品\n\n我每天早上喝一杯咖啡，下午喝绿茶。" },
      { kind: "bytes", name: "train.md", data: "# 旅行\n\n東京から大阪まで新幹線で行きました。" },
      { kind: "bytes", name: "english.md", data: "# Drinks\n\nCoffee and tea in the morning." },
    ]);
    const coffee = await kb.search({ query: "咖啡", retrievers: "bm25" });
    expect(coffee.passages.map((p) => p.citation.source)).toEqual(["coffee.md"]);
    const shinkansen = await kb.search({ query: "新幹線で大阪へ" });
    expect(shinkansen.passages[0]?.citation.source).toBe("train.md");
    expect((await kb.search({ query: "绿茶", retrievers: "bm25" })).passages[0]?.text).toContain(
      "下午喝绿茶",
    );
  });

  it("filters by path (prefix or glob) and by mime type (exact or family)", async () => {
    const { kb } = newService();
    await kb.ingest("kb", [
      { kind: "bytes", name: "a.md", data: "flaps extend for landing", source: "/repo/docs/a.md" },
      { kind: "bytes", name: "b.txt", data: "flaps retract after take-off", source: "/repo/notes/b.txt" },
      {
        kind: "bytes",
        name: "c.pdf",
        data: minimalPdf([["flaps in the pdf manual"]]),
        source: "/repo/docs/c.pdf",
      },
    ]);
    const sources = async (filter: { path?: string; mime?: string }) =>
      (await kb.search({ query: "flaps", topK: 10, filter })).passages.map((p) => p.citation.source).sort();
    expect(await sources({ path: "/repo/docs" })).toEqual(["/repo/docs/a.md", "/repo/docs/c.pdf"]);
    expect(await sources({ path: "docs/" })).toEqual(["/repo/docs/a.md", "/repo/docs/c.pdf"]);
    expect(await sources({ path: "*.txt" })).toEqual(["/repo/notes/b.txt"]);
    expect(await sources({ mime: "application/pdf" })).toEqual(["/repo/docs/c.pdf"]);
    expect(await sources({ mime: "text/*" })).toEqual(["/repo/docs/a.md", "/repo/notes/b.txt"]);
    expect(await sources({ path: "/elsewhere" })).toEqual([]);
  });

  it("cites the pages a passage comes from", async () => {
    const { kb } = newService({ chunking: { parentTokens: 60, childTokens: 30, overlapTokens: 0 } });
    // pdfjs drops text beyond the page edge, so each page is several short lines.
    const page = (topic: string) => {
      const words = `${topic} ${filler(50, topic)}`.split(" ");
      return Array.from({ length: Math.ceil(words.length / 6) }, (_, i) =>
        words.slice(i * 6, i * 6 + 6).join(" "),
      );
    };
    await kb.ingest("kb", [
      {
        kind: "bytes",
        name: "manual.pdf",
        data: minimalPdf([page("hydraulics"), page("avionics"), page("pressurisation")]),
      },
    ]);
    const result = await kb.search({ query: "avionics" });
    expect(result.passages[0]?.citation).toMatchObject({ pageStart: 2, pageEnd: 2, title: "manual.pdf" });
  });

  it("rejects an empty query and an unknown base", async () => {
    const { kb } = newService();
    await expect(kb.search({ query: "  " })).rejects.toMatchObject({ code: "tool_args" });
    await expect(kb.search({ query: "x", kb: "nope" })).rejects.toMatchObject({
      message: 'no knowledge base named "nope"',
      hint: "add documents to create it: dimsum kb add nope <files or folders>",
    });
    expect((await kb.search({ query: "anything" })).trace.warnings).toEqual(["no knowledge base to search"]);
  });
});
