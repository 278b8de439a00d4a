/**
 * Takes a verified inbound message into the team: drops duplicates, maps the external user to a
 * Dimsum user and the external chat to a direct channel with the connector's agent (creating both
 * on first contact), and posts the text, which starts the agent's run. Messages of one connector are
 * taken one at a time so first contacts never create a user or channel twice.
 */
import { createHash, randomBytes } from "node:crypto";
import { invalid, isRefusal } from "../errors.js";
import { KeyedLock } from "../team/keyed-lock.js";
import type { Actor, ChannelRecord, Team } from "../team/types.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { ConnectorRecord, ConnectorUsers, InboundMessage } from "./types.js";

/** The identity a connector acts with to create its chats' channels (it leaves them afterwards). */
export function serviceActor(connectorId: string): Actor {
  return { userId: `connector:${connectorId}`, role: "admin" };
}

const PREFIX: Record<ConnectorRecord["type"], string> = {
  telegram: "tg",
  webhook: "wh",
  feishu: "fs",
  dingtalk: "dt",
  wecom: "wc",
};
const MAX_TEXT_BYTES = 32 * 1024;

function slug(text: string | undefined, max: number): string {
  return (text ?? "")
    .normalize("NFKD")
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, max)
    .replace(/-+$/, "")
    .toLowerCase();
}

/** `tg-alice-3f9a2c`: readable in channel lists, unique per connector and external user. */
export function guestUsername(
  connector: ConnectorRecord,
  externalUserId: string,
  name?: string,
  salt = "",
): string {
  const hash = createHash("sha256").update(`${connector.id}\u0000${externalUserId}${salt}`).digest("hex");
  const middle = slug(name, 20);
  return `${PREFIX[connector.type]}-${middle ? `${middle}-` : ""}${hash.slice(0, 6)}`;
}

function channelName(connector: ConnectorRecord, message: InboundMessage): string {
  const who = message.chat.name?.trim() || message.user.name?.trim() || message.chat.id;
  return `${connector.name}: ${who}`.slice(0, 100);
}

export interface InboundPipelineDeps {
  team: Team;
  mappings: MappingRepo;
  users: ConnectorUsers;
  now: () => number;
  /** A chat was mapped to a channel (the answer router caches it). */
  onMapped(channelId: string, connectorId: string, chatId: string): void;
  /** Tells the external chat why its message was not taken (queued in the outbox). */
  notify(connector: ConnectorRecord, chatId: string, text: string): Promise<void>;
}

/**
 * The Dimsum user an external user's messages post as, without creating one: the connector's user
 * (`userMode: "user"`) or the user mapped on their first message; undefined when there is none.
 */
export async function mappedActor(
  users: ConnectorUsers,
  mappings: MappingRepo,
  connector: ConnectorRecord,
  externalUserId: string,
): Promise<Actor | undefined> {
  const userId =
    connector.userMode === "user" ? connector.userId : await mappings.userFor(connector.id, externalUserId);
  const user = userId ? await users.get(userId) : undefined;
  return user ? { userId: user.id, role: user.role } : undefined;
}

/** Inbound messages into channels. */
export class InboundPipeline {
  readonly #deps: InboundPipelineDeps;
  readonly #lock = new KeyedLock();

  constructor(deps: InboundPipelineDeps) {
    this.#deps = deps;
  }

  /** Takes one message; false when it was a duplicate. Throws only when it should be retried. */
  take(connector: ConnectorRecord, message: InboundMessage): Promise<boolean> {
    return this.#lock.run(connector.id, () => this.#take(connector, message));
  }

  async #take(connector: ConnectorRecord, message: InboundMessage): Promise<boolean> {
    const { mappings } = this.#deps;
    const key = message.dedupeKey;
    if (key !== undefined && !(await mappings.claim(connector.id, key, this.#deps.now()))) return false;
    try {
      const text = message.text.trim();
      if (Buffer.byteLength(text) > MAX_TEXT_BYTES) {
        throw invalid(`The message is longer than ${MAX_TEXT_BYTES / 1024} KB.`, "send it in parts");
      }
      const actor = await this.#actorFor(connector, message);
      const channelId = await this.#channelFor(connector, message, actor);
      await this.#deps.team.postMessage(actor, channelId, text);
      return true;
    } catch (err) {
      // A refusal (deleted agent, message too long) is final: say so in the chat, keep the key.
      if (isRefusal(err)) {
        await this.#deps.notify(
          connector,
          message.chat.id,
          `⚠️ Dimsum could not take this message: ${err.toLine()}`,
        );
        return true;
      }
      if (key !== undefined) await mappings.release(connector.id, key);
      throw err;
    }
  }

  async #actorFor(connector: ConnectorRecord, message: InboundMessage): Promise<Actor> {
    const { users, mappings } = this.#deps;
    const existing = await mappedActor(users, mappings, connector, message.user.id);
    if (existing) return existing;
    if (connector.userMode === "user") {
      throw invalid(
        `The connector "${connector.name}" posts as a user who no longer exists.`,
        "choose another user for it in the connectors page",
      );
    }
    let created: { id: string } | undefined;
    for (let attempt = 0; created === undefined; attempt++) {
      const salt = attempt === 0 ? "" : randomBytes(4).toString("hex");
      try {
        created = await users.createGuest(guestUsername(connector, message.user.id, message.user.name, salt));
      } catch (err) {
        const taken = err instanceof Error && "code" in err && err.code === "conflict";
        if (!taken || attempt >= 3) throw err;
      }
    }
    await mappings.setUser(connector.id, message.user.id, created.id);
    return { userId: created.id, role: "guest" };
  }

  async #channelFor(connector: ConnectorRecord, message: InboundMessage, actor: Actor): Promise<string> {
    const { team, mappings } = this.#deps;
    const service = serviceActor(connector.id);
    const mapped = await mappings.channelFor(connector.id, message.chat.id);
    let channel: ChannelRecord | undefined;
    if (mapped) {
      channel = await team.getChannel(service, mapped).catch((err: unknown) => {
        if (isRefusal(err) && err.code === "not_found") return undefined;
        throw err;
      });
    }
    // A changed agent starts a fresh chat rather than talking over the old agent's history.
    if (channel && channel.leaderAgentId === connector.agentId) {
      if (!channel.members.some((m) => m.type === "user" && m.id === actor.userId)) {
        await team.addMember(service, channel.id, { type: "user", id: actor.userId });
      }
      return channel.id;
    }
    const created = await team.createChannel(service, {
      kind: "direct",
      name: channelName(connector, message),
      agentIds: [connector.agentId],
      userIds: [actor.userId],
    });
    await team.removeMember(service, created.id, { type: "user", id: service.userId });
    await mappings.setChannel(connector.id, message.chat.id, created.id);
    this.#deps.onMapped(created.id, connector.id, message.chat.id);
    return created.id;
  }
}
