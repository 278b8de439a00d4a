/**
 * The context layers a run gets beside its messages: skills that match the message, the person's
 * core memory and recalled memories, and the persona. (The session summary and open todos come from
 * the session itself.)
 */
import type { LayerProvider, LayerResult } from "../agent/layered-context.js";
import { memoryLayers } from "../memory/injection.js";
import type { MemoryStore } from "../memory/types.js";
import { selectSkills } from "../skills/select-skills.js";
import type { Skill } from "../skills/types.js";

/** Skills for the message: the named ones always, others when they match; `/skill a,b msg` forces some. */
export function skillLayer(skills: readonly Skill[], explicit: readonly string[] = []): LayerProvider {
  return async ({ query }) => {
    if (skills.length === 0) return { layers: {} };
    const chosen = selectSkills(skills, query, { explicit });
    return {
      layers: { skills: chosen.map((s) => ({ name: s.name, body: s.body })) },
      skills: chosen.map((s) => s.name),
    };
  };
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
