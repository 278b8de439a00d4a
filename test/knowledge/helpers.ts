/** Shared set-up for the knowledge base tests: temp folders and databases, services, files, tiny PDFs. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach } from "vitest";
import { KnowledgeService, type KnowledgeServiceOptions } from "../../src/knowledge/knowledge-service.js";
import type { Embedder } from "../../src/memory/types.js";
import { type Database, openDatabase } from "../../src/store/database.js";
import { hashEmbedding } from "../../src/testing/fake-embeddings-server.js";

const dirs: string[] = [];
const dbs: Database[] = [];

afterEach(() => {
  for (const db of dbs.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "dimsum-kb-"));
  dirs.push(dir);
  return dir;
}

/** Opens (and closes after the test) a new database file. */
export function openDb(file = join(tempDir(), "dimsum.db")): Database {
  const db = openDatabase(file);
  dbs.push(db);
  return db;
}

/** A knowledge service on a new database, relative paths resolved in `cwd` (a temp folder by default). */
export function newService(options: KnowledgeServiceOptions = {}, db = openDb()) {
  const cwd = options.cwd ?? tempDir();
  return { db, cwd, kb: KnowledgeService.sqlite(db, { ...options, cwd }) };
}

/** Writes files (path -> content) under `root`, creating folders; returns absolute paths by key. */
export function writeFiles(root: string, files: Record<string, string | Uint8Array>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
    out[path] = full;
  }
  return out;
}

/** An in-process embedder over `hashEmbedding`, counting calls; `fail` makes it throw. */
export function hashEmbedder(dims = 128): Embedder & { calls: number; texts: number; fail: boolean } {
  const embedder = {
    model: `test:hash-${dims}`,
    calls: 0,
    texts: 0,
    fail: false,
    async embed(texts: string[]) {
      embedder.calls++;
      embedder.texts += texts.length;
      if (embedder.fail) throw new Error("embedding service down");
      return texts.map((t) => hashEmbedding(t, dims));
    },
  };
  return embedder;
}

/** Escapes text for a PDF literal string. */
function pdfString(text: string): string {
  return text.replace(/[\\()]/g, (c) => `\\${c}`);
}

/**
 * A minimal valid PDF written by hand: one page per entry, each page's lines drawn top-down with
 * Helvetica (Tj per line, T* between lines), a cross-reference table with exact byte offsets, and an
 * optional /Title in the document information dictionary.
 */
export function minimalPdf(pages: string[][], title?: string): Buffer {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  objects.push("<< /Type /Catalog /Pages 2 0 R >>");
  objects.push(
    `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(" ")}] /Count ${pages.length} >>`,
  );
  objects.push("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  pages.forEach((lines, i) => {
    const body = lines.map((line) => `(${pdfString(line)}) Tj T*`).join(" ");
    const content = `BT /F1 12 Tf 14 TL 72 720 Td ${body} ET`;
    objects.push(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R >>`,
    );
    objects.push(`<< /Length ${Buffer.byteLength(content, "latin1")} >>\nstream\n${content}\nendstream`);
  });
  let infoRef = "";
  if (title !== undefined) {
    objects.push(`<< /Title (${pdfString(title)}) >>`);
    infoRef = ` /Info ${objects.length} 0 R`;
  }
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((object, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) out += `${String(offset).padStart(10, "0")} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${infoRef} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

/** Words enough to fill about `tokens` estimated tokens (four characters each), numbered so chunks differ. */
export function filler(tokens: number, word = "lorem"): string {
  const words: string[] = [];
  for (let i = 0; words.join(" ").length < tokens * 4; i++) words.push(`${word}${i}`);
  return words.join(" ");
}
