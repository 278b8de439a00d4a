/**
 * load_skill: the model reads a skill's full instructions when it decides one fits (the system text
 * lists only each skill's name and description). Hidden skills load too when the model names them.
 */
import * as z from "zod";
import { findSkill, skillContextBody } from "../skills/select-skills.js";
import type { Skill } from "../skills/types.js";
import { defineTool, type ZodTool } from "../tools/types.js";

export const LOAD_SKILL_TOOL = "load_skill";

const params = z.object({
  name: z.string().min(1).describe("The skill's name, as the Skills list in the instructions gives it"),
});

/** The tool over a fixed set of skills. */
export function loadSkillTool(skills: readonly Skill[]): ZodTool {
  return defineTool({
    name: LOAD_SKILL_TOOL,
    description:
      "Load the full instructions of one of the skills listed under Skills in your instructions. Call it when a skill fits the task, before you start the task.",
    parameters: params,
    async execute(args) {
      const skill = findSkill(skills, args.name);
      if (!skill) {
        const known = skills.filter((s) => !s.hidden).map((s) => s.name);
        return {
          content: `No skill is called "${args.name}". Skills: ${known.join(", ") || "(none)"}.`,
          isError: true,
        };
      }
      return {
        content: `# Skill: ${skill.name}\n\n${skillContextBody(skill).trim()}`,
        data: { skill: skill.name },
      };
    },
  });
}
