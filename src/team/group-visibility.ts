/**
 * The group rule of visibility: every agent of a chat is visible to every person in it. Adding an
 * agent someone in the chat cannot see, or a person who cannot see one of its agents, is refused
 * (409, naming the agent and what to do); an agent the one adding it cannot see is not found (404).
 * Changing an agent's visibility later does not remove it; an agent the author cannot see does not
 * answer their messages (see `AgentService.usable`).
 */
import { conflict } from "../errors.js";
import { canUseResource } from "../shared/visibility.js";
import type { Actor, AgentRecord } from "./types.js";

/** A person's role on the server; undefined for an unknown account (treated as a member). */
export type RoleOf = (userId: string) => Promise<Actor["role"] | undefined>;

/** The people of a chat as viewers (an unknown account sees what a member sees). */
export async function viewersOf(userIds: readonly string[], roleOf: RoleOf | undefined): Promise<Actor[]> {
  return Promise.all(
    userIds.map(async (userId): Promise<Actor> => ({ userId, role: (await roleOf?.(userId)) ?? "member" })),
  );
}

/** Throws `conflict` when a person of the chat cannot see one of its agents. */
export function assertPeopleSee(people: readonly Actor[], agents: readonly AgentRecord[]): void {
  for (const agent of agents) {
    const blind = people.filter((p) => !canUseResource(p, agent));
    if (blind.length > 0) {
      throw conflict(
        `@${agent.id} is not visible to ${blind.length === 1 ? "a person" : `${blind.length} people`} in this chat (${blind
          .map((p) => p.userId)
          .join(", ")}); a chat's agents must be visible to everyone in it.`,
        `share @${agent.id} with them first (its visibility), or leave them out`,
      );
    }
  }
}
