/**
 * Channels (direct chats and groups), members, the collaboration chain, and reading messages:
 * paging, read markers, deletion and search. Every method checks the actor's access first.
 */
import { randomBytes } from "node:crypto";
import { conflict, forbidden, invalid, notFound } from "../errors.js";
import { canUseResource } from "../shared/visibility.js";
import {
  assertCanCreateChannel,
  assertCanDeleteMessage,
  assertCanManage,
  assertCanSee,
  canSeeChannel,
  channelNotFound,
  isAdmin,
  isMember,
} from "./access.js";
import { agentNotFound } from "./agent-service.js";
import type { EventBus, MembershipIndex } from "./event-bus.js";
import { assertPeopleSee, type RoleOf, viewersOf } from "./group-visibility.js";
import { searchExpression } from "./search-text.js";
import type { ChannelPrefs } from "./store/repositories.js";
import type { TeamStore } from "./team-store.js";
import type {
  Actor,
  AgentRecord,
  ChainStep,
  ChannelInput,
  ChannelListing,
  ChannelMember,
  ChannelMessage,
  ChannelRecord,
  QueueMode,
} from "./types.js";

const MAX_PAGE = 200;
const DEFAULT_PAGE = 50;
const MAX_CHAIN = 12;

export interface ChannelServiceDeps {
  store: TeamStore;
  members: MembershipIndex;
  bus: EventBus;
  now: () => number;
  /** Cancels the channel's live runs before it is deleted. */
  onDeleting: (channelId: string) => Promise<void>;
  /** People's roles, for the group rule of visibility (src/team/group-visibility.ts). */
  roleOf?: RoleOf;
}

/** Channels and their messages, as seen by one actor at a time. */
export class ChannelService {
  readonly #deps: ChannelServiceDeps;

  constructor(deps: ChannelServiceDeps) {
    this.#deps = deps;
  }

  /** The channel, or `not_found`. */
  async require(id: string): Promise<ChannelRecord> {
    const channel = await this.#deps.store.channels.get(id);
    if (!channel) throw channelNotFound();
    return channel;
  }

  /** The channel if the actor may see it. */
  async visible(actor: Actor, id: string): Promise<ChannelRecord> {
    const channel = await this.require(id);
    assertCanSee(actor, channel);
    return channel;
  }

  /** Channels the actor may see, with their unread counts and whether the actor pinned or archived them. */
  async list(actor: Actor): Promise<ChannelListing[]> {
    const all = await this.#deps.store.channels.list();
    const mine = all.filter((c) => isAdmin(actor) || isMember(actor, c));
    const [unread, prefs] = await Promise.all([
      this.#deps.store.messages.unread(
        actor.userId,
        mine.map((c) => c.id),
      ),
      this.#deps.store.channels.prefsOf(actor.userId),
    ]);
    return mine.map((c) => ({ ...c, unread: unread.get(c.id) ?? 0, ...prefs.get(c.id) }));
  }

  /** Pins or archives a chat for the actor alone (anyone who can see it); returns the actor's listing of it. */
  async setPrefs(
    actor: Actor,
    id: string,
    patch: { pinned?: boolean; archived?: boolean },
  ): Promise<ChannelPrefs> {
    const channel = await this.visible(actor, id);
    const current = (await this.#deps.store.channels.prefsOf(actor.userId)).get(channel.id) ?? {};
    const now = this.#deps.now();
    const next: ChannelPrefs = { ...current };
    if (patch.pinned === true) next.pinnedAt = current.pinnedAt ?? now;
    if (patch.pinned === false) delete next.pinnedAt;
    if (patch.archived === true) next.archivedAt = current.archivedAt ?? now;
    if (patch.archived === false) delete next.archivedAt;
    await this.#deps.store.channels.setPrefs(channel.id, actor.userId, next);
    return next;
  }

  /** Creates a channel; the creator is always a member. */
  async create(actor: Actor, input: ChannelInput): Promise<ChannelRecord> {
    assertCanCreateChannel(actor);
    const name = typeof input.name === "string" ? input.name.trim() : "";
    if (name === "" || name.length > 100) throw invalid("A channel needs a name of 1 to 100 characters.");
    if (input.kind !== "direct" && input.kind !== "group") {
      throw invalid('Channel kind must be "direct" or "group".');
    }
    const agentIds = [...new Set(input.agentIds ?? [])];
    const agents = await this.#requireAgents(actor, agentIds);
    if (input.kind === "direct" && agentIds.length !== 1) {
      throw invalid("A direct chat has exactly one agent.", "create a group for several agents");
    }
    const leader = input.kind === "direct" ? agentIds[0] : input.leaderAgentId;
    if (leader !== undefined && !agentIds.includes(leader)) {
      throw invalid(`The leader @${leader} must be one of the channel's agents.`);
    }
    const userIds = [...new Set([actor.userId, ...(input.userIds ?? [])])];
    assertPeopleSee(await viewersOf(userIds, this.#deps.roleOf), agents);
    const now = this.#deps.now();
    const channel: ChannelRecord = {
      id: `ch_${randomBytes(9).toString("base64url").replace(/[-_]/g, "x")}`,
      kind: input.kind,
      name,
      members: [
        ...userIds.map((id): ChannelMember => ({ type: "user", id })),
        ...agentIds.map((id): ChannelMember => ({ type: "agent", id })),
      ],
      chain: [],
      createdBy: actor.userId,
      createdAt: now,
      updatedAt: now,
    };
    if (leader !== undefined) channel.leaderAgentId = leader;
    await this.#deps.store.channels.insert(channel);
    for (const id of userIds) this.#deps.members.add(channel.id, id);
    this.#changed(channel);
    return channel;
  }

  /** Renames the channel or changes its leader (`null` clears it). */
  async update(
    actor: Actor,
    id: string,
    patch: { name?: string; leaderAgentId?: string | null; queueMode?: QueueMode },
  ): Promise<ChannelRecord> {
    const channel = await this.require(id);
    assertCanManage(actor, channel);
    const next: ChannelRecord = { ...channel, updatedAt: this.#deps.now() };
    if (patch.queueMode !== undefined) next.queueMode = patch.queueMode;
    if (patch.name !== undefined) {
      const name = patch.name.trim();
      if (name === "" || name.length > 100) throw invalid("A channel needs a name of 1 to 100 characters.");
      next.name = name;
    }
    if (patch.leaderAgentId === null) {
      if (channel.kind === "direct") throw invalid("A direct chat always answers with its agent.");
      delete next.leaderAgentId;
    } else if (patch.leaderAgentId !== undefined) {
      if (!channel.members.some((m) => m.type === "agent" && m.id === patch.leaderAgentId)) {
        throw invalid(
          `The leader @${patch.leaderAgentId} must be an agent of the channel.`,
          "add the agent first",
        );
      }
      if (channel.kind === "direct" && patch.leaderAgentId !== channel.leaderAgentId) {
        throw invalid("A direct chat always answers with its agent.");
      }
      next.leaderAgentId = patch.leaderAgentId;
    }
    await this.#deps.store.channels.update(next);
    this.#changed(next);
    return next;
  }

  /** Deletes the channel with its messages and flows (creator or admin). */
  async delete(actor: Actor, id: string): Promise<void> {
    const channel = await this.require(id);
    assertCanManage(actor, channel);
    if (!isAdmin(actor) && channel.createdBy !== actor.userId) {
      throw forbidden("Only the channel's creator or an admin can delete it.");
    }
    await this.#deps.onDeleting(id);
    await this.#deps.store.channels.delete(id);
    await this.#deps.store.runs.deleteByChannel(id);
    this.#deps.members.dropChannel(id);
  }

  /** Adds a person or an agent. */
  async addMember(actor: Actor, channelId: string, member: ChannelMember): Promise<ChannelRecord> {
    const channel = await this.require(channelId);
    assertCanManage(actor, channel);
    if (member.type !== "user" && member.type !== "agent") {
      throw invalid('Member type must be "user" or "agent".');
    }
    if (typeof member.id !== "string" || member.id === "") throw invalid("A member needs an id.");
    const people = channel.members.filter((m) => m.type === "user").map((m) => m.id);
    if (member.type === "agent") {
      const agents = await this.#requireAgents(actor, [member.id]);
      if (channel.kind === "direct") throw invalid("A direct chat has exactly one agent.");
      assertPeopleSee(await viewersOf(people, this.#deps.roleOf), agents);
    } else {
      const agents: AgentRecord[] = [];
      for (const m of channel.members) {
        const agent = m.type === "agent" ? await this.#deps.store.agents.get(m.id) : undefined;
        if (agent) agents.push(agent);
      }
      assertPeopleSee(await viewersOf([member.id], this.#deps.roleOf), agents);
    }
    await this.#deps.store.channels.addMember(channelId, member, this.#deps.now());
    if (member.type === "user") this.#deps.members.add(channelId, member.id);
    return this.#touch(channelId);
  }

  /** Removes a person or an agent; an agent in the chain must leave the chain first. */
  async removeMember(actor: Actor, channelId: string, member: ChannelMember): Promise<ChannelRecord> {
    const channel = await this.require(channelId);
    assertCanManage(actor, channel);
    if (member.type === "agent") {
      if (channel.chain.some((s) => s.agentId === member.id)) {
        throw conflict(`@${member.id} is in the collaboration chain.`, "remove it from the chain first");
      }
      if (channel.kind === "direct") {
        throw invalid("A direct chat cannot lose its agent; delete the chat instead.");
      }
    }
    if (!(await this.#deps.store.channels.removeMember(channelId, member))) {
      throw notFound(
        `${member.type === "agent" ? `@${member.id}` : member.id} is not a member of this channel.`,
      );
    }
    if (member.type === "user") this.#deps.members.remove(channelId, member.id);
    if (member.type === "agent" && channel.leaderAgentId === member.id) {
      const next = { ...(await this.require(channelId)) };
      delete next.leaderAgentId;
      await this.#deps.store.channels.update(next);
    }
    return this.#touch(channelId);
  }

  /** Sets the group's collaboration chain; every step's agent must be a member. */
  async setChain(actor: Actor, channelId: string, steps: ChainStep[]): Promise<ChannelRecord> {
    const channel = await this.require(channelId);
    assertCanManage(actor, channel);
    if (channel.kind !== "group") throw invalid("Only group channels have a collaboration chain.");
    if (!Array.isArray(steps) || steps.length > MAX_CHAIN) {
      throw invalid(`A chain has at most ${MAX_CHAIN} steps.`);
    }
    const agents = new Set(channel.members.filter((m) => m.type === "agent").map((m) => m.id));
    const chain = steps.map((s, i): ChainStep => {
      if (!agents.has(s.agentId)) {
        throw invalid(
          `Step ${i}: @${s.agentId} is not an agent of this channel.`,
          "add the agent to the channel first",
        );
      }
      const step: ChainStep = { agentId: s.agentId, requiresApproval: s.requiresApproval === true };
      if (s.instruction?.trim()) step.instruction = s.instruction.trim();
      return step;
    });
    const next = { ...channel, chain, updatedAt: this.#deps.now() };
    await this.#deps.store.channels.update(next);
    this.#changed(next);
    return next;
  }

  /** A page of messages, oldest first. */
  async messages(
    actor: Actor,
    channelId: string,
    options: { before?: number; after?: number; limit?: number } = {},
  ): Promise<ChannelMessage[]> {
    await this.visible(actor, channelId);
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(options.limit ?? DEFAULT_PAGE)));
    const page: { before?: number; after?: number; limit: number } = { limit };
    if (options.before !== undefined) page.before = options.before;
    if (options.after !== undefined) page.after = options.after;
    return this.#deps.store.messages.list(channelId, page);
  }

  async markRead(actor: Actor, channelId: string, messageId: number): Promise<void> {
    await this.visible(actor, channelId);
    await this.#deps.store.messages.setMarker(actor.userId, channelId, messageId, this.#deps.now());
  }

  /** Deletes a message (its author or an admin). */
  async deleteMessage(actor: Actor, messageId: number): Promise<void> {
    const message = await this.#deps.store.messages.get(messageId);
    const channel = message ? await this.#deps.store.channels.get(message.channelId) : undefined;
    // A message of a channel the caller cannot see does not exist for them.
    if (!message || !channel || !canSeeChannel(actor, channel))
      throw notFound(`No message with id ${messageId}.`);
    assertCanDeleteMessage(actor, channel, message.author.type === "user" ? message.author.id : undefined);
    await this.#deps.store.messages.delete(messageId);
    this.#deps.bus.emit({ type: "message_deleted", channelId: channel.id, messageId });
  }

  /** Full-text search over the channels the actor may see (CJK-aware). */
  async search(
    actor: Actor,
    query: string,
    options: { channelId?: string; limit?: number } = {},
  ): Promise<ChannelMessage[]> {
    if (options.channelId !== undefined) await this.visible(actor, options.channelId);
    if (searchExpression(query) === undefined) return [];
    const limit = Math.max(1, Math.min(MAX_PAGE, Math.floor(options.limit ?? DEFAULT_PAGE)));
    const scope: { channelId?: string; memberUserId?: string } = {};
    if (options.channelId !== undefined) scope.channelId = options.channelId;
    if (!isAdmin(actor)) scope.memberUserId = actor.userId;
    return this.#deps.store.messages.search(query, scope, limit);
  }

  /** Removes an agent from every channel it is in (it is being deleted). */
  async dropAgent(agentId: string): Promise<void> {
    const inChain = (await this.#deps.store.channels.list()).filter((c) =>
      c.chain.some((s) => s.agentId === agentId),
    );
    if (inChain.length > 0) {
      throw conflict(
        `@${agentId} is in the collaboration chain of ${inChain.map((c) => `"${c.name}"`).join(", ")}.`,
        "remove it from those chains first",
      );
    }
    for (const channel of await this.#deps.store.channels.list()) {
      if (!channel.members.some((m) => m.type === "agent" && m.id === agentId)) continue;
      await this.#deps.store.channels.removeMember(channel.id, { type: "agent", id: agentId });
      if (channel.leaderAgentId === agentId) {
        const next = { ...channel };
        delete next.leaderAgentId;
        await this.#deps.store.channels.update(next);
      }
      await this.#touch(channel.id);
    }
  }

  /** The agents, each one the actor may see (`not_found` alike for one missing or hidden from them). */
  async #requireAgents(actor: Actor, ids: readonly string[]): Promise<AgentRecord[]> {
    const agents: AgentRecord[] = [];
    for (const id of ids) {
      const agent = await this.#deps.store.agents.get(id);
      if (!agent || !canUseResource(actor, agent)) throw await agentNotFound(this.#deps.store, id, actor);
      agents.push(agent);
    }
    return agents;
  }

  /** Saves the new update time, emits the channel, returns it. */
  async #touch(channelId: string): Promise<ChannelRecord> {
    const channel = { ...(await this.require(channelId)), updatedAt: this.#deps.now() };
    await this.#deps.store.channels.update(channel);
    this.#changed(channel);
    return channel;
  }

  #changed(channel: ChannelRecord): void {
    this.#deps.bus.emit({ type: "channel", channelId: channel.id, channel });
  }
}
