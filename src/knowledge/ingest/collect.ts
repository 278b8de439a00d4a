/**
 * Expands what the user named (files, folders, in-memory uploads) into the list of documents to
 * ingest: folders recursively (hidden entries, node_modules and symlinked folders left out), persona
 * files and unknown types skipped with a reason, duplicates dropped, and the batch limit enforced
 * before any work starts.
 */
import type { Dirent } from "node:fs";
import { lstat, readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { DimsumError } from "../../errors.js";
import { type DetectedFormat, formatOf, formatOfMime, isPersonaFile } from "../formats/detect.js";
import type { IngestFileResult, IngestSource } from "../types.js";

export const DEFAULT_MAX_FILES = 1000;
export const DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024;

/** One document to ingest. `format` is undefined for a named file of unknown type (sniffed later). */
export interface FileTask {
  /** Identity in the base: absolute path, or the upload's source/name. */
  source: string;
  name: string;
  size: number;
  format: DetectedFormat | undefined;
  path?: string;
  data?: Uint8Array;
  title?: string;
}

export interface Collected {
  tasks: FileTask[];
  skipped: IngestFileResult[];
}

const SKIPPED_DIRS = new Set(["node_modules", "__pycache__"]);

/** "2.5 MB", for messages. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

async function walk(dir: string, out: string[], signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return;
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    throw new DimsumError("config", `cannot read the folder ${dir}: ${(err as Error).message}`, {
      hint: "check the path and its permissions",
      cause: err,
    });
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out, signal);
    // Symlinked files are followed; symlinked folders are not, so a loop cannot trap the walk.
    else if (entry.isFile() || (entry.isSymbolicLink() && (await stat(path).catch(() => null))?.isFile())) {
      out.push(path);
    }
  }
}

/** Resolves sources into file tasks; throws DimsumError('config') for a missing path or too many files. */
export async function collectSources(
  sources: readonly IngestSource[],
  options: { cwd?: string; maxFiles?: number; signal?: AbortSignal } = {},
): Promise<Collected> {
  const tasks: FileTask[] = [];
  const skipped: IngestFileResult[] = [];
  const seen = new Set<string>();
  const add = (task: FileTask) => {
    if (seen.has(task.source)) return;
    seen.add(task.source);
    tasks.push(task);
  };
  for (const source of sources) {
    if (source.kind === "bytes") {
      const data = typeof source.data === "string" ? new TextEncoder().encode(source.data) : source.data;
      const id = source.source ?? source.name;
      if (isPersonaFile(source.name)) {
        skipped.push({ source: id, outcome: "skipped", reason: "persona file: never indexed" });
        continue;
      }
      const task: FileTask = {
        source: id,
        name: source.name,
        size: data.byteLength,
        data,
        format: formatOfMime(source.mime, source.name),
      };
      if (source.title) task.title = source.title;
      add(task);
      continue;
    }
    const path = resolve(options.cwd ?? process.cwd(), source.path);
    const info = await lstat(path).catch(() => null);
    if (!info) {
      throw new DimsumError("config", `no such file or folder: ${source.path}`, { hint: "check the path" });
    }
    const explicit = !info.isDirectory();
    const files: string[] = [];
    if (info.isDirectory()) await walk(path, files, options.signal);
    else files.push(path);
    for (const file of files) {
      if (isPersonaFile(file)) {
        skipped.push({ source: file, outcome: "skipped", reason: "persona file: never indexed" });
        continue;
      }
      const format = formatOf(file);
      if (!format && !explicit) {
        skipped.push({ source: file, outcome: "skipped", reason: "unsupported file type" });
        continue;
      }
      const size = (await stat(file).catch(() => null))?.size ?? 0;
      add({ source: file, name: basename(file), size, path: file, format });
    }
  }
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  if (tasks.length > maxFiles) {
    throw new DimsumError(
      "config",
      `${tasks.length} files to ingest, more than the limit of ${maxFiles} per batch`,
      { hint: "add fewer files or folders at a time, or raise the limit (--max-files)" },
    );
  }
  return { tasks, skipped };
}
