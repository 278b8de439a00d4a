/** File tools confined to the workspace: read_file, write_file, edit_file and list_directory. */
import { randomBytes } from "node:crypto";
import type { Dirent, Stats } from "node:fs";
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  readFile,
  readlink,
  rename,
  stat,
  unlink,
  writeFile,
} from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import * as z from "zod";
import { defineTool, type ToolContext, type ZodTool } from "../types.js";
import { errnoCode, errorResult, toolFailure } from "./tool-error.js";
import { displayPath, resolveInWorkspace } from "./workspace-path.js";

/** Files larger than this are refused by read_file and edit_file. */
export const MAX_FILE_BYTES = 5 * 1024 * 1024;
// Minified files can put a whole bundle on one line; cut lines so one line cannot flood the context.
const MAX_LINE_CHARS = 2000;
const SKIPPED_DIRS = new Set(["node_modules", ".git"]);

/** Reads a text file from the workspace, refusing folders, huge and binary files. */
async function readTextFile(ctx: ToolContext, userPath: string): Promise<{ path: string; text: string }> {
  const path = await resolveInWorkspace(ctx.workspace, userPath);
  const info = await statOrFail(path, userPath);
  if (info.isDirectory()) {
    throw toolFailure(
      `${userPath} is a directory, not a file.`,
      "use list_directory to see what it contains",
    );
  }
  if (info.size > MAX_FILE_BYTES) {
    throw toolFailure(
      `${userPath} is ${formatSize(info.size)}, over the ${formatSize(MAX_FILE_BYTES)} limit for this tool.`,
      "use execute_command with head, tail, sed -n or grep to read parts of it",
    );
  }
  const bytes = await readFile(path, { signal: ctx.signal });
  if (bytes.includes(0)) {
    throw toolFailure(
      `${userPath} looks like a binary file (it contains NUL bytes), so it is not shown.`,
      "use execute_command with a tool such as file, xxd or unzip -l to inspect it",
    );
  }
  return { path, text: bytes.toString("utf8") };
}

async function statOrFail(path: string, userPath: string): Promise<Stats> {
  try {
    return await stat(path);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") {
      throw toolFailure(`${userPath} does not exist.`, "check the path with list_directory");
    }
    throw err;
  }
}

/** Writes through a temporary file in the same folder and renames it, so a crash never leaves half a file. */
async function writeAtomically(path: string, content: string, signal: AbortSignal): Promise<boolean> {
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw toolFailure(`${path} is a directory; a file cannot replace it.`, "choose a file path");
  }
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, content, { flag: "wx", signal });
    if (existing) await chmod(temp, existing.mode & 0o7777);
    await rename(temp, path);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  return existing !== undefined;
}

/** Splits text into lines; a final newline ends the last line rather than starting an empty one. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** "512 B", "1.5 KB", "3.2 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const readFileParams = z.object({
  path: z.string().describe("File path, relative to the workspace"),
  startLine: z.number().int().min(1).optional().describe("First line to show (1-based, default 1)"),
  endLine: z.number().int().min(1).optional().describe("Last line to show (inclusive)"),
  maxLines: z.number().int().min(1).max(5000).default(400).describe("At most this many lines (default 400)"),
});

/** read_file: numbered lines of a text file, a window at a time. */
export const readFileTool: ZodTool = defineTool({
  name: "read_file",
  // Read-only: run again after a restart interrupted it.
  idempotent: true,
  description:
    "Read a text file in the workspace. Returns numbered lines; use startLine/endLine to read a part of a long file.",
  parameters: readFileParams,
  async execute(args, ctx) {
    try {
      const { text } = await readTextFile(ctx, args.path);
      const lines = splitLines(text);
      const total = lines.length;
      if (total === 0) return `${args.path} is empty.`;
      const start = args.startLine ?? 1;
      if (args.endLine !== undefined && args.endLine < start) {
        throw toolFailure(`endLine ${args.endLine} is before startLine ${start}.`, "swap or fix them");
      }
      if (start > total) {
        throw toolFailure(
          `startLine ${start} is past the end of ${args.path}, which has ${total} lines.`,
          `use a startLine between 1 and ${total}`,
        );
      }
      const end = Math.min(args.endLine ?? total, total, start + args.maxLines - 1);
      const width = Math.max(4, String(end).length);
      const body = lines.slice(start - 1, end).map((line, i) => {
        const shown =
          line.length > MAX_LINE_CHARS
            ? `${line.slice(0, MAX_LINE_CHARS)}… [line cut, ${line.length} characters]`
            : line;
        return `${String(start + i).padStart(width)}\t${shown}`;
      });
      const remaining = total - end;
      if (remaining > 0) {
        body.push(
          `[showing lines ${start}-${end} of ${total}; ${remaining} more lines, continue with startLine ${end + 1}]`,
        );
      }
      return { content: body.join("\n"), data: { totalLines: total, startLine: start, endLine: end } };
    } catch (err) {
      return errorResult(err);
    }
  },
});

const writeFileParams = z.object({
  path: z.string().describe("File path, relative to the workspace; missing folders are created"),
  content: z.string().describe("The complete new content of the file"),
});

/** write_file: creates or replaces a whole file. */
export const writeFileTool: ZodTool = defineTool({
  name: "write_file",
  description:
    "Create a file or replace its whole content. Parent folders are created. Prefer edit_file for small changes to an existing file.",
  parameters: writeFileParams,
  async execute(args, ctx) {
    try {
      const path = await resolveInWorkspace(ctx.workspace, args.path);
      const replaced = await writeAtomically(path, args.content, ctx.signal);
      const bytes = Buffer.byteLength(args.content, "utf8");
      const shown = displayPath(ctx.workspace, path);
      return {
        content: `${replaced ? "Overwrote" : "Created"} ${shown} (${bytes} bytes written).`,
        data: { path: shown, bytes, created: !replaced },
      };
    } catch (err) {
      return errorResult(err);
    }
  },
});

const editFileParams = z.object({
  path: z.string().describe("File path, relative to the workspace"),
  oldText: z.string().min(1).describe("Exact text to replace, including whitespace and indentation"),
  newText: z.string().describe("Replacement text"),
  replaceAll: z.boolean().default(false).describe("Replace every occurrence instead of exactly one"),
});

/** Counts non-overlapping occurrences of `needle`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) {
    count++;
  }
  return count;
}

/** edit_file: exact string replacement in an existing file. */
export const editFileTool: ZodTool = defineTool({
  name: "edit_file",
  description:
    "Replace an exact piece of text in a file. oldText must match exactly once (or set replaceAll). Read the file first.",
  parameters: editFileParams,
  async execute(args, ctx) {
    try {
      if (args.oldText === args.newText) {
        throw toolFailure("oldText and newText are the same, so there is nothing to change.");
      }
      const { path, text } = await readTextFile(ctx, args.path);
      let oldText = args.oldText;
      let newText = args.newText;
      let count = countOccurrences(text, oldText);
      // Models write "\n"; files from Windows use "\r\n". Match in the file's own line endings.
      if (count === 0 && text.includes("\r\n") && !oldText.includes("\r\n")) {
        oldText = oldText.replace(/\n/g, "\r\n");
        newText = newText.replace(/\r?\n/g, "\r\n");
        count = countOccurrences(text, oldText);
      }
      if (count === 0) {
        throw toolFailure(
          `oldText was not found in ${args.path}.`,
          "read the file first with read_file and copy the exact text, including whitespace and indentation",
        );
      }
      if (count > 1 && !args.replaceAll) {
        throw toolFailure(
          `oldText occurs ${count} times in ${args.path}.`,
          "include more surrounding lines so it matches once, or set replaceAll to true",
        );
      }
      const first = text.indexOf(oldText);
      const line = text.slice(0, first).split("\n").length;
      // split/join and slicing avoid String.replace's special `$&` patterns in newText.
      const updated = args.replaceAll
        ? text.split(oldText).join(newText)
        : text.slice(0, first) + newText + text.slice(first + oldText.length);
      await writeAtomically(path, updated, ctx.signal);
      const what = count === 1 ? "1 occurrence" : `${count} occurrences`;
      return {
        content: `Replaced ${what} in ${displayPath(ctx.workspace, path)} (first at line ${line}).`,
        data: { replacements: count, line },
      };
    } catch (err) {
      return errorResult(err);
    }
  },
});

const listDirectoryParams = z.object({
  path: z.string().default(".").describe("Folder path, relative to the workspace (default: the workspace)"),
  recursive: z.boolean().default(false).describe("List subfolders too (skips node_modules and .git)"),
  maxEntries: z
    .number()
    .int()
    .min(1)
    .max(5000)
    .default(200)
    .describe("At most this many entries (default 200)"),
});

/** One line of a listing: `dir/`, `file (1.2 KB)` or `link -> target`. */
async function describeEntry(dir: string, entry: Dirent, name: string): Promise<string> {
  const full = join(dir, entry.name);
  if (entry.isDirectory()) return `${name}/`;
  if (entry.isSymbolicLink()) {
    const target = await readlink(full).catch(() => "?");
    return `${name} -> ${target}`;
  }
  const info = await lstat(full).catch(() => undefined);
  return info ? `${name} (${formatSize(info.size)})` : name;
}

/** Walks a folder breadth-first, never following symbolic links, and stops at `max` entries. */
async function listEntries(root: string, recursive: boolean, max: number, signal: AbortSignal) {
  const lines: string[] = [];
  const skipped: string[] = [];
  const queue: string[] = [""];
  let truncated = false;
  while (queue.length > 0) {
    signal.throwIfAborted();
    const rel = queue.shift() as string;
    const dir = join(root, rel);
    const entries = await readdir(dir, { withFileTypes: true }).catch((err: unknown) => {
      if (rel === "") throw err;
      skipped.push(`${rel}/ (unreadable: ${errnoCode(err) ?? "error"})`);
      return [] as Dirent[];
    });
    entries.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || a.name.localeCompare(b.name));
    for (const entry of entries) {
      const name = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (recursive && entry.isDirectory() && SKIPPED_DIRS.has(entry.name)) {
        skipped.push(`${name}/`);
        continue;
      }
      if (lines.length >= max) {
        truncated = true;
        break;
      }
      lines.push(await describeEntry(dir, entry, name));
      if (recursive && entry.isDirectory()) queue.push(name);
    }
    if (truncated || !recursive) break;
  }
  return { lines, skipped, truncated };
}

/** list_directory: the files and folders under a path. */
export const listDirectoryTool: ZodTool = defineTool({
  name: "list_directory",
  // Read-only: run again after a restart interrupted it.
  idempotent: true,
  description:
    "List files and folders in a workspace folder. Folders end with '/', files show their size. Set recursive to walk subfolders.",
  parameters: listDirectoryParams,
  async execute(args, ctx) {
    try {
      const root = await resolveInWorkspace(ctx.workspace, args.path);
      const info = await statOrFail(root, args.path);
      if (!info.isDirectory()) {
        throw toolFailure(`${args.path} is a file, not a directory.`, "use read_file to read it");
      }
      const { lines, skipped, truncated } = await listEntries(
        root,
        args.recursive,
        args.maxEntries,
        ctx.signal,
      );
      const shown = displayPath(ctx.workspace, root);
      const out = [`${shown === "." ? "." : shown}/`];
      out.push(...(lines.length > 0 ? lines : ["(empty directory)"]));
      if (truncated) {
        out.push(`[stopped at ${args.maxEntries} entries; list a subfolder or raise maxEntries to see more]`);
      }
      if (skipped.length > 0) out.push(`[not listed: ${skipped.join(", ")}]`);
      return { content: out.join("\n"), data: { entries: lines.length, truncated } };
    } catch (err) {
      return errorResult(err);
    }
  },
});

/** The four file tools, in the order they are usually offered to a model. */
export const builtinFileTools: ZodTool[] = [readFileTool, writeFileTool, editFileTool, listDirectoryTool];
