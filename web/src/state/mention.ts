/**
 * `@` autocomplete for the composer, as pure functions: find the mention being typed at the caret,
 * rank the channel's agents against it, react to keys, and splice the pick into the text.
 */

import { t } from "../i18n/index.js";
import type { AgentRecord, ChannelRecord } from "../types.js";

export interface MentionCandidate {
  id: string;
  name: string;
  emoji: string;
}

/** The `@word` around the caret: `start` is the index of `@`, `end` the end of the word. */
export interface MentionQuery {
  start: number;
  end: number;
  query: string;
}

export interface MentionMenu {
  query: MentionQuery;
  items: MentionCandidate[];
  index: number;
}

export type MentionKeyResult =
  | { kind: "ignore" }
  | { kind: "move"; index: number }
  | { kind: "pick"; item: MentionCandidate }
  | { kind: "close" };

const ID_CHAR = /[a-z0-9_-]/i;
const BEFORE_AT = /[\s([{,;:'"]/;

/** The mention being typed at `caret`, or null when the caret is not in an `@word`. */
export function findMentionQuery(text: string, caret: number): MentionQuery | null {
  let start = caret;
  while (start > 0 && ID_CHAR.test(text[start - 1] ?? "")) start -= 1;
  const at = start - 1;
  if (at < 0 || text[at] !== "@") return null;
  // An `@` inside a word (an e-mail address, say) is not a mention.
  if (at > 0 && !BEFORE_AT.test(text[at - 1] ?? "")) return null;
  let end = caret;
  while (end < text.length && ID_CHAR.test(text[end] ?? "")) end += 1;
  return { start: at, end, query: text.slice(start, caret).toLowerCase() };
}

function rank(candidate: MentionCandidate, query: string): number {
  if (query === "") return 0;
  const id = candidate.id.toLowerCase();
  const name = candidate.name.toLowerCase();
  if (id.startsWith(query)) return 0;
  if (name.startsWith(query)) return 1;
  if (name.split(/\s+/).some((word) => word.startsWith(query))) return 2;
  if (id.includes(query) || name.includes(query)) return 3;
  return -1;
}

/** Candidates matching `query`, best first (id prefix, name prefix, word prefix, substring). */
export function filterCandidates(
  candidates: MentionCandidate[],
  query: string,
  limit = 8,
): MentionCandidate[] {
  return candidates
    .map((candidate, order) => ({ candidate, order, score: rank(candidate, query) }))
    .filter((entry) => entry.score >= 0)
    .sort((a, b) => a.score - b.score || a.order - b.order)
    .slice(0, limit)
    .map((entry) => entry.candidate);
}

/** What can be mentioned in a channel: its agents, plus `@all` and `@chain` in groups. */
export function mentionCandidates(channel: ChannelRecord, agents: AgentRecord[]): MentionCandidate[] {
  const byId = new Map(agents.map((agent) => [agent.id, agent]));
  const members: MentionCandidate[] = channel.members
    .filter((member) => member.type === "agent")
    .map((member) => {
      const agent = byId.get(member.id);
      return { id: member.id, name: agent?.name ?? member.id, emoji: agent?.emoji ?? "🤖" };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
  if (channel.kind !== "group") return members;
  const extra: MentionCandidate[] = [];
  if (members.length > 1) extra.push({ id: "all", name: t("mention.all"), emoji: "👥" });
  if (channel.chain.length > 0) extra.push({ id: "chain", name: t("mention.chain"), emoji: "⛓️" });
  return [...members, ...extra];
}

/** The menu to show for the caret position, or null when there is nothing to suggest. */
export function mentionMenuAt(
  text: string,
  caret: number,
  candidates: MentionCandidate[],
  previous?: MentionMenu | null,
): MentionMenu | null {
  const query = findMentionQuery(text, caret);
  if (!query) return null;
  const items = filterCandidates(candidates, query.query);
  if (items.length === 0) return null;
  // Keep the highlighted item while it still matches, so typing does not make the selection jump.
  const kept = previous ? items.findIndex((item) => item.id === previous.items[previous.index]?.id) : -1;
  return { query, items, index: Math.max(kept, 0) };
}

/** How the open menu reacts to a key: arrows move (wrapping), Enter/Tab pick, Escape closes. */
export function mentionKey(menu: MentionMenu, key: string): MentionKeyResult {
  const count = menu.items.length;
  switch (key) {
    case "ArrowDown":
      return { kind: "move", index: (menu.index + 1) % count };
    case "ArrowUp":
      return { kind: "move", index: (menu.index - 1 + count) % count };
    case "Enter":
    case "Tab": {
      const item = menu.items[menu.index];
      return item ? { kind: "pick", item } : { kind: "close" };
    }
    case "Escape":
      return { kind: "close" };
    default:
      return { kind: "ignore" };
  }
}

/** The text with the mention replaced by `@id ` and where the caret goes after it. */
export function applyMention(text: string, query: MentionQuery, id: string): { text: string; caret: number } {
  const after = text.slice(query.end);
  const insert = after.startsWith(" ") ? `@${id}` : `@${id} `;
  const next = text.slice(0, query.start) + insert + after;
  const caret = query.start + insert.length + (after.startsWith(" ") ? 1 : 0);
  return { text: next, caret };
}

export const MENTION_TOKEN = /(?:^|[\s([{,;:'"])@([a-z0-9_-]+)/gi;

/**
 * Whom a message of a group without a leader must mention to be answered: undefined when the
 * message reaches an agent (it mentions one, `@all`, `@chain` or starts with `/flow`), when the group
 * has a leader (it answers unmentioned messages) or other people (the message may be for them);
 * otherwise the agent ids the composer suggests before sending.
 */
export function mentionNeeded(text: string, channel: ChannelRecord, meId: string): string[] | undefined {
  if (channel.kind !== "group" || channel.leaderAgentId) return undefined;
  const agentIds = channel.members.filter((m) => m.type === "agent").map((m) => m.id);
  if (agentIds.length === 0) return undefined;
  if (channel.members.some((m) => m.type === "user" && m.id !== meId)) return undefined;
  if (/^\/flow(?:\s|$)/i.test(text.trimStart())) return undefined;
  const named = [...text.matchAll(MENTION_TOKEN)].map((m) => (m[1] ?? "").toLowerCase());
  if (named.some((id) => id === "all" || id === "chain" || agentIds.includes(id))) return undefined;
  return agentIds;
}
