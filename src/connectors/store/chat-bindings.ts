/**
 * What a connector remembers about the chats and people it has seen, beyond the channel and user
 * mappings: each chat's name and kind (for the connectors page), how the chat is bound (a direct
 * chat with the connector's agent, or a Dimsum group; whether web messages are posted to it), which
 * external people are linked to a web account, and the one-time codes people link themselves with.
 *
 * Kept as JSON in the connector's key/value state (`connector_state`), which exists on SQLite and
 * PostgreSQL alike, so no migration is needed and every instance sharing the database sees the same.
 */
import type { DriverState } from "../types.js";

const CHAT = "chat:";
const BINDING = "binding:";
const PERSON = "person:";
const LINK = "link:";
const CODE = "link-code:";
const TRIES = "link-tries:";

/** A chat the connector has taken a message from. */
export interface SeenChat {
  chatId: string;
  name?: string;
  /** A group chat (several people), as the platform says. */
  group: boolean;
  firstAt: number;
  lastAt: number;
}

/** How a chat is bound: absent means the default (a direct chat with the connector's agent). */
export interface ChatBinding {
  /** `group`: the chat is the Dimsum group `channelId`. */
  mode: "direct" | "group";
  channelId: string;
  /** Web messages in the group are posted to the external chat (default on). */
  mirror: boolean;
  /** The direct channel the chat had before it was bound (restored by "keep direct"). */
  directChannelId?: string;
  boundBy: string;
  boundAt: number;
}

/** An external person the connector has seen. */
export interface SeenPerson {
  externalUserId: string;
  name?: string;
  lastAt: number;
}

/** An external person linked to a web account. */
export interface PersonLink {
  userId: string;
  /** `code`: by `/link <code>`; `admin`: set in the connectors page. */
  via: "code" | "admin";
  by: string;
  at: number;
  /** The guest account the person posted as before (they post as it again once unlinked). */
  guestUserId?: string;
  /** The private chat the person linked from (`/link <code>`): where notices to them are sent. */
  privateChatId?: string;
}

/** A one-time code waiting to be sent to a bot. */
export interface LinkCode {
  userId: string;
  expiresAt: number;
}

function parse<T>(raw: string | undefined): T | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}

/** The chats, bindings and people of one connector. */
export class ChatBindings {
  readonly #state: DriverState;

  constructor(state: DriverState) {
    this.#state = state;
  }

  /** Records a message from a chat (its name may change). */
  async sawChat(chatId: string, name: string | undefined, group: boolean, now: number): Promise<void> {
    const known = parse<SeenChat>(await this.#state.get(CHAT + chatId));
    const next: SeenChat = {
      chatId,
      ...((name ?? known?.name) ? { name: name ?? known?.name } : {}),
      group: group || known?.group === true,
      firstAt: known?.firstAt ?? now,
      lastAt: now,
    };
    await this.#state.set(CHAT + chatId, JSON.stringify(next));
  }

  async chat(chatId: string): Promise<SeenChat | undefined> {
    return parse<SeenChat>(await this.#state.get(CHAT + chatId));
  }

  /** Every chat seen, the latest first. */
  async chats(): Promise<SeenChat[]> {
    const rows = await this.#state.list(CHAT);
    return rows
      .map((row) => parse<SeenChat>(row.value))
      .filter((chat): chat is SeenChat => chat !== undefined)
      .sort((a, b) => b.lastAt - a.lastAt);
  }

  async binding(chatId: string): Promise<ChatBinding | undefined> {
    return parse<ChatBinding>(await this.#state.get(BINDING + chatId));
  }

  async setBinding(chatId: string, binding: ChatBinding): Promise<void> {
    await this.#state.set(BINDING + chatId, JSON.stringify(binding));
  }

  /** Records a person's message (their name may change). */
  async sawPerson(externalUserId: string, name: string | undefined, now: number): Promise<void> {
    const known = parse<SeenPerson>(await this.#state.get(PERSON + externalUserId));
    const next: SeenPerson = {
      externalUserId,
      ...((name ?? known?.name) ? { name: name ?? known?.name } : {}),
      lastAt: now,
    };
    await this.#state.set(PERSON + externalUserId, JSON.stringify(next));
  }

  async people(): Promise<SeenPerson[]> {
    const rows = await this.#state.list(PERSON);
    return rows
      .map((row) => parse<SeenPerson>(row.value))
      .filter((person): person is SeenPerson => person !== undefined)
      .sort((a, b) => b.lastAt - a.lastAt);
  }

  async link(externalUserId: string): Promise<PersonLink | undefined> {
    return parse<PersonLink>(await this.#state.get(LINK + externalUserId));
  }

  /** Every linked person: their external id and link. */
  async links(): Promise<Array<{ externalUserId: string; link: PersonLink }>> {
    const rows = await this.#state.list(LINK);
    return rows.flatMap((row) => {
      const link = parse<PersonLink>(row.value);
      return link ? [{ externalUserId: row.key.slice(LINK.length), link }] : [];
    });
  }

  async setLink(externalUserId: string, link: PersonLink | undefined): Promise<void> {
    if (link) await this.#state.set(LINK + externalUserId, JSON.stringify(link));
    else await this.#state.delete(LINK + externalUserId);
  }

  async putCode(code: string, value: LinkCode): Promise<void> {
    await this.#state.set(CODE + code, JSON.stringify(value));
  }

  async code(code: string): Promise<LinkCode | undefined> {
    return parse<LinkCode>(await this.#state.get(CODE + code));
  }

  async deleteCode(code: string): Promise<void> {
    await this.#state.delete(CODE + code);
  }

  /** Codes of one user (to replace them with a new one) and expired codes (to drop them). */
  async codes(): Promise<Array<{ code: string; value: LinkCode }>> {
    const rows = await this.#state.list(CODE);
    return rows.flatMap((row) => {
      const value = parse<LinkCode>(row.value);
      return value ? [{ code: row.key.slice(CODE.length), value }] : [];
    });
  }

  /** Wrong codes a person sent recently: `{count, since}`. */
  async tries(externalUserId: string): Promise<{ count: number; since: number } | undefined> {
    return parse(await this.#state.get(TRIES + externalUserId));
  }

  async setTries(externalUserId: string, tries: { count: number; since: number } | undefined): Promise<void> {
    if (tries) await this.#state.set(TRIES + externalUserId, JSON.stringify(tries));
    else await this.#state.delete(TRIES + externalUserId);
  }
}
