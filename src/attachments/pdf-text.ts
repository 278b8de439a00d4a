/**
 * PDF text extraction with pdfjs-dist (text only: no canvas, no fonts, no eval). pdfjs is large, so
 * it is imported on first use; a CLI that ingests no PDF never loads it. Lines are rebuilt from the
 * positioned text items, paragraphs from vertical gaps, and every block keeps its page number.
 */
import { DimsumError } from "../errors.js";
import { importExternal } from "../import-external.js";
import type { Block, ExtractedDocument } from "./extracted-document.js";

interface TextItem {
  str: string;
  hasEOL?: boolean;
  transform?: number[];
  height?: number;
}

interface PdfPage {
  getTextContent(): Promise<{ items: Array<TextItem | { type: string }> }>;
  cleanup(): unknown;
}

interface PdfDocument {
  numPages: number;
  getPage(n: number): Promise<PdfPage>;
  getMetadata(): Promise<{ info?: unknown }>;
  destroy(): Promise<void>;
}

interface PdfJs {
  getDocument(params: Record<string, unknown>): { promise: Promise<PdfDocument>; destroy(): Promise<void> };
}

let pdfjs: Promise<PdfJs> | undefined;

function loadPdfJs(): Promise<PdfJs> {
  pdfjs ??= importExternal("pdfjs-dist/legacy/build/pdf.mjs").then((m) => m as PdfJs);
  return pdfjs;
}

/** The text of one page with line breaks where lines end and blank lines where paragraphs do. */
function pageText(items: ReadonlyArray<TextItem | { type: string }>): string {
  let out = "";
  let lastY: number | undefined;
  let lastHeight = 0;
  for (const raw of items) {
    if (!("str" in raw)) continue;
    const y = raw.transform?.[5];
    const height = Math.abs(raw.height ?? raw.transform?.[3] ?? 0);
    if (y !== undefined && lastY !== undefined && out !== "" && !out.endsWith("\n")) {
      // A new line that was not marked as one: text moved down (or up: columns).
      if (Math.abs(lastY - y) > Math.max(1, lastHeight * 0.5)) out += "\n";
    }
    if (y !== undefined && lastY !== undefined && out.endsWith("\n") && !out.endsWith("\n\n")) {
      // A gap well over one line height between lines starts a new paragraph.
      if (lastY - y > Math.max(lastHeight, height) * 1.8) out += "\n";
    }
    out += raw.str;
    if (raw.hasEOL) out += "\n";
    if (y !== undefined && raw.str.trim() !== "") {
      lastY = y;
      lastHeight = height || lastHeight;
    }
  }
  return out;
}

/** Paragraphs of a page's text, hard line wraps and end-of-line hyphens undone. */
function paragraphs(text: string): string[] {
  return text
    .split(/\n[ \t]*\n/)
    .map((p) =>
      p
        .replace(/(\p{L})-\n(\p{Ll})/gu, "$1$2")
        .replace(/\s*\n\s*/g, " ")
        .replace(/[ \t]+/g, " ")
        .trim(),
    )
    .filter((p) => p !== "");
}

function pdfError(name: string, err: unknown): DimsumError {
  const kind = err instanceof Error ? err.name : "";
  const detail = err instanceof Error ? err.message : String(err);
  if (kind === "PasswordException") {
    return new DimsumError("tool_failed", `${name} is an encrypted PDF and cannot be read`, {
      hint: "save an unencrypted copy and add that",
      cause: err,
    });
  }
  return new DimsumError("tool_failed", `${name} is not a readable PDF (${detail})`, {
    hint: "the file may be damaged or not a PDF; open it in a PDF viewer and export it again",
    cause: err,
  });
}

/** Extracts the text of a PDF page by page. Throws DimsumError('tool_failed') for a corrupt file. */
export async function parsePdf(
  data: Uint8Array,
  name: string,
  signal?: AbortSignal,
): Promise<ExtractedDocument> {
  const lib = await loadPdfJs();
  // pdfjs takes ownership of (detaches) the buffer it is given, so it gets a copy.
  const task = lib.getDocument({
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    stopAtErrors: false,
    verbosity: 0,
  });
  let doc: PdfDocument;
  try {
    doc = await task.promise;
  } catch (err) {
    await task.destroy().catch(() => {});
    throw pdfError(name, err);
  }
  try {
    const blocks: Block[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      if (signal?.aborted) throw new DimsumError("aborted", "Ingestion was cancelled.");
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      for (const text of paragraphs(pageText(content.items))) blocks.push({ kind: "text", text, page: n });
      page.cleanup();
    }
    const info = (await doc.getMetadata().catch(() => ({ info: undefined }))).info;
    const rawTitle = (info as { Title?: unknown } | undefined)?.Title;
    const title = typeof rawTitle === "string" ? rawTitle.trim() : "";
    return title !== "" ? { title, blocks, pages: doc.numPages } : { blocks, pages: doc.numPages };
  } catch (err) {
    if (err instanceof DimsumError) throw err;
    throw pdfError(name, err);
  } finally {
    await doc.destroy().catch(() => {});
  }
}
