/** The shapes shared by the skill loader, the matcher and the CLI. */

/** Where a skill was found; project skills override user skills of the same name. */
export type SkillSource = "user" | "project";

/** One skill folder: its SKILL.md front matter, its Markdown body and the other files beside it. */
export interface Skill {
  /** Lowercase-hyphenated identifier (Agent Skills rule: at most 64 characters). */
  name: string;
  /** What the skill does and when to use it (at most 1024 characters). */
  description: string;
  /** The Markdown instructions after the front matter. */
  body: string;
  /** Never chosen automatically, only by explicit name (`/skill name`). */
  hidden: boolean;
  /** Tools the skill expects (`tools` or the Agent Skills `allowed-tools`), empty when unspecified. */
  tools: string[];
  /** A preferred `provider:model`, if the skill names one. */
  model: string | undefined;
  source: SkillSource;
  /** Absolute path of the skill folder. */
  dir: string;
  /** Absolute path of its SKILL.md. */
  path: string;
  /** Other files in the folder (relative paths, `/`-separated), which the body may refer to. */
  files: string[];
  /** Front matter keys Dimsum does not interpret (`license`, `metadata`, ...), kept as parsed. */
  extra: Record<string, unknown>;
}

/** A SKILL.md that could not be loaded (or loaded with a problem worth fixing). */
export interface SkillProblem {
  /** Absolute path of the SKILL.md (or the folder, when it could not be read). */
  path: string;
  /** 1-based line in the file the problem points at; 0 when it is not about a line (unreadable folder). */
  line: number;
  message: string;
}

export interface SkillsLoadResult {
  /** Loaded skills sorted by name, project skills replacing user skills of the same name. */
  skills: Skill[];
  /** Files that were skipped, each with the line to fix. */
  errors: SkillProblem[];
  /** Skills that loaded but break a convention (e.g. the name differs from the folder name). */
  warnings: SkillProblem[];
}

/** A folder of skill folders and what kind of source it is. */
export interface SkillDir {
  path: string;
  source: SkillSource;
}
