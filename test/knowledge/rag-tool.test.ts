import { describe, expect, it } from "vitest";
import { createRagTool, formatCitation } from "../../src/knowledge/rag-tool.js";
import type { Passage, RetrievalTrace } from "../../src/knowledge/types.js";
import { ToolRegistry } from "../../src/tools/registry.js";
import type { ToolContext } from "../../src/tools/types.js";
import { testToolContext } from "../support/tool-context.js";
import { filler, minimalPdf, newService } from "./helpers.js";

function ctx(): ToolContext {
  return {
    ...testToolContext({ runId: "run-1" }),
  };
}

async function call(registry: ToolRegistry, args: Record<string, unknown>) {
  const prepared = registry.prepareCall("rag_query", JSON.stringify(args));
  if (!prepared.ok) return { content: prepared.error, isError: true, data: undefined };
  return registry.execute(prepared, ctx());
}

async function setUp() {
  const { kb } = newService({ chunking: { parentTokens: 80, childTokens: 40, overlapTokens: 0 } });
  await kb.ingest("manuals", [
    {
      kind: "bytes",
      name: "hydraulics.pdf",
      data: minimalPdf(
        [
          ["Hydraulic pumps", "feed the brakes."],
          ["Accumulators store", "hydraulic pressure."],
        ],
        "Hydraulics Manual",
      ),
      source: "/manuals/hydraulics.pdf",
    },
    {
      kind: "bytes",
      name: "guide.md",
      data: `# Guide\n\n## Brakes\n\nCarbon brakes wear less when warm.\n\n## Tyres\n\n${filler(60, "tyre")}`,
      source: "/manuals/guide.md",
    },
  ]);
  await kb.ingest("other", [
    { kind: "bytes", name: "x.txt", data: "brakes in the other base", source: "/other/x.txt" },
  ]);
  return kb;
}

describe("rag_query", () => {
  it("returns passages with citations (title, path, page or section, chunk id) and the trace as data", async () => {
    const kb = await setUp();
    const registry = new ToolRegistry([createRagTool(kb)]);
    expect(registry.schemas()[0]?.parameters).toMatchObject({
      properties: { query: { type: "string" }, topK: { type: "integer", maximum: 10 } },
      required: ["query"],
    });
    const result = await call(registry, { query: "hydraulic brakes", topK: 3, kb: "manuals" });
    expect(result.isError).toBeFalsy();
    const data = result.data as { passages: Passage[]; trace: RetrievalTrace };
    expect(data.trace.mode).toBe("bm25");
    const pdf = data.passages.find((p) => p.citation.title === "Hydraulics Manual")!;
    const guide = data.passages.find((p) => p.citation.title === "Guide")!;
    const text = String(result.content);
    expect(text).toContain(
      `Hydraulics Manual — /manuals/hydraulics.pdf, pp. 1-2, chunk ${pdf.citation.chunkId}\nHydraulic pumps feed the brakes.`,
    );
    expect(text).toContain(
      `Guide — /manuals/guide.md, § Guide › Brakes, chunk ${guide.citation.chunkId}\nGuide\n\nBrakes`,
    );
    expect(text).toMatch(/^\[1\] /);
    expect(text).not.toContain("other base");
  });

  it("searches every visible base by default, and only the allowed ones when restricted", async () => {
    const kb = await setUp();
    const all = await call(new ToolRegistry([createRagTool(kb)]), { query: "brakes" });
    expect(String(all.content)).toContain("/other/x.txt");
    const restricted = new ToolRegistry([createRagTool(kb, { bases: ["manuals"], maxTopK: 2 })]);
    const limited = await call(restricted, { query: "brakes" });
    expect(String(limited.content)).not.toContain("/other/x.txt");
    expect((limited.data as { passages: Passage[] }).passages.length).toBeLessThanOrEqual(2);
    expect(await call(restricted, { query: "brakes", kb: "other" })).toMatchObject({
      isError: true,
      content: 'Knowledge base "other" is not available here; available: manuals.',
    });
    const tooMany = await call(restricted, { query: "brakes", topK: 5 });
    expect(tooMany.isError).toBe(true);
    expect(String(tooMany.content)).toContain("topK");
  });

  it("filters by path and mime, says when nothing matches, and reports errors as results", async () => {
    const kb = await setUp();
    const registry = new ToolRegistry([createRagTool(kb)]);
    const pdfOnly = await call(registry, { query: "brakes", filter: { mime: "application/pdf" } });
    expect((pdfOnly.data as { passages: Passage[] }).passages.map((p) => p.citation.source)).toEqual([
      "/manuals/hydraulics.pdf",
    ]);
    const none = await call(registry, { query: "submarine periscope" });
    expect(none).toMatchObject({
      content: 'No passage in the knowledge base matches "submarine periscope".',
    });
    const unknown = await call(registry, { query: "brakes", kb: "nope" });
    expect(unknown).toMatchObject({
      isError: true,
      content: expect.stringContaining('no knowledge base named "nope"'),
    });
  });

  it("formats citations with single pages, page ranges and sections", () => {
    const base = {
      kb: "k",
      documentId: "1",
      title: "T",
      source: "/s",
      mime: "text/plain",
      chunkId: "7",
      matchedChunkIds: [],
    };
    expect(formatCitation(base)).toBe("T — /s, chunk 7");
    expect(formatCitation({ ...base, pageStart: 3, pageEnd: 3, section: "A › B" })).toBe(
      "T — /s, p. 3, § A › B, chunk 7",
    );
    expect(formatCitation({ ...base, pageStart: 3, pageEnd: 5 })).toBe("T — /s, pp. 3-5, chunk 7");
  });
});
