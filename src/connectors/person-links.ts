/**
 * People are people everywhere: an external sender posts as a guest of their own until they are
 * linked to a web account, then as that account (its role, memory, spend and approvals). A person
 * links themselves with a one-time code (Settings → Account shows `/link 123456`; they send it to a
 * bot in a private chat), or an admin links them in the connectors page.
 *
 * A code is six digits, lives ten minutes, is used once, and is written to every connector's state,
 * so whichever bot (and whichever instance) gets it can redeem it. Five wrong codes from one person in
 * ten minutes lock them out for the rest of those ten minutes, which keeps guessing hopeless. A code
 * sent in a group chat is spent (others saw it) and links nobody.
 */
import { randomInt } from "node:crypto";
import { forbidden, invalid } from "../errors.js";
import type { Actor } from "../team/types.js";
import { ChatBindings, type PersonLink } from "./store/chat-bindings.js";
import type { MappingRepo } from "./store/mapping-repo.js";
import type { ConnectorRecord, ConnectorUsers } from "./types.js";

export const LINK_CODE_TTL_MS = 10 * 60 * 1000;
const MAX_TRIES = 5;
const CODE_PATTERN = /^\d{6}$/;

export interface PersonLinksDeps {
  mappings: MappingRepo;
  users: ConnectorUsers;
  now: () => number;
  /** Every connector's id (a code is written to each). */
  connectorIds(): Promise<string[]>;
}

/** A code for the web account: what the person sends to a bot. */
export interface LinkCodeView {
  code: string;
  command: string;
  expiresAt: number;
}

/** One-time link codes and links of external people to web accounts. */
export class PersonLinks {
  readonly #deps: PersonLinksDeps;

  constructor(deps: PersonLinksDeps) {
    this.#deps = deps;
  }

  #bindings(connectorId: string): ChatBindings {
    return new ChatBindings(this.#deps.mappings.stateOf(connectorId));
  }

  /** A new code for the actor (their earlier codes stop working). */
  async issue(actor: Actor): Promise<LinkCodeView> {
    if (actor.role === "guest" || actor.userId.startsWith("connector:")) {
      throw forbidden("Guests cannot link messenger accounts.", "ask an admin to make you a member");
    }
    const ids = await this.#deps.connectorIds();
    if (ids.length === 0) {
      throw invalid("There is no messenger connector to link with.", "ask an admin to add one in Connectors");
    }
    const now = this.#deps.now();
    const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
    const expiresAt = now + LINK_CODE_TTL_MS;
    for (const id of ids) {
      const bindings = this.#bindings(id);
      for (const old of await bindings.codes()) {
        if (old.value.userId === actor.userId || old.value.expiresAt <= now)
          await bindings.deleteCode(old.code);
      }
      await bindings.putCode(code, { userId: actor.userId, expiresAt });
    }
    return { code, command: `/link ${code}`, expiresAt };
  }

  /**
   * Redeems `/link <code>` from an external person; returns what to tell them. `privateChat`
   * undefined (a group chat): the code is spent unused (others in the group saw it); else the private
   * chat's id, where notices to the person go from now on.
   */
  async redeem(
    connector: ConnectorRecord,
    externalUserId: string,
    code: string,
    privateChat: string | undefined,
  ): Promise<string> {
    const now = this.#deps.now();
    const bindings = this.#bindings(connector.id);
    const tries = await bindings.tries(externalUserId);
    const recent = tries && now - tries.since < LINK_CODE_TTL_MS ? tries : undefined;
    if (recent && recent.count >= MAX_TRIES) {
      return "⚠️ Too many wrong codes. Wait ten minutes, then ask Settings → Account for a new code.";
    }
    const found = CODE_PATTERN.test(code) ? await bindings.code(code) : undefined;
    if (!found || found.expiresAt <= now) {
      await bindings.setTries(externalUserId, {
        count: (recent?.count ?? 0) + 1,
        since: recent?.since ?? now,
      });
      return "⚠️ That code is wrong or expired. Settings → Account in the web UI shows a new one.";
    }
    await this.#spend(code);
    if (privateChat === undefined) {
      return "⚠️ This code was sent where others can see it, so it no longer works. Get a new one in Settings → Account and send it to me in a private chat.";
    }
    const user = await this.#deps.users.get(found.userId);
    if (!user) return "⚠️ The account of this code no longer exists.";
    await this.link(connector, externalUserId, user.id, "code", user.id, privateChat);
    await bindings.setTries(externalUserId, undefined);
    return `✅ Linked to ${user.username}. Your messages here now count as yours in Dimsum: the same memory, rights and approvals as in the web UI.`;
  }

  async #spend(code: string): Promise<void> {
    for (const id of await this.#deps.connectorIds()) await this.#bindings(id).deleteCode(code);
  }

  /** Links an external person to a web account (their messages post as it from now on). */
  async link(
    connector: ConnectorRecord,
    externalUserId: string,
    userId: string,
    via: PersonLink["via"],
    by: string,
    privateChatId?: string,
  ): Promise<void> {
    const bindings = this.#bindings(connector.id);
    const before = await this.#deps.mappings.userFor(connector.id, externalUserId);
    const earlier = await bindings.link(externalUserId);
    const guest = earlier?.guestUserId ?? (before && before !== earlier?.userId ? before : undefined);
    await this.#deps.mappings.setUser(connector.id, externalUserId, userId);
    await bindings.setLink(externalUserId, {
      userId,
      via,
      by,
      at: this.#deps.now(),
      ...(guest ? { guestUserId: guest } : {}),
      ...(privateChatId ? { privateChatId } : {}),
    });
  }

  /** Unlinks an external person: they post as their own guest again. False when they were not linked. */
  async unlink(connector: ConnectorRecord, externalUserId: string): Promise<boolean> {
    const bindings = this.#bindings(connector.id);
    const link = await bindings.link(externalUserId);
    if (!link) return false;
    const guest = link.guestUserId ? await this.#deps.users.get(link.guestUserId) : undefined;
    // Without a guest to go back to, the next message makes one (an unlinked non-guest is not used).
    if (guest) await this.#deps.mappings.setUser(connector.id, externalUserId, guest.id);
    await bindings.setLink(externalUserId, undefined);
    return true;
  }

  /** Whether an external person is linked to a web account. */
  async linked(connectorId: string, externalUserId: string): Promise<PersonLink | undefined> {
    return this.#bindings(connectorId).link(externalUserId);
  }
}
