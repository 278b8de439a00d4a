/**
 * `@name` mentions in a channel message. A mention starts after a space or punctuation (so
 * `bob@coder.dev` is an email, not a mention), is matched case-insensitively against the channel's
 * agents (by id or by name with spaces removed) and people, and never counts inside code.
 */

export interface MentionCandidate {
  id: string;
  name?: string;
}

export interface ParsedMentions {
  /** `@all` was used. */
  all: boolean;
  /** `@chain` was used (starts the collaboration chain). */
  chain: boolean;
  /** Agents mentioned, in order of first mention, without duplicates. */
  agentIds: string[];
  /** People mentioned, in order of first mention. */
  userIds: string[];
}

// Not preceded by a word character, a dot or another @: emails and `a@@b` are not mentions.
const MENTION = /(?<![\p{L}\p{N}_.@/])@([\p{L}\p{N}_][\p{L}\p{N}_-]*)/gu;
const FENCED_CODE = /```[\s\S]*?(?:```|$)|~~~[\s\S]*?(?:~~~|$)/g;
const INLINE_CODE = /(`+)[\s\S]*?\1/g;

/** Removes fenced blocks and inline code spans, which hold code rather than mentions. */
export function withoutCode(text: string): string {
  return text.replace(FENCED_CODE, " ").replace(INLINE_CODE, " ");
}

/** The raw mention tokens of a text, lower-cased, in order (trailing `-` dropped). */
export function mentionTokens(text: string): string[] {
  const out: string[] = [];
  for (const match of withoutCode(text).matchAll(MENTION)) {
    const token = (match[1] ?? "").replace(/-+$/, "").toLowerCase();
    if (token !== "") out.push(token);
  }
  return out;
}

/** Keys an agent answers to: its id and its name without spaces (both lower case). */
function keysOf(candidate: MentionCandidate): string[] {
  const keys = [candidate.id.toLowerCase()];
  if (candidate.name) {
    const compact = candidate.name.normalize("NFKC").toLowerCase().replace(/\s+/g, "");
    if (compact !== "") keys.push(compact, candidate.name.toLowerCase().trim().replace(/\s+/g, "-"));
  }
  return keys;
}

/** Resolves the mentions of a message against the channel's agents and people; others are ignored. */
export function parseMentions(
  text: string,
  agents: readonly MentionCandidate[],
  users: readonly MentionCandidate[] = [],
): ParsedMentions {
  const agentByKey = new Map<string, string>();
  for (const agent of agents) {
    for (const key of keysOf(agent)) if (!agentByKey.has(key)) agentByKey.set(key, agent.id);
  }
  const userByKey = new Map<string, string>();
  for (const user of users) {
    for (const key of keysOf(user)) if (!userByKey.has(key)) userByKey.set(key, user.id);
  }

  const result: ParsedMentions = { all: false, chain: false, agentIds: [], userIds: [] };
  for (const token of mentionTokens(text)) {
    const agentId = agentByKey.get(token);
    const userId = userByKey.get(token);
    if (agentId !== undefined) {
      if (!result.agentIds.includes(agentId)) result.agentIds.push(agentId);
    } else if (userId !== undefined) {
      if (!result.userIds.includes(userId)) result.userIds.push(userId);
    } else if (token === "all") {
      result.all = true;
    } else if (token === "chain") {
      result.chain = true;
    }
  }
  return result;
}
