/**
 * What a person may attach, decided by the bytes (the name only tells text files apart): the shared
 * rules of file-rules.ts, with each refusal thrown as a DimsumError that names the file and the fix.
 */
import { DimsumError } from "../errors.js";
import {
  type AttachmentLimits,
  type AttachmentProblem,
  emptyFile,
  oversizeFile,
  type SniffedFile,
  sniffFile,
  tooManyFiles,
  unsupportedFile,
} from "./file-rules.js";

export {
  type AttachmentKind,
  type AttachmentLimits,
  cleanFileName,
  DEFAULT_ATTACHMENT_LIMITS,
  limitOf,
  type SniffedFile,
  sniffFile,
} from "./file-rules.js";

function thrown(problem: AttachmentProblem): DimsumError {
  return new DimsumError(problem.code, problem.message, { hint: problem.hint });
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
  if (size === 0) throw thrown(emptyFile(name));
  const sniffed = sniffFile(head, name);
  if (!sniffed) throw thrown(unsupportedFile(name));
  const over = oversizeFile(name, sniffed.kind, size, limits);
  if (over) throw thrown(over);
  return sniffed;
}

/** Throws when a message carries more files than the limit. */
export function checkFileCount(count: number, limits: AttachmentLimits): void {
  const over = tooManyFiles(count, limits);
  if (over) throw thrown(over);
}
