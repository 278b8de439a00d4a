/**
 * Chooses the skills for one user message: any named explicitly (`/skill name`, hidden ones too),
 * then the best BM25 matches over name, description and body, hidden skills excluded.
 * The result plugs straight into `ContextLayers.skills`.
 */
import { Bm25Index } from "./bm25.js";
import type { Skill } from "./types.js";

export const DEFAULT_MAX_SKILLS = 3;
/**
 * Below this a match is noise. Calibrated on test/fixtures/skill-selection/prompts.json (52 labelled
 * prompts against the shipped skills alone and with three synthetic ones, test/skills/calibration.test.ts):
 * off-topic prompts score at most about 3.3 (one body or description word: "check the weather"),
 * on-topic ones at least about 3.95 (one word of a name, or a rarer description word such as 俳句);
 * the threshold sits in the middle of that gap.
 */
export const DEFAULT_MIN_SCORE = 3.6;
/** Matches far behind the best one ("write" in a spreadsheet skill next to a commit-message skill) are dropped. */
export const DEFAULT_MIN_RELATIVE_SCORE = 0.3;

// Name and description say what a skill is for; the body mostly says how.
const NAME_WEIGHT = 3;
const DESCRIPTION_WEIGHT = 2;
const BODY_WEIGHT = 1;
// See Bm25Options.priorDocs: keeps word weights sensible for a user with only a few skills.
const PRIOR_DOCS = 10;

export interface SelectSkillsOptions {
  /** At most this many skills in total, explicit ones included (default 3). */
  max?: number;
  /** Automatic matches scoring below this are dropped (default 3.6, DEFAULT_MIN_SCORE). */
  minScore?: number;
  /** Automatic matches scoring below this fraction of the best match are dropped (default 0.3). */
  minRelativeScore?: number;
  /** Names chosen by the user; always included (even hidden ones) when they exist. */
  explicit?: readonly string[];
}

/** A chosen skill: `{name, body}` for the context, plus why it was chosen. */
export interface SelectedSkill {
  name: string;
  /** The instructions, followed by a note listing the folder's other files when it has any. */
  body: string;
  /** BM25 score; 0 for explicit choices. */
  score: number;
  explicit: boolean;
  skill: Skill;
}

/** Skills indexed once for many messages. */
export class SkillIndex {
  readonly #skills: readonly Skill[];
  readonly #index = new Bm25Index<Skill>({ priorDocs: PRIOR_DOCS });

  constructor(skills: readonly Skill[]) {
    this.#skills = skills;
    for (const skill of skills) {
      if (skill.hidden) continue;
      this.#index.add(skill, [
        { text: skill.name.replace(/-/g, " "), weight: NAME_WEIGHT },
        { text: skill.description, weight: DESCRIPTION_WEIGHT },
        { text: skill.body, weight: BODY_WEIGHT },
      ]);
    }
  }

  /** The skills for `message`; a leading `/skill a,b` in the message counts as explicit names. */
  select(message: string, options: SelectSkillsOptions = {}): SelectedSkill[] {
    const max = options.max ?? DEFAULT_MAX_SKILLS;
    const minScore = options.minScore ?? DEFAULT_MIN_SCORE;
    const minRelative = options.minRelativeScore ?? DEFAULT_MIN_RELATIVE_SCORE;
    const command = parseSkillCommand(message);
    const query = command ? command.rest : message;
    const chosen: SelectedSkill[] = [];
    for (const name of [...(options.explicit ?? []), ...(command?.names ?? [])]) {
      const skill = findSkill(this.#skills, name);
      if (skill && !chosen.some((c) => c.skill === skill) && chosen.length < max) {
        chosen.push(selected(skill, 0, true));
      }
    }
    if (query.trim() === "") return chosen;
    const hits = this.#index.search(query);
    const floor = Math.max(minScore, (hits[0]?.score ?? 0) * minRelative);
    for (const hit of hits) {
      if (chosen.length >= max || hit.score < floor) break;
      if (!chosen.some((c) => c.skill === hit.item)) chosen.push(selected(hit.item, hit.score, false));
    }
    return chosen;
  }
}

const indexes = new WeakMap<readonly Skill[], SkillIndex>();

/** `new SkillIndex(skills).select(...)`, reusing the index while the same array is passed. */
export function selectSkills(
  skills: readonly Skill[],
  userMessage: string,
  options: SelectSkillsOptions = {},
): SelectedSkill[] {
  let index = indexes.get(skills);
  if (!index) {
    index = new SkillIndex(skills);
    indexes.set(skills, index);
  }
  return index.select(userMessage, options);
}

/** The skill called `name` (case-insensitive). */
export function findSkill(skills: readonly Skill[], name: string): Skill | undefined {
  const wanted = name.trim().toLowerCase();
  return skills.find((s) => s.name === wanted);
}

/** Reads `/skill name[,name...] [message]`; undefined when the text does not start that way. */
export function parseSkillCommand(text: string): { names: string[]; rest: string } | undefined {
  const match = /^\s*\/skills?\s+([^\s,]+(?:\s*,\s*[^\s,]+)*)(?:\s+([\s\S]*))?$/u.exec(text);
  if (!match) return undefined;
  const names = match[1]!.split(",").map((n) => n.trim());
  return { names, rest: (match[2] ?? "").trim() };
}

/** A skill's instructions for the context, pointing at the folder's other files when it has any. */
export function skillContextBody(skill: Skill): string {
  if (skill.files.length === 0) return skill.body;
  return (
    `${skill.body}\n\nThis skill's folder is ${skill.dir}; it also holds: ${skill.files.join(", ")}. ` +
    "Read those files when the instructions refer to them."
  );
}

function selected(skill: Skill, score: number, explicit: boolean): SelectedSkill {
  return { name: skill.name, body: skillContextBody(skill), score, explicit, skill };
}
