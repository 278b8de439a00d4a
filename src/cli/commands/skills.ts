/** `dimsum skills`: lists the user's and the project's skills and any SKILL.md that failed to load. */
import { loadConfig } from "../../config/load-config.js";
import { defaultSkillDirs, loadSkills } from "../../skills/load-skills.js";
import type { Skill, SkillProblem } from "../../skills/types.js";
import { reportCommandError } from "../command-errors.js";
import type { CommandIo } from "../command-io.js";
import { EXIT_FAILURE, EXIT_OK } from "../exit-codes.js";
import { oneLine } from "../render/style.js";

export interface SkillsCommandOptions {
  /** Print one JSON document instead of a table. */
  json?: boolean;
}

export type SkillsCommandIo = CommandIo;

const DESCRIPTION_WIDTH = 80;

/** Lists skills and load problems; exits 1 when some SKILL.md could not be loaded. */
export async function skillsCommand(options: SkillsCommandOptions, io: SkillsCommandIo): Promise<number> {
  let home: string;
  try {
    home = loadConfig({ cwd: io.cwd, env: io.env }).home;
  } catch (err) {
    return reportCommandError(err, io.stderr, "config");
  }
  const dirs = defaultSkillDirs(home, io.cwd);
  const { skills, errors, warnings } = await loadSkills(dirs);
  if (options.json) {
    const listed = skills.map(({ name, source, description, hidden, tools, model, dir, files }) => ({
      name,
      source,
      description,
      hidden,
      tools,
      model: model ?? null,
      dir,
      files,
    }));
    io.stdout.write(`${JSON.stringify({ skills: listed, errors, warnings }, null, 2)}\n`);
    return errors.length > 0 ? EXIT_FAILURE : EXIT_OK;
  }
  if (skills.length === 0) {
    io.stdout.write(
      `No skills found. Add folders with a SKILL.md to ${dirs.map((d) => d.path).join(" or ")}.\n`,
    );
  } else {
    io.stdout.write(formatSkillTable(skills));
  }
  for (const warning of warnings) io.stderr.write(`warning: ${formatProblem(warning)}\n`);
  for (const error of errors) io.stderr.write(`error: ${formatProblem(error)} (skill skipped)\n`);
  return errors.length > 0 ? EXIT_FAILURE : EXIT_OK;
}

/** Aligned rows: name, source, flags, description. */
function formatSkillTable(skills: readonly Skill[]): string {
  const nameWidth = Math.max(4, ...skills.map((s) => s.name.length));
  const rows = [`${"NAME".padEnd(nameWidth)}  SOURCE   HIDDEN  DESCRIPTION`];
  for (const skill of skills) {
    rows.push(
      `${skill.name.padEnd(nameWidth)}  ${skill.source.padEnd(7)}  ${(skill.hidden ? "yes" : "no").padEnd(6)}  ${oneLine(skill.description, DESCRIPTION_WIDTH)}`,
    );
  }
  return `${rows.join("\n")}\n`;
}

/** `path:line: message`, the form editors and terminals turn into links. */
export function formatProblem(problem: SkillProblem): string {
  return problem.line > 0
    ? `${problem.path}:${problem.line}: ${problem.message}`
    : `${problem.path}: ${problem.message}`;
}
