/** Attached files as the canonical message parts the model layer sends. */

import { open, readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { DimsumError } from "../errors.js";
import type { UserContentPart } from "../llm/types.js";
import {
  type AttachmentKind,
  type AttachmentLimits,
  checkFile,
  checkFileCount,
  checkSized,
} from "./kinds.js";

/** One file a person attached, checked: its bytes, what it is, and the name it came with. */
export interface AttachedFile {
  name: string;
  mimeType: string;
  kind: AttachmentKind;
  data: Buffer;
}

/** The file as a message part: images as images, PDFs and text files as file parts. */
export function toContentPart(file: AttachedFile): UserContentPart {
  const data = file.data.toString("base64");
  if (file.kind === "image") return { type: "image", mimeType: file.mimeType, data, name: file.name };
  return { type: "file", mimeType: file.mimeType, data, name: file.name };
}

/** The content of a user message: the text first, then the files in the order they were attached. */
export function userContent(text: string, files: readonly AttachedFile[]): string | UserContentPart[] {
  if (files.length === 0) return text;
  const parts: UserContentPart[] = [];
  if (text !== "") parts.push({ type: "text", text });
  for (const file of files) parts.push(toContentPart(file));
  return parts;
}

/** Checks bytes received under a name (upload, connector, /v1) against the kinds and limits. */
export function attachBytes(data: Buffer, name: string, limits: AttachmentLimits): AttachedFile {
  const sniffed = checkFile(data, name, limits);
  return { name, mimeType: sniffed.mimeType, kind: sniffed.kind, data };
}

/** Reads files named on a command line; every error names the file and what to do. */
export async function readAttachments(
  paths: readonly string[],
  limits: AttachmentLimits,
): Promise<AttachedFile[]> {
  checkFileCount(paths.length, limits);
  const files: AttachedFile[] = [];
  for (const path of paths) {
    const name = basename(path);
    let data: Buffer;
    try {
      const info = await stat(path);
      if (!info.isFile()) throw new Error("not a file");
      // A file far over every limit is refused from its first bytes, before it is read into memory.
      const ceiling = Math.max(limits.imageBytes, limits.pdfBytes, limits.textBytes);
      if (info.size > ceiling) checkSized(await readHead(path), info.size, name, limits);
      data = await readFile(path);
    } catch (err) {
      if (err instanceof DimsumError) throw err;
      throw new DimsumError("invalid", `cannot attach ${path}: ${(err as Error).message}`, {
        hint: "check the path given to --attach",
      });
    }
    files.push(attachBytes(data, name, limits));
  }
  return files;
}

async function readHead(path: string): Promise<Buffer> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(64);
    const { bytesRead } = await handle.read(buffer, 0, 64, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
