/**
 * What a run may reach on behalf of its person: the agents `call_agent` may call are those the
 * run's person may see (src/shared/visibility.ts). A run without a person (system) sees only agents
 * visible to everyone.
 */
import { canUseResource, type Viewer } from "../shared/visibility.js";
import type { TeamStore } from "./team-store.js";
import type { AgentRecord } from "./types.js";

/** The person a run acts for, as a viewer (their role looked up; an unknown id is a member). */
export type ViewerOf = (userId: string) => Promise<Viewer>;

/** A viewer from a role lookup; without one every person is a member. */
export function viewerLookup(
  roleOf: ((userId: string) => Viewer["role"] | undefined | Promise<Viewer["role"] | undefined>) | undefined,
): ViewerOf {
  return async (userId) => ({ userId, role: (await roleOf?.(userId)) ?? "member" });
}

/** The agent lookups of `call_agent` for a run of `requestedBy`: hidden agents read as unknown. */
export function callableAgents(
  store: TeamStore,
  viewerOf: ViewerOf | undefined,
  requestedBy: string,
): { getAgent(id: string): Promise<AgentRecord | undefined>; listAgentIds(): Promise<string[]> } {
  const viewer = (viewerOf ?? viewerLookup(undefined))(requestedBy);
  return {
    async getAgent(id) {
      const agent = await store.agents.get(id);
      return agent && canUseResource(await viewer, agent) ? agent : undefined;
    },
    async listAgentIds() {
      const who = await viewer;
      return (await store.agents.list()).filter((a) => canUseResource(who, a)).map((a) => a.id);
    },
  };
}
