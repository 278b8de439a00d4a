/**
 * What a process can offer beyond the built-ins, loaded once at start: HTTP tools and JS plugins
 * from the tools folders, and skills from the skills folders. Problems are reported, never fatal.
 */
import type { DimsumConfig } from "../config/load-config.js";
import { defaultSkillDirs, loadSkills } from "../skills/load-skills.js";
import type { Skill } from "../skills/types.js";
import { defaultHttpToolDirs, loadHttpTools } from "../tools/http/index.js";
import { defaultPluginDirs, loadPlugins } from "../tools/plugins/index.js";
import type { Tool } from "../tools/types.js";

export interface Extensions {
  http: Tool[];
  plugins: Tool[];
  skills: Skill[];
  /** One line per problem: `path[:line]: message`. */
  problems: string[];
}

/** No HTTP tools, plugins or skills (library use and tests). */
export const NO_EXTENSIONS: Extensions = { http: [], plugins: [], skills: [], problems: [] };

/** Loads HTTP tools, plugins and skills from `DIMSUM_HOME` and the project folder `cwd`. */
export async function loadExtensions(config: DimsumConfig, cwd: string): Promise<Extensions> {
  const [http, plugins, skills] = await Promise.all([
    loadHttpTools(defaultHttpToolDirs(config.home, cwd), config.env, {
      definitions: config.file.httpTools ?? [],
    }),
    loadPlugins(defaultPluginDirs(config.home, cwd)),
    loadSkills(defaultSkillDirs(config.home, cwd)),
  ]);
  return {
    http: http.tools,
    plugins: plugins.tools,
    skills: skills.skills,
    problems: [
      ...http.errors.map((e) => `${e.path}: ${e.message}`),
      ...plugins.errors.map((e) => `${e.path}: ${e.message}`),
      ...skills.errors.map((e) => `${e.path}${e.line ? `:${e.line}` : ""}: ${e.message}`),
    ],
  };
}
