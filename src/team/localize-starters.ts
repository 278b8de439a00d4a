/**
 * Gives a new server's starter agents in its owner's language: each starter still as it was created
 * (its English name and persona untouched) takes the translated name and persona; an agent someone
 * already changed or removed is left alone.
 */
import { STARTER_AGENTS } from "./starter-agents.js";
import { STARTER_AGENTS_ZH } from "./starter-agents-zh.js";
import type { Actor, Team } from "./types.js";

/** The starter agents in a language (English for any language without its own set). */
export function starterAgentsFor(locale: string) {
  return locale === "zh-CN" ? STARTER_AGENTS_ZH : STARTER_AGENTS;
}

/** Turns the untouched starter agents into `locale`'s; returns the ids it changed. */
export async function localizeStarterAgents(team: Team, actor: Actor, locale: string): Promise<string[]> {
  const wanted = starterAgentsFor(locale);
  if (wanted === STARTER_AGENTS) return [];
  const existing = new Map((await team.listAgents(actor)).map((agent) => [agent.id, agent]));
  const changed: string[] = [];
  for (const [index, english] of STARTER_AGENTS.entries()) {
    const translated = wanted[index];
    const agent = existing.get(english.id);
    if (!translated || !agent || agent.name !== english.name) continue;
    const soul = await team.getSoul(actor, english.id);
    if (soul.content.trim() !== (english.soul ?? "").trim()) continue;
    await team.updateAgent(actor, english.id, { name: translated.name, emoji: translated.emoji });
    await team.putSoul(actor, english.id, translated.soul ?? "");
    changed.push(english.id);
  }
  return changed;
}
