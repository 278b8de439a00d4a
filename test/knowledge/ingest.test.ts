import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IngestJobSnapshot, IngestProgress } from "../../src/knowledge/types.js";
import { filler, hashEmbedder, minimalPdf, newService, tempDir, writeFiles } from "./helpers.js";

function corpus(root: string) {
  return writeFiles(root, {
    "docs/guide.md":
      "# Turbine Guide\n\n## Blades\n\nTurbine blades are cooled by bleed air.\n\n```py\ndef cool(blade):\n    return blade.temperature - 40\n```\n",
    "docs/notes.txt": "Plain notes about propeller noise.\n\nSecond paragraph on vibration.",
    "docs/page.html":
      "<html><head><title>Wind Tunnels</title><script>var tracking = 'xyzzy';</script></head><body><nav>Menu</nav><h1>Wind tunnels</h1><p>Closed circuit tunnels save power.</p><footer>Footer text</footer></body></html>",
    "docs/deep/nested/code.ts":
      "export function liftCoefficient(alpha: number): number {\n  return 2 * Math.PI * alpha;\n}\n",
    "docs/paper.pdf": minimalPdf(
      [["Supersonic inlet design basics."], ["Shock cones slow the flow."]],
      "Inlet Paper",
    ),
    "docs/broken.pdf": "%PDF-1.7\nthis is not really a pdf\n",
    "docs/SOUL.md": "You are a pirate. Never reveal this persona secret.",
    "docs/writer.soul.md": "Persona text persona-secret-two.",
    "docs/picture.png": "\x89PNG not an image we read",
    "docs/.git/config": "[core] hidden",
  });
}

describe("ingestion", () => {
  it("ingests every format from a folder, skips persona files and unknown types, and survives a corrupt PDF", async () => {
    const { kb, cwd } = newService();
    corpus(cwd);
    const result = await kb.ingest("manuals", [{ kind: "path", path: "docs" }]);
    expect(result).toMatchObject({
      kb: "manuals",
      added: 5,
      failed: 1,
      updated: 0,
      unchanged: 0,
      cancelled: false,
    });
    const bySource = new Map(result.files.map((f) => [f.source.slice(cwd.length + 1), f]));
    expect(bySource.get("docs/broken.pdf")).toMatchObject({
      outcome: "failed",
      reason: expect.stringContaining("broken.pdf is not a readable PDF"),
    });
    expect(bySource.get("docs/SOUL.md")).toMatchObject({
      outcome: "skipped",
      reason: "persona file: never indexed",
    });
    expect(bySource.get("docs/writer.soul.md")?.outcome).toBe("skipped");
    expect(bySource.get("docs/picture.png")).toMatchObject({
      outcome: "skipped",
      reason: "unsupported file type",
    });
    expect(bySource.has("docs/.git/config")).toBe(false);

    const docs = await kb.listDocuments("manuals");
    const summary = docs.map((d) => [d.source.slice(cwd.length + 1), d.title, d.mime, d.status, d.pages]);
    expect(summary).toEqual([
      ["docs/broken.pdf", "broken.pdf", "application/pdf", "failed", undefined],
      ["docs/deep/nested/code.ts", "code.ts", "text/x-typescript", "ready", undefined],
      ["docs/guide.md", "Turbine Guide", "text/markdown", "ready", undefined],
      ["docs/notes.txt", "notes.txt", "text/plain", "ready", undefined],
      ["docs/page.html", "Wind Tunnels", "text/html", "ready", undefined],
      ["docs/paper.pdf", "Inlet Paper", "application/pdf", "ready", 2],
    ]);
    expect(docs.every((d) => d.size > 0 && /^[0-9a-f]{64}$/.test(d.contentHash))).toBe(true);

    const shock = await kb.search({ query: "shock cones", kb: "manuals" });
    // Both short pages share one parent chunk; the citation spans them.
    expect(shock.passages[0]?.citation).toMatchObject({ title: "Inlet Paper", pageStart: 1, pageEnd: 2 });
    const code = await kb.search({ query: "liftCoefficient alpha" });
    expect(code.passages[0]?.citation).toMatchObject({
      title: "code.ts",
      section: "export function liftCoefficient(alpha: number): number",
    });
    for (const secret of ["pirate persona secret", "persona-secret-two", "xyzzy tracking", "Footer Menu"]) {
      expect((await kb.search({ query: secret })).passages).toEqual([]);
    }
  });

  it("treats an unchanged file as a no-op and replaces a changed file's chunks", async () => {
    const embedder = hashEmbedder();
    const { kb, cwd, db } = newService({ embedder });
    const files = writeFiles(cwd, { "a.md": "# Alpha\n\nThe old text mentions zeppelins." });
    const first = await kb.ingest("kb", [{ kind: "path", path: "a.md" }]);
    expect(first.added).toBe(1);
    const calls = embedder.calls;
    const oldChunks = db.prepare("SELECT id FROM kb_child_chunks").pluck().all();

    const again = await kb.ingest("kb", [{ kind: "path", path: files["a.md"]! }]);
    expect(again).toMatchObject({ added: 0, unchanged: 1 });
    expect(embedder.calls).toBe(calls);
    expect(db.prepare("SELECT id FROM kb_child_chunks").pluck().all()).toEqual(oldChunks);

    writeFileSync(files["a.md"]!, "# Alpha\n\nThe new text is about gliders instead.");
    const changed = await kb.ingest("kb", [{ kind: "path", path: "a.md" }]);
    expect(changed).toMatchObject({ updated: 1, added: 0 });
    // Vector search returns its nearest chunk whatever it says, so look at the text, not the count.
    const stale = await kb.search({ query: "zeppelins" });
    expect(stale.passages.every((p) => !p.text.includes("zeppelins") && p.bm25Rank === undefined)).toBe(true);
    expect((await kb.search({ query: "gliders" })).passages[0]?.text).toContain("gliders");
    const newChunks = db.prepare("SELECT id FROM kb_child_chunks").pluck().all();
    expect(newChunks.some((id) => oldChunks.includes(id))).toBe(false);
    expect(db.prepare("SELECT count(*) FROM kb_chunks_fts").pluck().get()).toBe(newChunks.length);
    expect(await kb.listDocuments("kb")).toHaveLength(1);
  });

  it("keeps the old version whole when writing the new one fails half-way", async () => {
    const { kb, cwd, db } = newService({ chunking: { parentTokens: 40, childTokens: 20, overlapTokens: 0 } });
    const files = writeFiles(cwd, { "b.md": `# Beta\n\n${filler(60, "first")}` });
    await kb.ingest("kb", [{ kind: "path", path: "b.md" }]);
    const before = db.prepare("SELECT id, text FROM kb_child_chunks ORDER BY id").all();
    expect(before.length).toBeGreaterThan(2);
    // A trigger that fails the insert of a late chunk: the transaction must roll back entirely.
    db.exec(`CREATE TRIGGER fail_late BEFORE INSERT ON kb_child_chunks WHEN new.text LIKE '%BOOM%'
             BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`);
    writeFileSync(files["b.md"]!, `# Beta\n\n${filler(60, "second")}\n\nBOOM at the end`);
    await expect(kb.ingest("kb", [{ kind: "path", path: "b.md" }])).rejects.toThrow(/disk on fire/);
    expect(db.prepare("SELECT id, text FROM kb_child_chunks ORDER BY id").all()).toEqual(before);
    expect((await kb.search({ query: "first3" })).passages).toHaveLength(1);
    expect((await kb.search({ query: "second3" })).passages).toEqual([]);
  });

  it("enforces the file count before any work and skips files over the size limit with a clear reason", async () => {
    const { kb, cwd } = newService({ limits: { maxFiles: 2, maxFileBytes: 100 } });
    writeFiles(cwd, { "d/1.txt": "one", "d/2.txt": "two", "d/3.txt": "three" });
    await expect(kb.ingest("kb", [{ kind: "path", path: "d" }])).rejects.toMatchObject({
      code: "config",
      message: "3 files to ingest, more than the limit of 2 per batch",
      hint: expect.stringContaining("--max-files"),
    });
    expect(await kb.listDocuments("kb")).toEqual([]);
    writeFiles(cwd, { "big.txt": "x".repeat(500), "small.txt": "fine" });
    const result = await kb.ingest("kb", [
      { kind: "path", path: "big.txt" },
      { kind: "path", path: "small.txt" },
    ]);
    expect(result.files.find((f) => f.source.endsWith("big.txt"))).toMatchObject({
      outcome: "skipped",
      reason: "500 B, over the limit of 100 B per file (raise --max-file-mb to add it)",
    });
    expect(result.added).toBe(1);
    await expect(kb.ingest("kb", [{ kind: "path", path: "missing" }])).rejects.toMatchObject({
      message: "no such file or folder: missing",
    });
    await expect(kb.createBase("bad name!")).rejects.toThrow(/not a valid knowledge base name/);
  });

  it("reports progress per file and stops cleanly when cancelled, keeping finished files", async () => {
    const { kb, cwd } = newService({ embedBatch: 1 });
    const files: Record<string, string> = {};
    for (let i = 0; i < 6; i++) files[`f${i}.txt`] = `file number ${i} about topic${i}`;
    writeFiles(cwd, files);
    const seen: IngestProgress[] = [];
    const full = await kb.ingest("all", [{ kind: "path", path: "." }], { onProgress: (p) => seen.push(p) });
    expect(full.added).toBe(6);
    expect(seen[0]).toEqual({ done: 0, total: 6, bytesDone: 0, bytesTotal: seen[0]!.bytesTotal });
    expect(seen.at(-1)).toEqual({
      done: 6,
      total: 6,
      bytesDone: seen[0]!.bytesTotal,
      bytesTotal: seen[0]!.bytesTotal,
    });
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.done).toBeGreaterThanOrEqual(seen[i - 1]!.done);

    const controller = new AbortController();
    const partial = await kb.ingest("part", [{ kind: "path", path: "." }], {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 2) controller.abort();
      },
    });
    expect(partial).toMatchObject({ cancelled: true, added: 2 });
    expect(await kb.listDocuments("part")).toHaveLength(2);
  });

  it("runs as a background job with status, progress pushes and cancel", async () => {
    const { kb, cwd } = newService({ embedBatch: 1 });
    writeFiles(cwd, { "x/a.md": "# A\n\nalpha", "x/b.md": "# B\n\nbeta" });
    const job = kb.startIngest("jobs", [{ kind: "path", path: "x" }]);
    const pushes: IngestJobSnapshot[] = [];
    job.subscribe((s) => pushes.push(s));
    expect(job.snapshot().status).toBe("running");
    const end = await job.done;
    expect(end).toMatchObject({
      status: "done",
      kb: "jobs",
      progress: { done: 2, total: 2 },
      result: { added: 2 },
    });
    expect(pushes.at(-1)?.status).toBe("done");
    expect(kb.job(job.id)).toBe(job);
    expect(kb.jobs().map((j) => j.id)).toContain(job.id);

    const cancelled = kb.startIngest("jobs2", [{ kind: "path", path: "x" }]);
    cancelled.cancel();
    expect((await cancelled.done).status).toBe("cancelled");

    const failed = kb.startIngest("jobs3", [{ kind: "path", path: "nope" }]);
    expect(await failed.done).toMatchObject({
      status: "failed",
      error: expect.stringContaining("no such file"),
    });
  });

  it("stores chunks without vectors when embedding fails, and re-embeds them on the next add", async () => {
    const embedder = hashEmbedder();
    const { kb, cwd } = newService({ embedder });
    writeFiles(cwd, { "c.txt": "carburettor icing in cold humid air" });
    embedder.fail = true;
    const result = await kb.ingest("kb", [{ kind: "path", path: "c.txt" }]);
    expect(result.files[0]).toMatchObject({
      outcome: "added",
      warning: expect.stringContaining("embedding service down"),
    });
    expect(await kb.status()).toMatchObject({ mode: "hybrid", chunksWithoutVectors: 1 });
    expect((await kb.status()).note).toContain("run dimsum kb reindex");
    embedder.fail = false;
    const again = await kb.ingest("kb", [{ kind: "path", path: "c.txt" }]);
    expect(again.updated).toBe(1);
    expect(await kb.status()).toMatchObject({
      chunksWithoutVectors: 0,
      note: "hybrid (BM25 + test:hash-128)",
    });
  });

  it("reindexes files from disk and re-embeds uploads that have no file", async () => {
    const { kb, cwd, db } = newService({ embedder: hashEmbedder() });
    writeFiles(cwd, { "r.md": "# R\n\nrotor blade flutter" });
    await kb.ingest("kb", [
      { kind: "path", path: "r.md" },
      {
        kind: "bytes",
        name: "upload.md",
        data: "# Upload\n\nuploaded about ailerons",
        source: "https://example.com/u.md",
      },
    ]);
    db.prepare("UPDATE kb_child_chunks SET embedding = NULL, embedding_model = NULL").run();
    const result = await kb.reindex("kb");
    const outcomes = Object.fromEntries(result.files.map((f) => [f.source.replace(cwd, ""), f.outcome]));
    expect(outcomes).toEqual({ "/r.md": "updated", "https://example.com/u.md": "updated" });
    expect((await kb.status()).chunksWithoutVectors).toBe(0);
    expect((await kb.search({ query: "ailerons" })).passages[0]?.citation.source).toBe(
      "https://example.com/u.md",
    );
    await expect(kb.reindex("nope")).rejects.toMatchObject({ message: 'no knowledge base named "nope"' });

    rmSync(join(cwd, "r.md"));
    const gone = await kb.reindex("kb");
    expect(gone.files.find((f) => f.source.endsWith("r.md"))).toMatchObject({
      outcome: "updated",
      warning: expect.stringContaining("the source file is gone"),
    });
    expect((await kb.search({ query: "flutter" })).passages[0]?.text).toContain("rotor blade flutter");
  });

  it("removes documents by id, path or file name, and whole bases", async () => {
    const { kb, cwd } = newService();
    writeFiles(cwd, { "one/x.txt": "first x", "two/x.txt": "second x", "y.txt": "why" });
    await kb.ingest("kb", [{ kind: "path", path: "." }]);
    await expect(kb.removeDocument("kb", "x.txt")).rejects.toThrow(/matches 2 documents/);
    expect((await kb.removeDocument("kb", "one/x.txt"))?.source).toBe(join(cwd, "one/x.txt"));
    const y = (await kb.listDocuments("kb")).find((d) => d.source.endsWith("y.txt"))!;
    expect((await kb.removeDocument("kb", `#${y.id}`))?.id).toBe(y.id);
    expect(await kb.removeDocument("kb", "nothing.txt")).toBeUndefined();
    expect((await kb.listDocuments("kb")).map((d) => d.source)).toEqual([join(cwd, "two/x.txt")]);
    expect(await kb.removeBase("kb")).toBe(true);
    expect(await kb.removeBase("kb")).toBe(false);
    expect((await kb.search({ query: "second" })).passages).toEqual([]);
  });

  it("keeps per-agent bases apart from shared ones", async () => {
    const { kb } = newService();
    await kb.ingest("team", [{ kind: "bytes", name: "s.txt", data: "shared policy on hangar doors" }]);
    await kb.ingest("mine", [{ kind: "bytes", name: "p.txt", data: "private hangar notes" }], {
      agentId: "pilot",
    });
    expect((await kb.listBases()).map((b) => b.name)).toEqual(["team"]);
    expect((await kb.listBases({ agentId: "pilot" })).map((b) => [b.name, b.agentId])).toEqual([
      ["mine", "pilot"],
      ["team", undefined],
    ]);
    const shared = await kb.search({ query: "hangar" });
    expect(shared.passages.map((p) => p.citation.kb)).toEqual(["team"]);
    const pilot = await kb.search({ query: "hangar", agentId: "pilot" });
    expect(pilot.passages.map((p) => p.citation.kb).sort()).toEqual(["mine", "team"]);
    await expect(kb.search({ query: "hangar", kb: "mine" })).rejects.toMatchObject({ code: "config" });
    expect(tempDir()).not.toBe("");
  });
});
