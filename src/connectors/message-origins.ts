/**
 * Which channel messages came from an external chat, so the answer router does not post them back
 * to it (only web messages are mirrored). The pipeline marks a message before posting it (its
 * channel, author and text: the message event may be routed before `postMessage` returns), and the
 * router takes the mark when the message comes by. Marks not taken are dropped after a minute.
 */

const TTL_MS = 60_000;
const MAX_MARKS = 10_000;

function keyOf(channelId: string, userId: string, text: string): string {
  return `${channelId}\u0000${userId}\u0000${text}`;
}

/** Marks of messages posted from external chats on this instance. */
export class MessageOrigins {
  readonly #marks = new Map<string, number[]>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** A message is about to be posted from an external chat. */
  mark(channelId: string, userId: string, text: string): void {
    const key = keyOf(channelId, userId, text);
    const list = this.#marks.get(key) ?? [];
    list.push(this.#now() + TTL_MS);
    this.#marks.set(key, list);
    if (this.#marks.size > MAX_MARKS) this.#prune();
  }

  /** Whether the message came from an external chat (its mark is used up). */
  take(channelId: string, userId: string, text: string): boolean {
    const key = keyOf(channelId, userId, text);
    const list = this.#marks.get(key);
    if (!list) return false;
    const now = this.#now();
    while (list.length > 0 && (list[0] ?? 0) <= now) list.shift();
    const found = list.shift() !== undefined;
    if (list.length === 0) this.#marks.delete(key);
    return found;
  }

  #prune(): void {
    const now = this.#now();
    for (const [key, list] of this.#marks) {
      if (list.every((until) => until <= now)) this.#marks.delete(key);
    }
  }
}
