/**
 * Finds skill folders (each holding a SKILL.md) in the user's and the project's skills folders.
 * A bad file is reported with its line and skipped; the other skills still load.
 */
import type { Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { parseSkill } from "./parse-skill.js";
import type { Skill, SkillDir, SkillProblem, SkillsLoadResult } from "./types.js";

export const SKILL_FILE = "SKILL.md";
const MAX_SKILL_BYTES = 256 * 1024;
const MAX_LISTED_FILES = 100;
const MAX_LIST_DEPTH = 4;
const SKIPPED_FOLDERS = new Set(["node_modules", "__pycache__"]);

/** The usual places: `<home>/skills` (user), then `<cwd>/skills` (project, which wins on a name clash). */
export function defaultSkillDirs(home: string, cwd: string): SkillDir[] {
  return [
    { path: join(home, "skills"), source: "user" },
    { path: join(cwd, "skills"), source: "project" },
  ];
}

/** Loads every skill under `dirs`; a later folder's skill replaces an earlier one of the same name. */
export async function loadSkills(dirs: readonly SkillDir[]): Promise<SkillsLoadResult> {
  const byName = new Map<string, Skill>();
  const errors: SkillProblem[] = [];
  const warnings: SkillProblem[] = [];
  const perDir = await Promise.all(dirs.map((dir) => loadDir(dir)));
  for (const result of perDir) {
    errors.push(...result.errors);
    warnings.push(...result.warnings);
    const seenHere = new Map<string, Skill>();
    for (const skill of result.skills) {
      const twin = seenHere.get(skill.name);
      if (twin) {
        errors.push({
          path: skill.path,
          line: 1,
          message: `another skill in the same folder is already named "${skill.name}" (${twin.path}); rename one`,
        });
        continue;
      }
      seenHere.set(skill.name, skill);
      byName.set(skill.name, skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  return { skills, errors, warnings };
}

async function loadDir(dir: SkillDir): Promise<SkillsLoadResult> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir.path, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) return { skills: [], errors: [], warnings: [] };
    return {
      skills: [],
      errors: [problem(dir.path, 0, `cannot read the skills folder: ${reason(err)}`)],
      warnings: [],
    };
  }
  const folders = entries
    .filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()))
    .map((e) => join(dir.path, e.name))
    .sort();
  const results = await Promise.all(folders.map((folder) => loadSkillFolder(folder, dir)));
  const out: SkillsLoadResult = { skills: [], errors: [], warnings: [] };
  for (const result of results) {
    if (!result) continue;
    if (result.ok) {
      out.skills.push(result.skill);
      out.warnings.push(...result.warnings);
    } else out.errors.push(result.error);
  }
  return out;
}

type FolderResult =
  | { ok: true; skill: Skill; warnings: SkillProblem[] }
  | { ok: false; error: SkillProblem }
  | undefined;

/** One skill folder; undefined when it has no SKILL.md (it is just some other folder). */
async function loadSkillFolder(folder: string, dir: SkillDir): Promise<FolderResult> {
  const path = join(folder, SKILL_FILE);
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) return undefined;
    size = info.size;
  } catch (err) {
    if (isMissing(err)) return undefined;
    return { ok: false, error: problem(path, 0, `cannot read: ${reason(err)}`) };
  }
  if (size > MAX_SKILL_BYTES) {
    return {
      ok: false,
      error: problem(
        path,
        1,
        `SKILL.md is ${size} bytes; keep it under ${MAX_SKILL_BYTES} and move detail into other files`,
      ),
    };
  }
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    return { ok: false, error: problem(path, 0, `cannot read: ${reason(err)}`) };
  }
  const files = await listFiles(folder);
  return parseSkill(text, { path, dir: folder, source: dir.source, files });
}

/** Other files in a skill folder (relative, `/`-separated), depth- and count-limited. */
async function listFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (rel: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(rel === "" ? root : join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (found.length >= MAX_LISTED_FILES) return;
      if (entry.name.startsWith(".") || SKIPPED_FOLDERS.has(entry.name)) continue;
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (depth < MAX_LIST_DEPTH) await walk(child, depth + 1);
      } else if (child !== SKILL_FILE) found.push(child);
    }
  };
  await walk("", 1);
  return found;
}

function problem(path: string, line: number, message: string): SkillProblem {
  return { path, line, message };
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}

function reason(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
