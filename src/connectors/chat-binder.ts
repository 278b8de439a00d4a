/**
 * Binds an external chat to a Dimsum channel: a direct chat with the connector's agent (the default,
 * made on the chat's first message) or a Dimsum group, whose agents, leader, chain and queue mode
 * then answer the chat as they answer the web group. One group is bound to at most one external chat
 * (answers go back to the chat the channel belongs to). Binding is for people who may manage the
 * group (its members and admins; never guests); the connectors page and `/bind` in the chat use it.
 */
import { conflict, forbidden, invalid, isRefusal } from "../errors.js";
import { canManageChannel } from "../team/access.js";
import type { Actor, ChannelRecord, Team } from "../team/types.js";
import { serviceActor } from "./inbound-pipeline.js";
import { type ChatBinding, ChatBindings } from "./store/chat-bindings.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { ConnectorRecord } from "./types.js";

export interface ChatBinderDeps {
  team: Team;
  mappings: MappingRepo;
  now: () => number;
  /** A chat now answers from this channel (the answer router caches it). */
  onMapped(channelId: string, connectorId: string, chatId: string): void;
  /** A channel no longer belongs to an external chat. */
  onUnmapped(channelId: string): void;
}

/** A chat as the connectors page shows it. */
export interface ChatView {
  chatId: string;
  name?: string;
  group: boolean;
  lastAt: number;
  mode: "direct" | "group";
  channelId?: string;
  channelName?: string;
  mirror: boolean;
}

/** Binding external chats to channels. */
export class ChatBinder {
  readonly #deps: ChatBinderDeps;

  constructor(deps: ChatBinderDeps) {
    this.#deps = deps;
  }

  bindings(connectorId: string): ChatBindings {
    return new ChatBindings(this.#deps.mappings.stateOf(connectorId));
  }

  /** The chats a connector has seen, with how each is bound. */
  async chats(connector: ConnectorRecord): Promise<ChatView[]> {
    const bindings = this.bindings(connector.id);
    const service = serviceActor(connector.id);
    const out: ChatView[] = [];
    for (const chat of await bindings.chats()) {
      const binding = await bindings.binding(chat.chatId);
      const channelId = await this.#deps.mappings.channelFor(connector.id, chat.chatId);
      const channel = channelId ? await this.#channel(service, channelId) : undefined;
      out.push({
        chatId: chat.chatId,
        ...(chat.name ? { name: chat.name } : {}),
        group: chat.group,
        lastAt: chat.lastAt,
        mode: channel?.kind === "group" ? "group" : "direct",
        ...(channel ? { channelId: channel.id, channelName: channel.name } : {}),
        mirror: binding?.mirror ?? true,
      });
    }
    return out;
  }

  async #channel(actor: Actor, id: string): Promise<ChannelRecord | undefined> {
    try {
      return await this.#deps.team.getChannel(actor, id);
    } catch (err) {
      if (isRefusal(err) && err.code === "not_found") return undefined;
      throw err;
    }
  }

  /** The group a chat is bound to, if it is (and the group still exists). */
  async groupOf(connectorId: string, chatId: string): Promise<ChannelRecord | undefined> {
    const channelId = await this.#deps.mappings.channelFor(connectorId, chatId);
    if (!channelId) return undefined;
    const channel = await this.#channel(serviceActor(connectorId), channelId);
    return channel?.kind === "group" ? channel : undefined;
  }

  /** Finds a group the actor may manage by id or name (case-insensitive). */
  async findGroup(actor: Actor, ref: string): Promise<ChannelRecord> {
    const wanted = ref.trim().toLowerCase();
    const groups = (await this.#deps.team.listChannels(actor)).filter((c) => c.kind === "group");
    const found =
      groups.find((c) => c.id.toLowerCase() === wanted) ??
      groups.find((c) => c.name.toLowerCase() === wanted);
    if (!found) {
      throw invalid(
        `No group "${ref.trim()}" that you can see.`,
        "send /bind with a group's name or id as the web UI shows it",
      );
    }
    return found;
  }

  /** Binds a chat to a group the actor may manage; the people of the chat join it as they speak. */
  async bindGroup(
    actor: Actor,
    connector: ConnectorRecord,
    chatId: string,
    channelId: string,
  ): Promise<ChatView> {
    const { team, mappings } = this.#deps;
    const channel = await team.getChannel(actor, channelId);
    if (channel.kind !== "group")
      throw invalid(`"${channel.name}" is a direct chat, not a group.`, "pick a group");
    if (!canManageChannel(actor, channel)) {
      throw forbidden(`Only the group's members and admins can bind it.`, "ask a member of the group");
    }
    const other = await mappings.chatOf(channel.id);
    if (other && (other.connectorId !== connector.id || other.chatId !== chatId)) {
      throw conflict(
        `The group "${channel.name}" is already bound to another external chat.`,
        "unbind it there first (keep that chat direct), or make a new group from a template",
      );
    }
    const bindings = this.bindings(connector.id);
    const before = await bindings.binding(chatId);
    const current = await mappings.channelFor(connector.id, chatId);
    const currentChannel = current ? await this.#channel(serviceActor(connector.id), current) : undefined;
    const direct = currentChannel?.kind === "direct" ? currentChannel.id : before?.directChannelId;
    const binding: ChatBinding = {
      mode: "group",
      channelId: channel.id,
      mirror: before?.mirror ?? true,
      ...(direct ? { directChannelId: direct } : {}),
      boundBy: actor.userId,
      boundAt: this.#deps.now(),
    };
    await bindings.setBinding(chatId, binding);
    await mappings.setChannel(connector.id, chatId, channel.id);
    this.#deps.onMapped(channel.id, connector.id, chatId);
    return this.#view(connector, chatId);
  }

  /**
   * Makes a chat a direct chat with the connector's agent again: the direct chat it had, when it still
   * exists with that agent, else a new one on its next message.
   */
  async keepDirect(actor: Actor, connector: ConnectorRecord, chatId: string): Promise<ChatView> {
    const { mappings } = this.#deps;
    const bindings = this.bindings(connector.id);
    const group = await this.groupOf(connector.id, chatId);
    if (group && !canManageChannel(actor, group)) {
      throw forbidden("Only the group's members and admins can unbind it.", "ask a member of the group");
    }
    const before = await bindings.binding(chatId);
    const service = serviceActor(connector.id);
    const direct = before?.directChannelId ? await this.#channel(service, before.directChannelId) : undefined;
    if (direct && direct.kind === "direct" && direct.leaderAgentId === connector.agentId) {
      await mappings.setChannel(connector.id, chatId, direct.id);
      this.#deps.onMapped(direct.id, connector.id, chatId);
    } else if (group) {
      // A fresh direct chat, made with the chat's next message.
      const made = await this.#deps.team.createChannel(service, {
        kind: "direct",
        name: `${connector.name}: ${(await bindings.chat(chatId))?.name ?? chatId}`.slice(0, 100),
        agentIds: [connector.agentId],
        userIds: [],
      });
      await this.#deps.team.removeMember(service, made.id, { type: "user", id: service.userId });
      await mappings.setChannel(connector.id, chatId, made.id);
      this.#deps.onMapped(made.id, connector.id, chatId);
    }
    if (group) this.#deps.onUnmapped(group.id);
    const channelId = (await mappings.channelFor(connector.id, chatId)) ?? "";
    await bindings.setBinding(chatId, {
      mode: "direct",
      channelId,
      mirror: before?.mirror ?? true,
      ...(channelId ? { directChannelId: channelId } : {}),
      boundBy: actor.userId,
      boundAt: this.#deps.now(),
    });
    return this.#view(connector, chatId);
  }

  /** Turns posting web messages to the external chat on or off. */
  async setMirror(connector: ConnectorRecord, chatId: string, mirror: boolean): Promise<ChatView> {
    const bindings = this.bindings(connector.id);
    const before = await bindings.binding(chatId);
    const channelId = (await this.#deps.mappings.channelFor(connector.id, chatId)) ?? "";
    await bindings.setBinding(chatId, {
      mode: before?.mode ?? "direct",
      channelId: before?.channelId ?? channelId,
      ...(before?.directChannelId ? { directChannelId: before.directChannelId } : {}),
      boundBy: before?.boundBy ?? connector.createdBy,
      boundAt: before?.boundAt ?? this.#deps.now(),
      mirror,
    });
    return this.#view(connector, chatId);
  }

  /** Whether web messages of a chat's group are posted to it. */
  async mirrors(connectorId: string, chatId: string): Promise<boolean> {
    return (await this.bindings(connectorId).binding(chatId))?.mirror ?? true;
  }

  async #view(connector: ConnectorRecord, chatId: string): Promise<ChatView> {
    const all = await this.chats(connector);
    const found = all.find((c) => c.chatId === chatId);
    if (found) return found;
    const channelId = await this.#deps.mappings.channelFor(connector.id, chatId);
    const channel = channelId ? await this.#channel(serviceActor(connector.id), channelId) : undefined;
    return {
      chatId,
      group: false,
      lastAt: 0,
      mode: channel?.kind === "group" ? "group" : "direct",
      ...(channel ? { channelId: channel.id, channelName: channel.name } : {}),
      mirror: await this.mirrors(connector.id, chatId),
    };
  }
}
