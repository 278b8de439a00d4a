/**
 * What a person may attach, decided by the bytes (the name only tells text files apart): PNG, JPEG,
 * WebP, GIF, PDF, and UTF-8 text (Markdown, code, CSV, JSON). Everything else is refused with a
 * message that says what is accepted; every kind has its own size limit.
 */
import { DimsumError } from "../errors.js";

export type AttachmentKind = "image" | "pdf" | "text";

export interface SniffedFile {
  kind: AttachmentKind;
  mimeType: string;
}

/** Limits per message (`attachments` in the config file). */
export interface AttachmentLimits {
  imageBytes: number;
  pdfBytes: number;
  textBytes: number;
  filesPerMessage: number;
}

const MB = 1024 * 1024;

export const DEFAULT_ATTACHMENT_LIMITS: AttachmentLimits = {
  imageBytes: 10 * MB,
  pdfBytes: 20 * MB,
  textBytes: 2 * MB,
  filesPerMessage: 10,
};

const TEXT_TYPES: Record<string, string> = {
  md: "text/markdown",
  markdown: "text/markdown",
  csv: "text/csv",
  tsv: "text/tab-separated-values",
  json: "application/json",
  jsonl: "application/json",
  html: "text/html",
  htm: "text/html",
  xml: "application/xml",
  yaml: "application/yaml",
  yml: "application/yaml",
};

/** The kind and MIME type of a file from its first bytes; undefined for kinds Dimsum does not take. */
export function sniffFile(bytes: Uint8Array, name: string): SniffedFile | undefined {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) {
    return { kind: "image", mimeType: "image/png" };
  }
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { kind: "image", mimeType: "image/jpeg" };
  if (b.length >= 6 && (b.toString("latin1", 0, 6) === "GIF87a" || b.toString("latin1", 0, 6) === "GIF89a")) {
    return { kind: "image", mimeType: "image/gif" };
  }
  if (b.length >= 12 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") {
    return { kind: "image", mimeType: "image/webp" };
  }
  if (b.length >= 5 && b.toString("latin1", 0, 5) === "%PDF-")
    return { kind: "pdf", mimeType: "application/pdf" };
  if (isUtf8Text(b)) return { kind: "text", mimeType: textType(name) };
  return undefined;
}

/** Text: valid UTF-8 with no NUL bytes (binary files nearly always have some). */
function isUtf8Text(b: Buffer): boolean {
  if (b.includes(0)) return false;
  try {
    // `stream`: a head cut inside a multi-byte character is still text.
    new TextDecoder("utf-8", { fatal: true }).decode(b, { stream: true });
    return true;
  } catch {
    return false;
  }
}

function textType(name: string): string {
  const dot = name.lastIndexOf(".");
  const ext = dot < 0 ? "" : name.slice(dot + 1).toLowerCase();
  return TEXT_TYPES[ext] ?? "text/plain";
}

/** The limit of one kind, in bytes. */
export function limitOf(kind: AttachmentKind, limits: AttachmentLimits): number {
  return kind === "image" ? limits.imageBytes : kind === "pdf" ? limits.pdfBytes : limits.textBytes;
}

function megabytes(bytes: number): string {
  const mb = bytes / MB;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** Sniffs and checks one file; throws a DimsumError (`invalid` or `too_large`) that names the file and the fix. */
export function checkFile(bytes: Uint8Array, name: string, limits: AttachmentLimits): SniffedFile {
  return checkSized(bytes, bytes.byteLength, name, limits);
}

/** As checkFile, for a file of `size` bytes of which `head` are its first bytes. */
export function checkSized(
  head: Uint8Array,
  size: number,
  name: string,
  limits: AttachmentLimits,
): SniffedFile {
  const sniffed = sniffFile(head, name);
  if (!sniffed) {
    throw new DimsumError("invalid", `${name} is not a file Dimsum can attach`, {
      hint: "attach PNG, JPEG, WebP or GIF images, PDFs, or text files (Markdown, code, CSV, JSON)",
    });
  }
  const limit = limitOf(sniffed.kind, limits);
  if (size > limit) {
    const what = sniffed.kind === "image" ? "an image" : sniffed.kind === "pdf" ? "a PDF" : "a text file";
    const setting =
      sniffed.kind === "image" ? "maxImageMB" : sniffed.kind === "pdf" ? "maxPdfMB" : "maxTextMB";
    throw new DimsumError(
      "too_large",
      `${name} is ${megabytes(size)}; ${what} may be at most ${megabytes(limit)}`,
      {
        hint: `attach a smaller file, or raise attachments.${setting} in the config file`,
      },
    );
  }
  return sniffed;
}

/** Throws when a message carries more files than the limit. */
export function checkFileCount(count: number, limits: AttachmentLimits): void {
  if (count > limits.filesPerMessage) {
    throw new DimsumError(
      "too_large",
      `${count} files attached; a message may carry at most ${limits.filesPerMessage}`,
      {
        hint: "send the rest in another message, or raise attachments.maxFiles in the config file",
      },
    );
  }
}
