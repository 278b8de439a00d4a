/**
 * Delivers team events to subscribers, each only for channels it may see. Visibility is checked
 * against an in-memory index of channel members (kept current by the facade), because token deltas
 * are frequent and must not cost a database read per subscriber.
 */
import { isAdmin } from "./access.js";
import type { Actor, TeamEvent } from "./types.js";

interface Subscriber {
  actor: Actor;
  listener: (event: TeamEvent) => void;
  /** Only events emitted by this instance (not those other instances relayed). */
  local: boolean;
}

/**
 * Channel id → the people who belong to it. `onChange` hears of this instance's own changes (not of
 * `load` or `replaceChannel`), so they can be announced to other instances.
 */
export class MembershipIndex {
  readonly #users = new Map<string, Set<string>>();
  onChange: ((channelId: string) => void) | undefined;

  /** Replaces the whole index. */
  load(entries: Iterable<{ channelId: string; userId: string }>): void {
    this.#users.clear();
    for (const { channelId, userId } of entries) this.#add(channelId, userId);
  }

  add(channelId: string, userId: string): void {
    this.#add(channelId, userId);
    this.onChange?.(channelId);
  }

  remove(channelId: string, userId: string): void {
    this.#users.get(channelId)?.delete(userId);
    this.onChange?.(channelId);
  }

  dropChannel(channelId: string): void {
    this.#users.delete(channelId);
    this.onChange?.(channelId);
  }

  /** Sets a channel's people as another instance saved them (none: the channel is gone). */
  replaceChannel(channelId: string, userIds: readonly string[] | undefined): void {
    if (userIds === undefined) this.#users.delete(channelId);
    else this.#users.set(channelId, new Set(userIds));
  }

  #add(channelId: string, userId: string): void {
    const set = this.#users.get(channelId) ?? new Set<string>();
    set.add(userId);
    this.#users.set(channelId, set);
  }

  has(channelId: string, userId: string): boolean {
    return this.#users.get(channelId)?.has(userId) ?? false;
  }

  /** The channels a person belongs to. */
  channelsOf(userId: string): string[] {
    const out: string[] = [];
    for (const [channelId, users] of this.#users) if (users.has(userId)) out.push(channelId);
    return out;
  }

  /** The people of a channel (empty when none). */
  membersOf(channelId: string): ReadonlySet<string> {
    return this.#users.get(channelId) ?? NO_USERS;
  }
}

const NO_USERS: ReadonlySet<string> = new Set();

/**
 * Fans events out to subscribers; a throwing listener never stops the others. Subscribers are kept
 * by person, so an event costs a lookup per member of its channel, not a check per connected client.
 * `forward`, when set, also hands each event emitted here to the other instances (see team-relay.ts);
 * theirs arrive through `deliver`.
 */
export class EventBus {
  /** Admins see every channel. */
  readonly #admins = new Set<Subscriber>();
  readonly #byUser = new Map<string, Set<Subscriber>>();
  readonly #members: MembershipIndex;
  readonly #onListenerError: (err: unknown) => void;
  forward: ((event: TeamEvent) => void) | undefined;

  constructor(members: MembershipIndex, onListenerError: (err: unknown) => void = () => undefined) {
    this.#members = members;
    this.#onListenerError = onListenerError;
  }

  /** Adds a listener for the channels `actor` may see; returns the unsubscribe function. */
  subscribe(
    actor: Actor,
    listener: (event: TeamEvent) => void,
    options: { local?: boolean } = {},
  ): () => void {
    const subscriber: Subscriber = { actor: { ...actor }, listener, local: options.local === true };
    let set = this.#admins;
    if (!isAdmin(actor)) {
      set = this.#byUser.get(actor.userId) ?? new Set<Subscriber>();
      this.#byUser.set(actor.userId, set);
    }
    set.add(subscriber);
    const own = set;
    return () => {
      if (own.delete(subscriber) && own.size === 0 && own !== this.#admins) this.#byUser.delete(actor.userId);
    };
  }

  /** Delivers the event synchronously, in call order, so events of one run stay in order. */
  emit(event: TeamEvent): void {
    this.deliver(event);
    if (event.channelId !== "") this.forward?.(event);
  }

  /** Delivers an event another instance emitted (to this instance's subscribers, not `local` ones). */
  deliverRemote(event: TeamEvent): void {
    this.deliver(event, true);
  }

  /** Delivers the event to this instance's subscribers only. */
  deliver(event: TeamEvent, remote = false): void {
    // Runs of the OpenAI-compatible endpoint belong to no channel and are nobody's to watch.
    if (event.channelId === "") return;
    // A request for input is the asked person's alone, admins or not.
    if (event.type === "elicitation" || event.type === "elicitation_closed") {
      for (const subscriber of this.#admins)
        if (subscriber.actor.userId === event.userId) this.#deliver(subscriber, event, remote);
      for (const subscriber of this.#byUser.get(event.userId) ?? []) this.#deliver(subscriber, event, remote);
      return;
    }
    for (const subscriber of this.#admins) this.#deliver(subscriber, event, remote);
    // A budget notice: owners and admins (above), and the person the budget limits.
    if (event.type === "budget_notice") {
      if (event.notice.scope !== "person") return;
      for (const subscriber of this.#byUser.get(event.notice.scopeId) ?? [])
        this.#deliver(subscriber, event, remote);
      return;
    }
    for (const userId of this.#members.membersOf(event.channelId)) {
      const subscribers = this.#byUser.get(userId);
      if (subscribers) for (const subscriber of subscribers) this.#deliver(subscriber, event, remote);
    }
  }

  #deliver(subscriber: Subscriber, event: TeamEvent, remote: boolean): void {
    if (remote && subscriber.local) return;
    try {
      subscriber.listener(event);
    } catch (err) {
      this.#onListenerError(err);
    }
  }
}
