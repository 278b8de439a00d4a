/**
 * Files a session's pages download land in the run's workspace, under `downloads/`, with a cleaned
 * name that never leaves the folder (an existing file is kept: the new one gets a numbered name), and
 * none over the size limit (removed, and said so).
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { extname, join } from "node:path";
import type { Download } from "playwright-core";
import { cleanFileName } from "../../attachments/file-rules.js";
import { displayPath, resolveInWorkspace } from "../builtin/workspace-path.js";

export const DOWNLOADS_FOLDER = "downloads";

/** What became of one download: saved at `path` (relative to the workspace), or refused and why. */
export type DownloadOutcome = { path: string; bytes: number } | { name: string; refused: string };

function safeName(suggested: string): string {
  const name = cleanFileName(suggested);
  return name === "." || name === ".." ? "download" : name;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

/** A path in the workspace's downloads folder that is free, for `suggested`. */
async function freePath(workspace: string, suggested: string): Promise<string> {
  const folder = await resolveInWorkspace(workspace, DOWNLOADS_FOLDER);
  await mkdir(folder, { recursive: true });
  const name = safeName(suggested);
  const ext = extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? name : `${stem} (${n})${ext}`;
    const path = await resolveInWorkspace(workspace, join(DOWNLOADS_FOLDER, candidate));
    if (!(await exists(path))) return path;
  }
}

/** Saves a download into the workspace; over `maxBytes` it is removed again. */
export async function saveDownload(
  download: Download,
  workspace: string,
  maxBytes: number,
): Promise<DownloadOutcome> {
  const name = safeName(download.suggestedFilename());
  try {
    const failure = await download.failure();
    if (failure) return { name, refused: `the download failed (${failure})` };
    const path = await freePath(workspace, name);
    await download.saveAs(path);
    const bytes = (await stat(path)).size;
    if (bytes > maxBytes) {
      await rm(path, { force: true });
      return { name, refused: `it is ${bytes} bytes, over the ${maxBytes} bytes a download may have` };
    }
    return { path: displayPath(await resolveInWorkspace(workspace, "."), path), bytes };
  } catch (err) {
    return { name, refused: err instanceof Error ? (err.message.split("\n")[0] ?? "") : String(err) };
  }
}

/** One line per download, for the tool's answer. */
export function describeDownloads(outcomes: readonly DownloadOutcome[]): string {
  return outcomes
    .map((o) =>
      "path" in o
        ? `Downloaded ${o.path} (${o.bytes} bytes) into the workspace.`
        : `Did not keep the download ${o.name}: ${o.refused}.`,
    )
    .join("\n");
}
