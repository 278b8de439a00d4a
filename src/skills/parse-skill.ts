/**
 * Turns SKILL.md text into a Skill, checking the Agent Skills rules: `name` lowercase words joined
 * by hyphens (at most 64 characters) and `description` (at most 1024 characters) are required.
 */
import { basename } from "node:path";
import { parseFrontMatter } from "./front-matter.js";
import type { Skill, SkillProblem, SkillSource } from "./types.js";

export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;

// Lowercase letters (and caseless letters such as CJK) and digits, in words joined by single hyphens.
const NAME_PATTERN = /^[\p{Ll}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lo}\p{Nd}]+)*$/u;

/** Front matter keys Dimsum reads; everything else is kept in `extra`. */
const KNOWN_KEYS = new Set(["name", "description", "hidden", "tools", "allowed-tools", "model"]);

export interface SkillFileInfo {
  path: string;
  dir: string;
  source: SkillSource;
  files: string[];
}

export type ParsedSkill =
  | { ok: true; skill: Skill; warnings: SkillProblem[] }
  | { ok: false; error: SkillProblem };

/** Parses one SKILL.md; an error names the file line to fix. */
export function parseSkill(text: string, info: SkillFileInfo): ParsedSkill {
  const parsed = parseFrontMatter(text);
  const fail = (line: number, message: string): ParsedSkill => ({
    ok: false,
    error: { path: info.path, line, message },
  });
  if (!parsed.ok) return fail(parsed.line, parsed.message);
  const { data, lineOf } = parsed;

  const name = data.name;
  if (name === undefined || name === null || name === "") {
    return fail(
      1,
      "the front matter has no `name`; add `name: my-skill` (lowercase words joined by hyphens)",
    );
  }
  if (typeof name !== "string") return fail(lineOf("name"), "`name` must be text, e.g. `name: my-skill`");
  if (name.length > MAX_NAME_LENGTH || !NAME_PATTERN.test(name)) {
    return fail(
      lineOf("name"),
      `\`name\` "${name}" must be lowercase letters and digits in words joined by single hyphens, at most ${MAX_NAME_LENGTH} characters`,
    );
  }
  const description = data.description;
  if (description === undefined || description === null || description === "") {
    return fail(1, "the front matter has no `description`; say what the skill does and when to use it");
  }
  if (typeof description !== "string") return fail(lineOf("description"), "`description` must be text");
  if (description.length > MAX_DESCRIPTION_LENGTH) {
    return fail(
      lineOf("description"),
      `\`description\` is ${description.length} characters long; the limit is ${MAX_DESCRIPTION_LENGTH}`,
    );
  }
  const hidden = readHidden(data);
  if (typeof hidden === "string") return fail(lineOf(hidden), `\`${hidden}\` must be true or false`);
  const tools = readTools(data);
  if (typeof tools === "string") return fail(lineOf(tools), `\`${tools}\` must be a list of tool names`);
  const model = data.model;
  if (model !== undefined && model !== null && typeof model !== "string") {
    return fail(lineOf("model"), "`model` must be text such as `openai:gpt-4.1`");
  }

  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(data)) if (!KNOWN_KEYS.has(key)) extra[key] = value;
  const warnings: SkillProblem[] = [];
  const folder = basename(info.dir);
  if (folder !== name) {
    warnings.push({
      path: info.path,
      line: lineOf("name"),
      message: `the skill is named "${name}" but its folder is "${folder}"; the Agent Skills convention wants them equal`,
    });
  }
  return {
    ok: true,
    warnings,
    skill: {
      name,
      description: description.trim(),
      body: parsed.body.trim(),
      hidden,
      tools,
      model: typeof model === "string" && model !== "" ? model : undefined,
      source: info.source,
      dir: info.dir,
      path: info.path,
      files: info.files,
      extra,
    },
  };
}

/** `hidden`, or Claude Code's `disable-model-invocation`; returns the offending key when not a boolean. */
function readHidden(data: Record<string, unknown>): boolean | string {
  for (const key of ["hidden", "disable-model-invocation"]) {
    const value = data[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== "boolean") return key;
    if (value) return true;
  }
  return false;
}

/** `tools` (a list) or `allowed-tools` (space- or comma-separated text in the Agent Skills spec). */
function readTools(data: Record<string, unknown>): string[] | string {
  const names: string[] = [];
  for (const key of ["tools", "allowed-tools"]) {
    const value = data[key];
    if (value === undefined || value === null) continue;
    if (typeof value === "string") names.push(...value.split(/[\s,]+/));
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) names.push(...value);
    else return key;
  }
  return [...new Set(names.map((n) => n.trim()).filter((n) => n !== ""))];
}
