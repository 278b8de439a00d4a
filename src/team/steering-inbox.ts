/**
 * A channel run's steering source: the team notifies it when a message for the agent arrives while
 * the run goes on (steer mode); the run reads what the agent has not seen yet before its next model
 * call. A message that arrives after the run read its last one is handed back (`unread`) so a new run
 * answers it.
 */
import type { SteeringSource } from "../agent/steering.js";
import type { UserMessage } from "../llm/types.js";
import type { ChannelMessage } from "./types.js";

export class SteeringInbox implements SteeringSource {
  #latest: ChannelMessage | undefined;
  /** Set once the run ended: notifications go to a new run instead. */
  closed = false;

  /** A resumed run looks once for messages sent while it waited or was down. */
  #look: boolean;

  constructor(
    readonly runId: string,
    private readonly read: () => Promise<UserMessage[]>,
    options: { lookFirst?: boolean } = {},
  ) {
    this.#look = options.lookFirst === true;
  }

  notify(message: ChannelMessage): void {
    this.#latest = message;
  }

  pending(): boolean {
    return this.#latest !== undefined || this.#look;
  }

  async take(): Promise<UserMessage[]> {
    if (!this.#latest && !this.#look) return [];
    this.#latest = undefined;
    this.#look = false;
    return this.read();
  }

  /** The newest message notified and never read, if any. */
  unread(): ChannelMessage | undefined {
    return this.#latest;
  }
}
