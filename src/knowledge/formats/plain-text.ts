/** Plain text into paragraphs: blank lines separate them; nothing else is structure. */
import type { ExtractedDocument } from "../../attachments/extracted-document.js";

/** Splits text at blank lines into text blocks. */
export function parsePlainText(source: string): ExtractedDocument {
  const blocks = source
    .replace(/^\uFEFF/, "")
    .split(/\r?\n[ \t]*\r?\n/)
    .map((p) => p.trim())
    .filter((p) => p !== "")
    .map((text) => ({ kind: "text" as const, text }));
  return { blocks };
}
