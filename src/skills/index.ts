/** Skills: SKILL.md folders loaded from the user's and the project's skills folders, matched by BM25. */
export { type Bm25Field, type Bm25Hit, Bm25Index, type Bm25Options } from "./bm25.js";
export { type FrontMatter, type FrontMatterResult, parseFrontMatter } from "./front-matter.js";
export { defaultSkillDirs, loadSkills, SKILL_FILE } from "./load-skills.js";
export {
  MAX_DESCRIPTION_LENGTH,
  MAX_NAME_LENGTH,
  type ParsedSkill,
  parseSkill,
  type SkillFileInfo,
} from "./parse-skill.js";
export {
  DEFAULT_MAX_SKILLS,
  DEFAULT_MIN_SCORE,
  findSkill,
  parseSkillCommand,
  type SelectedSkill,
  type SelectSkillsOptions,
  SkillIndex,
  selectSkills,
  skillContextBody,
} from "./select-skills.js";
export { stem, tokenize } from "./tokenize.js";
export type { Skill, SkillDir, SkillProblem, SkillSource, SkillsLoadResult } from "./types.js";
