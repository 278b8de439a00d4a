/**
 * Messages that reach a run in progress. The loop reads them between steps: before each model call
 * after the first, and once more before it would end, so a message sent while the last answer streamed
 * is still answered in this run. While messages wait, sequential tool calls that have not started yet
 * are skipped with a result saying why.
 */
import type { UserMessage } from "../llm/types.js";

export interface SteeringSource {
  /** True when messages are waiting (cheap; asked between tool calls). */
  pending(): boolean;
  /** Takes the waiting messages (none: an empty list). */
  take(): Promise<UserMessage[]>;
}

/** An in-memory steering source: push messages while the run goes on. */
export class SteeringQueue implements SteeringSource {
  readonly #items: UserMessage[] = [];

  push(content: UserMessage["content"]): void {
    this.#items.push({ role: "user", content });
  }

  pending(): boolean {
    return this.#items.length > 0;
  }

  async take(): Promise<UserMessage[]> {
    return this.#items.splice(0);
  }
}

/** What a skipped call's result says. */
export const SKIPPED_FOR_STEERING =
  "Skipped: the user sent a new message before this call started. Read it and decide whether this call is still wanted.";
