/**
 * Takes a verified inbound message into the team: drops duplicates, maps the external user to a
 * Dimsum user and the external chat to a direct channel with the connector's agent (creating both
 * on first contact), and posts the text, which starts the agent's run. Files the message carries
 * (photos, documents) are checked against the attachment limits, downloaded, stored in the chat and
 * posted with the text; a refused file gets a reply in the chat saying why, and the rest still goes
 * through. Messages of one connector are taken one at a time so first contacts never create a user
 * or channel twice.
 */
import { createHash, randomBytes } from "node:crypto";
import { type AttachmentLimits, limitOf } from "../attachments/kinds.js";
import type { SpeechToTextConfig } from "../config/speech-to-text.js";
import { DimsumError, invalid, isRefusal } from "../errors.js";
import { KeyedLock } from "../team/keyed-lock.js";
import type { Actor, ChannelRecord, Team } from "../team/types.js";
import type { ChatBinder } from "./chat-binder.js";
import { parseChatCommand, runChatCommand } from "./chat-commands.js";
import { FileTooLargeError } from "./file-download.js";
import type { MessageOrigins } from "./message-origins.js";
import type { PersonLinks } from "./person-links.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import {
  type ConnectorRecord,
  type ConnectorUsers,
  DeliveryError,
  type InboundFile,
  type InboundMessage,
} from "./types.js";
import { hearVoice } from "./voice-transcripts.js";

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
  /** What a message may carry (`attachments` in the config file). */
  limits: AttachmentLimits;
  /** A chat was mapped to a channel (the answer router caches it). */
  onMapped(channelId: string, connectorId: string, chatId: string): void;
  /** Tells the external chat why its message was not taken (queued in the outbox). */
  notify(connector: ConnectorRecord, chatId: string, text: string): Promise<void>;
  /** Chats bound to groups, and people linked to web accounts. */
  binder: ChatBinder;
  links: PersonLinks;
  /** Messages posted from external chats (not mirrored back to them). */
  origins: MessageOrigins;
  /** Where voice messages without the platform's text are transcribed; unset: they are said unread. */
  speechToText?: SpeechToTextConfig;
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

/** What a chat is told of a kind of message Dimsum does not read. */
export const UNSUPPORTED_TEXT =
  "it reads text, photos and images, PDFs and text files (Markdown, code, CSV, JSON); send it as one of those.";

/** Times a file is asked for again after passing platform failures before it is left out. */
export const MAX_FILE_TRIES = 3;
const MAX_TRACKED_FILES = 1000;

/** Inbound messages into channels. */
export class InboundPipeline {
  readonly #deps: InboundPipelineDeps;
  readonly #lock = new KeyedLock();
  /** Passing download failures of one message's file so far (connector, message and file → tries). */
  readonly #fileTries = new Map<string, number>();

  constructor(deps: InboundPipelineDeps) {
    this.#deps = deps;
  }

  /** Takes one message; false when it was a duplicate. Throws only when it should be retried. */
  take(connector: ConnectorRecord, message: InboundMessage): Promise<boolean> {
    return this.#lock.run(connector.id, () => this.#take(connector, message));
  }

  async #take(connector: ConnectorRecord, received: InboundMessage): Promise<boolean> {
    const { mappings } = this.#deps;
    const key = received.dedupeKey;
    if (key !== undefined && !(await mappings.claim(connector.id, key, this.#deps.now()))) return false;
    try {
      // A voice message becomes its transcript (or is said unread) before anything else reads it.
      const { message, notice } = await hearVoice(received, this.#deps.speechToText);
      if (notice) await this.#deps.notify(connector, message.chat.id, notice);
      const text = message.text.trim();
      if (Buffer.byteLength(text) > MAX_TEXT_BYTES) {
        throw invalid(`The message is longer than ${MAX_TEXT_BYTES / 1024} KB.`, "send it in parts");
      }
      const actor = await this.#actorFor(connector, message);
      const channelId = await this.#channelFor(connector, message, actor);
      const bindings = this.#deps.binder.bindings(connector.id);
      const now = this.#deps.now();
      await bindings.sawChat(message.chat.id, message.chat.name, message.chat.group === true, now);
      await bindings.sawPerson(message.user.id, message.user.name, now);
      const command = parseChatCommand(text);
      if (command) {
        const { team, binder, links } = this.#deps;
        const reply = await runChatCommand(
          { team, binder, links },
          connector,
          message,
          actor,
          channelId,
          command,
        );
        await this.#deps.notify(connector, message.chat.id, reply);
        return true;
      }
      const { ids, names, refused } = await this.#files(connector, channelId, message);
      // A message needs text: a file sent without a caption is posted under its name.
      const posted = text !== "" ? text : names.map((name) => `📎 ${name}`).join("\n");
      if (posted !== "") {
        this.#deps.origins.mark(channelId, actor.userId, posted);
        await this.#deps.team.postMessage(actor, channelId, posted, {
          attachments: ids,
          messenger: { platform: connector.type, name: message.user.name ?? message.user.id },
        });
      }
      for (const line of refused) await this.#deps.notify(connector, message.chat.id, line);
      for (const what of message.unsupported ?? []) {
        await this.#deps.notify(
          connector,
          message.chat.id,
          `⚠️ Dimsum did not take ${what}: ${UNSUPPORTED_TEXT}`,
        );
      }
      return true;
    } catch (err) {
      // A refusal (deleted agent, message too long) is final: say so in the chat, keep the key.
      if (isRefusal(err)) {
        await this.#deps.notify(
          connector,
          received.chat.id,
          `⚠️ Dimsum could not take this message: ${err.toLine()}`,
        );
        return true;
      }
      if (key !== undefined) await mappings.release(connector.id, key);
      throw err;
    }
  }

  /**
   * Downloads, checks and stores the files of a message in its chat. A file over the limits, of a
   * kind Dimsum does not take, or that the platform refuses to hand out is left out with a line for
   * the chat; a passing platform failure throws (the message is taken again later), up to
   * MAX_FILE_TRIES times for one file, after which the file is left out too, so one file the platform
   * keeps failing on does not hold up every later message of the connector.
   */
  async #files(
    connector: ConnectorRecord,
    channelId: string,
    message: InboundMessage,
  ): Promise<{ ids: string[]; names: string[]; refused: string[] }> {
    const { limits, team } = this.#deps;
    const files: readonly InboundFile[] = message.files ?? [];
    const ids: string[] = [];
    const names: string[] = [];
    const refused: string[] = [];
    const ceiling = Math.max(limitOf("image", limits), limitOf("pdf", limits), limitOf("text", limits));
    for (const [index, file] of files.entries()) {
      try {
        if (index >= limits.filesPerMessage) {
          throw new DimsumError(
            "too_large",
            `${file.name} is file ${index + 1}; a message may carry at most ${limits.filesPerMessage}`,
          );
        }
        if (file.size !== undefined && file.size > ceiling) throw tooLarge(file.name, limits);
        const triesKey = `${connector.id}\n${message.dedupeKey ?? message.chat.id}\n${index}`;
        const data = await file.download(ceiling, AbortSignal.timeout(120_000)).catch((err: unknown) => {
          if (err instanceof FileTooLargeError) throw tooLarge(file.name, limits);
          if (err instanceof DeliveryError && !err.retryable) {
            throw new DimsumError("invalid", `${file.name} could not be downloaded: ${err.message}`);
          }
          const tries = this.#triedAgain(triesKey);
          if (tries >= MAX_FILE_TRIES) {
            const reason = err instanceof Error ? err.message : String(err);
            throw new DimsumError(
              "invalid",
              `${file.name} could not be downloaded after ${tries} tries (${reason}); send it again`,
            );
          }
          throw err;
        });
        this.#fileTries.delete(triesKey);
        // Checked (kind by its bytes, the kind's limit) as it is stored.
        const stored = await team.uploadAttachment(serviceActor(connector.id), channelId, file.name, data);
        ids.push(stored.id);
        names.push(stored.name);
      } catch (err) {
        const refusal = err instanceof DimsumError && (err.code === "too_large" || isRefusal(err));
        if (!refusal) throw err;
        refused.push(`⚠️ Dimsum did not take ${file.name}: ${refusalText(err)}`);
      }
    }
    return { ids, names, refused };
  }

  /** Counts one more passing failure of a file; the count is forgotten once it reaches the cap. */
  #triedAgain(key: string): number {
    const tries = (this.#fileTries.get(key) ?? 0) + 1;
    this.#fileTries.delete(key);
    if (tries < MAX_FILE_TRIES) this.#fileTries.set(key, tries);
    // Bounded: the oldest counts go first (a message retried that long ago is not coming back).
    for (const oldest of this.#fileTries.keys()) {
      if (this.#fileTries.size <= MAX_TRACKED_FILES) break;
      this.#fileTries.delete(oldest);
    }
    return tries;
  }

  async #actorFor(connector: ConnectorRecord, message: InboundMessage): Promise<Actor> {
    const { users, mappings } = this.#deps;
    const existing = await mappedActor(users, mappings, connector, message.user.id);
    // A web account is used only while the person is linked to it (an unlinked one gets a guest).
    if (existing && (existing.role === "guest" || connector.userMode === "user")) return existing;
    if (existing && (await this.#deps.links.linked(connector.id, message.user.id))) return existing;
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
    // A changed agent starts a fresh chat rather than talking over the old agent's history; a chat
    // bound to a group stays the group.
    if (channel && (channel.kind === "group" || channel.leaderAgentId === connector.agentId)) {
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

const MB = 1024 * 1024;

function megabytes(bytes: number): string {
  const mb = bytes / MB;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** A file over every limit (its kind unknown until it is read): says all of them. */
function tooLarge(name: string, limits: AttachmentLimits): DimsumError {
  return new DimsumError(
    "too_large",
    `${name} is too large; Dimsum takes images up to ${megabytes(limits.imageBytes)}, PDFs up to ${megabytes(limits.pdfBytes)} and text files up to ${megabytes(limits.textBytes)}`,
  );
}

/** Why a file was refused, for the person in the chat (the config setting is the operator's business). */
function refusalText(err: DimsumError): string {
  if (err.code === "too_large") return `${err.message}. Send a smaller file.`;
  return err.hint ? `${err.message}; ${err.hint}.` : `${err.message}.`;
}
