/** Attached documents as the protocols take them: PDFs natively, every other file as its text. */
import type { FilePart, TextPart } from "./types.js";

export const PDF_MIME = "application/pdf";

/** Whether a file part is a PDF (sent as a document part to models that read PDFs). */
export function isPdf(part: FilePart): boolean {
  return part.mimeType === PDF_MIME;
}

/** A text file as the text part every model reads, fenced and named so the model can refer to it. */
export function fileAsText(part: FilePart): TextPart {
  const text = Buffer.from(part.data, "base64").toString("utf8");
  return { type: "text", text: fencedFile(part.name, part.mimeType, text) };
}

/** The text of a named file, fenced so its content cannot pass for the person's own words. */
export function fencedFile(name: string, mimeType: string, text: string): string {
  return `<file name="${name.replace(/"/g, "'")}" type="${mimeType}">\n${text}\n</file>`;
}

/** A data URL of base64 bytes (what OpenAI's image and file parts take). */
export function dataUrl(mimeType: string, data: string): string {
  return `data:${mimeType};base64,${data}`;
}
