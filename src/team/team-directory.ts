/**
 * The directory side of the team facade: the agents (with what their model reads besides text), the
 * tools they can be granted, and the channels with their members, prefs, titles and chains.
 */

import type { CapabilityAssembly } from "../capabilities/index.js";
import { conflict, invalid } from "../errors.js";
import { assertNotGuest } from "./access.js";
import { chatTitle } from "./chat-title.js";
import { type TeamParts, whenReady } from "./team-parts.js";
import type { AgentRecord, Team } from "./types.js";

export interface DirectoryExtras {
  capabilities: CapabilityAssembly;
  /** Ends a chat's processes and browser (when it is archived or deleted). */
  endProcesses: (channelId: string, why: string) => Promise<unknown>;
}

/** The team's methods on agents, the tool catalogue and channels. */
export function directorySide(
  parts: TeamParts,
  { capabilities, endProcesses }: DirectoryExtras,
): Pick<
  Team,
  | "listTools"
  | "listAgents"
  | "getAgent"
  | "attachmentLimits"
  | "createAgent"
  | "updateAgent"
  | "deleteAgent"
  | "getSoul"
  | "putSoul"
  | "listChannels"
  | "setChannelPrefs"
  | "titleChannel"
  | "getChannel"
  | "createChannel"
  | "updateChannel"
  | "deleteChannel"
  | "addMember"
  | "removeMember"
  | "setChain"
> {
  const { deps, ready, store, runtime, agents, channels } = parts;

  /** The agent with what its model reads besides text, when its model resolves and is known. */
  async function withModelInput(agent: AgentRecord): Promise<AgentRecord> {
    const model = await Promise.resolve()
      .then(() => runtime.resolveModel(agent))
      .catch(() => undefined);
    if (!model?.input) return agent;
    return { ...agent, modelInput: { model: `${model.provider}:${model.id}`, ...model.input } };
  }

  return {
    async listTools(actor) {
      await ready;
      assertNotGuest(actor, "list the tools agents can use");
      await capabilities.ready();
      return capabilities.catalogue(actor);
    },
    async listAgents(actor) {
      await ready;
      return Promise.all((await agents.list(actor)).map(withModelInput));
    },
    getAgent: whenReady(ready, async (actor, id) => withModelInput(await agents.get(id, actor))),
    attachmentLimits: () => deps.config.attachments,
    createAgent: whenReady(ready, async (actor, input) => withModelInput(await agents.create(actor, input))),
    updateAgent: whenReady(ready, async (actor, id, patch) =>
      withModelInput(await agents.update(actor, id, patch)),
    ),
    deleteAgent: whenReady(ready, (actor, id) => agents.delete(actor, id)),
    getSoul: whenReady(ready, (actor, id) => agents.getSoul(actor, id)),
    putSoul: whenReady(ready, (actor, id, content) => agents.putSoul(actor, id, content)),

    listChannels: whenReady(ready, (actor) => channels.list(actor)),
    async setChannelPrefs(actor, id, patch) {
      await ready;
      const prefs = await channels.setPrefs(actor, id, patch);
      if (patch.archived === true) await endProcesses(id, "the chat was archived");
      return prefs;
    },
    async titleChannel(actor, id) {
      await ready;
      const channel = await channels.visible(actor, id);
      if (channel.kind !== "direct") throw invalid("Only a direct chat is named after its first exchange.");
      const first = await store.messages.list(id, { limit: 6, after: 0 });
      const question = first.find((m) => m.author.type === "user");
      const answer = first.find((m) => m.author.type === "agent" && m.text.trim() !== "");
      if (!question) throw conflict("The chat has no message yet to name it after.", "send a message first");
      const agent = channel.leaderAgentId ? await store.agents.get(channel.leaderAgentId) : undefined;
      const model = agent
        ? await Promise.resolve()
            .then(() => runtime.resolveModel(agent))
            .catch(() => undefined)
        : undefined;
      const name = await chatTitle(question.text, answer?.text, model, {
        ...(deps.stream ? { stream: deps.stream } : {}),
        ...(deps.streamOptions ? { streamOptions: deps.streamOptions } : {}),
      });
      return channels.update(actor, id, { name });
    },
    getChannel: whenReady(ready, (actor, id) => channels.visible(actor, id)),
    createChannel: whenReady(ready, (actor, input) => channels.create(actor, input)),
    updateChannel: whenReady(ready, (actor, id, patch) => channels.update(actor, id, patch)),
    deleteChannel: whenReady(ready, (actor, id) => channels.delete(actor, id)),
    addMember: whenReady(ready, (actor, channelId, member) => channels.addMember(actor, channelId, member)),
    removeMember: whenReady(ready, (actor, channelId, member) =>
      channels.removeMember(actor, channelId, member),
    ),
    setChain: whenReady(ready, (actor, channelId, steps) => channels.setChain(actor, channelId, steps)),
  };
}
