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
}

/** Channel id → the people who belong to it. */
export class MembershipIndex {
  readonly #users = new Map<string, Set<string>>();

  /** Replaces the whole index. */
  load(entries: Iterable<{ channelId: string; userId: string }>): void {
    this.#users.clear();
    for (const { channelId, userId } of entries) this.add(channelId, userId);
  }

  add(channelId: string, userId: string): void {
    const set = this.#users.get(channelId) ?? new Set<string>();
    set.add(userId);
    this.#users.set(channelId, set);
  }

  remove(channelId: string, userId: string): void {
    this.#users.get(channelId)?.delete(userId);
  }

  dropChannel(channelId: string): void {
    this.#users.delete(channelId);
  }

  has(channelId: string, userId: string): boolean {
    return this.#users.get(channelId)?.has(userId) ?? false;
  }
}

/** Fans events out to subscribers; a throwing listener never stops the others. */
export class EventBus {
  readonly #subscribers = new Set<Subscriber>();
  readonly #members: MembershipIndex;
  readonly #onListenerError: (err: unknown) => void;

  constructor(members: MembershipIndex, onListenerError: (err: unknown) => void = () => undefined) {
    this.#members = members;
    this.#onListenerError = onListenerError;
  }

  /** Adds a listener for the channels `actor` may see; returns the unsubscribe function. */
  subscribe(actor: Actor, listener: (event: TeamEvent) => void): () => void {
    const subscriber: Subscriber = { actor: { ...actor }, listener };
    this.#subscribers.add(subscriber);
    return () => {
      this.#subscribers.delete(subscriber);
    };
  }

  /** Delivers the event synchronously, in call order, so events of one run stay in order. */
  emit(event: TeamEvent): void {
    // Runs of the OpenAI-compatible endpoint belong to no channel and are nobody's to watch.
    if (event.channelId === "") return;
    for (const subscriber of this.#subscribers) {
      const { actor } = subscriber;
      if (!isAdmin(actor) && !this.#members.has(event.channelId, actor.userId)) continue;
      try {
        subscriber.listener(event);
      } catch (err) {
        this.#onListenerError(err);
      }
    }
  }

  /** Subscribers currently registered. */
  get size(): number {
    return this.#subscribers.size;
  }
}
