/**
 * What a person may attach, as pure rules the server and the web composer share: the kind of a file
 * from its first bytes (PNG, JPEG, WebP, GIF, PDF, UTF-8 text), the limits per kind and per message,
 * and the words of each refusal. No Node APIs, so the browser runs the same checks before uploading.
 */

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

/** A refusal: its stable code, what happened, and the fix. */
export interface AttachmentProblem {
  code: "invalid" | "too_large";
  message: string;
  hint: string;
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

function latin1(b: Uint8Array, start: number, end: number): string {
  return String.fromCharCode(...b.subarray(start, end));
}

/** The kind and MIME type of a file from its first bytes; undefined for kinds Dimsum does not take. */
export function sniffFile(b: Uint8Array, name: string): SniffedFile | undefined {
  if (b.length >= 8 && latin1(b, 0, 8) === "\x89PNG\r\n\x1a\n")
    return { kind: "image", mimeType: "image/png" };
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff)
    return { kind: "image", mimeType: "image/jpeg" };
  if (b.length >= 6 && (latin1(b, 0, 6) === "GIF87a" || latin1(b, 0, 6) === "GIF89a")) {
    return { kind: "image", mimeType: "image/gif" };
  }
  if (b.length >= 12 && latin1(b, 0, 4) === "RIFF" && latin1(b, 8, 12) === "WEBP") {
    return { kind: "image", mimeType: "image/webp" };
  }
  if (b.length >= 5 && latin1(b, 0, 5) === "%PDF-") return { kind: "pdf", mimeType: "application/pdf" };
  if (isUtf8Text(b)) return { kind: "text", mimeType: textType(name) };
  return undefined;
}

/** Text: valid UTF-8 with no NUL bytes (binary files nearly always have some). */
function isUtf8Text(b: Uint8Array): boolean {
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

/** "3 MB", "2.5 MB". */
export function megabytes(bytes: number): string {
  const mb = bytes / MB;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** Why an empty file is refused: there is nothing to read (and no bytes to tell its kind). */
export function emptyFile(name: string): AttachmentProblem {
  return {
    code: "invalid",
    message: `${name} is empty (0 bytes)`,
    hint: "attach the file once it has content",
  };
}

// Controls that reorder how a name is shown (U+202E makes "txt.exe" read "exe.txt") or hide in it.
const HIDDEN_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/**
 * A file name fit to show and to send back in a header: no folders, no control characters, no
 * bidirectional controls that would make it read as another extension; "file" when nothing is left.
 */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  const clean = Array.from(base.replace(HIDDEN_CONTROLS, ""))
    .filter((ch) => ch !== '"' && (ch.codePointAt(0) ?? 0) >= 0x20 && ch !== "\u007f")
    .join("")
    .trim()
    .slice(0, 200);
  return clean === "" ? "file" : clean;
}

/** Why a file of this kind is refused: none Dimsum takes. */
export function unsupportedFile(name: string): AttachmentProblem {
  return {
    code: "invalid",
    message: `${name} is not a file Dimsum can attach`,
    hint: "attach PNG, JPEG, WebP or GIF images, PDFs, or text files (Markdown, code, CSV, JSON)",
  };
}

/** Why a file is refused for its size, or undefined when it is within its kind's limit. */
export function oversizeFile(
  name: string,
  kind: AttachmentKind,
  size: number,
  limits: AttachmentLimits,
): AttachmentProblem | undefined {
  const limit = limitOf(kind, limits);
  if (size <= limit) return undefined;
  const what = kind === "image" ? "an image" : kind === "pdf" ? "a PDF" : "a text file";
  const setting = kind === "image" ? "maxImageMB" : kind === "pdf" ? "maxPdfMB" : "maxTextMB";
  return {
    code: "too_large",
    message: `${name} is ${megabytes(size)}; ${what} may be at most ${megabytes(limit)}`,
    hint: `attach a smaller file, or raise attachments.${setting} in the config file`,
  };
}

/** Why a message carries too many files, or undefined when the count is within the limit. */
export function tooManyFiles(count: number, limits: AttachmentLimits): AttachmentProblem | undefined {
  if (count <= limits.filesPerMessage) return undefined;
  return {
    code: "too_large",
    message: `${count} files attached; a message may carry at most ${limits.filesPerMessage}`,
    hint: "send the rest in another message, or raise attachments.maxFiles in the config file",
  };
}

/** A refusal in one line, as the API answers it: what happened, then the fix in parentheses. */
export function problemLine(problem: AttachmentProblem): string {
  return `${problem.message} (${problem.hint})`;
}
