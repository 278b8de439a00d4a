/**
 * Keeps file and shell tools inside the run's workspace.
 * A path is checked twice: as written (catches `..` and absolute paths) and after resolving symbolic
 * links of its deepest existing ancestor (catches links that point outside, even for files not yet
 * created under a linked folder).
 */
import { lstat, readlink, realpath } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { errnoCode, toolFailure } from "./tool-error.js";

// Linux gives up after 40 links in a chain; do the same so a link cycle cannot spin forever.
const MAX_LINK_DEPTH = 40;

/** True when `child` is `parent` itself or somewhere beneath it (both absolute, normalised). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

/** The path as the model should see it: relative to the workspace, "." for the workspace itself. */
export function displayPath(workspace: string, absolute: string): string {
  const rel = relative(workspace, absolute);
  return rel === "" ? "." : rel;
}

/**
 * Resolves `userPath` (relative to the workspace, or absolute inside it) to a real absolute path,
 * refusing anything that lands outside the workspace directly or through a symbolic link.
 */
export async function resolveInWorkspace(workspace: string, userPath: string): Promise<string> {
  if (userPath.trim() === "") {
    throw toolFailure("The path is empty.", "give a file or folder path relative to the workspace");
  }
  if (userPath.includes("\0")) {
    throw toolFailure(`The path ${JSON.stringify(userPath)} contains a NUL byte.`, "remove it");
  }
  const lexical = resolve(workspace, userPath);
  const realWorkspace = await realpathLoose(workspace, 0);
  if (!isInside(workspace, lexical) && !isInside(realWorkspace, lexical)) {
    throw outside(userPath, workspace);
  }
  const real = await realpathLoose(lexical, 0);
  if (!isInside(realWorkspace, real)) throw outside(userPath, workspace);
  return real;
}

function outside(userPath: string, workspace: string) {
  return toolFailure(
    `path ${userPath} is outside the workspace ${workspace}`,
    "use a path inside the workspace (relative paths are resolved against it)",
  );
}

/**
 * Like `realpath`, but for paths that do not exist yet: resolves the deepest existing ancestor and
 * appends the rest. A dangling symbolic link is followed to where it points, since writing through it
 * would create the file there.
 */
async function realpathLoose(path: string, depth: number): Promise<string> {
  if (depth > MAX_LINK_DEPTH) {
    throw toolFailure(`Too many symbolic links while resolving ${path}.`, "check for a link cycle");
  }
  try {
    return await realpath(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code !== "ENOENT" && code !== "ENOTDIR") throw err;
  }
  const parent = dirname(path);
  if (parent === path) return path;
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink()) {
    const target = resolve(parent, await readlink(path));
    return realpathLoose(target, depth + 1);
  }
  return join(await realpathLoose(parent, depth), basename(path));
}
