/** One document from bytes to chunks ready to store: extract, chunk, and the text search indexes per child. */
import { createHash } from "node:crypto";
import { DimsumError } from "../../errors.js";
import { type ChildChunk, chunkBlocks } from "../chunking/chunker.js";
import { SECTION_SEPARATOR } from "../chunking/units.js";
import type { DetectedFormat } from "../formats/detect.js";
import { extractDocument } from "../formats/extract.js";
import type { PreparedChild, PreparedDocument } from "../store/knowledge-repository.js";
import type { ChunkingOptions } from "../types.js";

/** SHA-256 of the bytes, hex. */
export function contentHash(data: Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * The text search sees for a child: its own text, led by the document title and the headings above
 * it that its text does not already contain, so a chunk deep in "Install › Linux" still matches "install".
 */
export function indexTextOf(child: ChildChunk, title: string): string {
  const sections = child.section ? child.section.split(SECTION_SEPARATOR) : [];
  if (child.headed) sections.pop();
  const context = sections[0] === title || (child.headed && !child.section) ? sections : [title, ...sections];
  const lead = context.filter((part) => part !== "" && !child.text.startsWith(part)).join(SECTION_SEPARATOR);
  return lead === "" ? child.text : `${lead}\n${child.text}`;
}

/**
 * The index text of a stored child chunk, rebuilt from its text, section and document title (the
 * chunker's `headed` flag is not stored: a text starting with its own heading had it).
 */
export function storedIndexText(child: { text: string; section: string | null }, title: string): string {
  const section = child.section ?? undefined;
  const last = section?.split(SECTION_SEPARATOR).at(-1);
  const headed = last !== undefined && child.text.startsWith(last);
  const chunk: ChildChunk =
    section === undefined
      ? { text: child.text, tokens: 0, headed }
      : { text: child.text, tokens: 0, headed, section };
  return indexTextOf(chunk, title);
}

export interface PrepareInput {
  kbId: number;
  source: string;
  name: string;
  data: Uint8Array;
  hash: string;
  format: DetectedFormat;
  title?: string;
}

/** Extracts and chunks a document. Throws DimsumError('tool_failed') when it has no readable text. */
export async function prepareDocument(
  input: PrepareInput,
  chunking: ChunkingOptions,
  signal?: AbortSignal,
): Promise<PreparedDocument> {
  const extracted = await extractDocument(input.data, input.format.kind, input.name, signal);
  const parents = chunkBlocks(extracted.blocks, chunking);
  if (parents.length === 0) {
    throw new DimsumError(
      "tool_failed",
      `${input.name} has no text to index`,
      input.format.kind === "pdf"
        ? { hint: "it may be a scanned PDF (images only); run it through OCR first" }
        : { hint: "the file is empty or holds only markup" },
    );
  }
  const title = input.title ?? extracted.title ?? input.name;
  const doc: PreparedDocument = {
    kbId: input.kbId,
    source: input.source,
    title,
    mime: input.format.mime,
    size: input.data.byteLength,
    hash: input.hash,
    parents: parents.map((chunk) => ({
      chunk,
      children: chunk.children.map(
        (child): PreparedChild => ({ chunk: child, indexText: indexTextOf(child, title) }),
      ),
    })),
  };
  if (extracted.pages !== undefined) doc.pages = extracted.pages;
  return doc;
}
