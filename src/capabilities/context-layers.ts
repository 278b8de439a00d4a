/**
 * The context layers a run gets beside its messages: the skill index and the skills given in full,
 * the person's core memory and recalled memories, and the persona. (The session summary and open todos come from
 * the session itself.)
 */
import type { LayerProvider, LayerResult } from "../agent/layered-context.js";
import { memoryLayers } from "../memory/injection.js";
import type { MemoryStore } from "../memory/types.js";
import { findSkill, parseSkillCommand, selectSkills, skillContextBody } from "../skills/select-skills.js";
import type { Skill } from "../skills/types.js";

/**
 * Skills by progressive disclosure. The system text gets the index of loadable skills (name and
 * description; the same every turn) and the bodies of the always-on skills (`alwaysOn`, an agent's
 * named skills); a message starting `/skill a,b` gets those bodies in its turn context. Every other
 * body reaches the model only through `load_skill`. With `hints`, keyword matches are named (names
 * only) in the turn context.
 */
export function skillLayer(
  skills: readonly Skill[],
  alwaysOn: readonly string[] = [],
  options: { hints?: boolean } = {},
): LayerProvider {
  return async ({ query }) => {
    if (skills.length === 0) return { layers: {} };
    const always = uniqueSkills(skills, alwaysOn);
    const command = parseSkillCommand(query);
    const named = uniqueSkills(skills, command?.names ?? []).filter((s) => !always.includes(s));
    const given = new Set([...always, ...named]);
    const layers: LayerResult["layers"] = {};
    const index = skills.filter((s) => !s.hidden && !always.includes(s));
    if (index.length > 0)
      layers.skillIndex = index.map((s) => ({ name: s.name, description: s.description }));
    if (always.length > 0) layers.skills = always.map((s) => ({ name: s.name, body: skillContextBody(s) }));
    if (named.length > 0) layers.turnSkills = named.map((s) => ({ name: s.name, body: skillContextBody(s) }));
    if (options.hints) {
      const hints = selectSkills(skills, command ? command.rest : query)
        .filter((c) => !given.has(c.skill))
        .map((c) => c.name);
      if (hints.length > 0) layers.skillHints = hints;
    }
    return { layers, skills: [...given].map((s) => s.name) };
  };
}

function uniqueSkills(skills: readonly Skill[], names: readonly string[]): Skill[] {
  const out: Skill[] = [];
  for (const name of names) {
    const skill = findSkill(skills, name);
    if (skill && !out.includes(skill)) out.push(skill);
  }
  return out;
}

/** Core memory and the memories most relevant to the message, of one person (and agent). */
export function memoryLayer(store: MemoryStore, scope: { userId: string; agentId?: string }): LayerProvider {
  return async ({ query, signal }) => {
    const result = await memoryLayers(store, { ...scope, query, signal });
    const out: LayerResult = {
      layers: { coreMemory: result.coreMemory, memories: result.memories },
      memories: result.trace.ids.map((id, i) => {
        const score = result.trace.scores[i];
        return score === undefined ? { id } : { id, score };
      }),
      memoryMode: result.trace.mode,
    };
    return out;
  };
}

/** The persona (SOUL.md), read for every run so an edit applies to the next message. */
export function personaLayer(read: () => Promise<string>): LayerProvider {
  return async () => ({ layers: { persona: await read() } });
}
