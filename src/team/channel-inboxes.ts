/**
 * The steering inboxes of the agent sessions with a channel run going on in this process: a message
 * sent to an agent while it answers is read before its next model call (steer mode), and one that
 * came too late to be read starts a run of its own.
 */

import { unseenInput } from "./channel-input.js";
import { laneOf, type RunHandle } from "./run-manager.js";
import { type AgentRunnerDeps, channelRef } from "./runner-deps.js";
import { SteeringInbox } from "./steering-inbox.js";
import type { AgentRecord, ChannelMessage, ChannelRecord } from "./types.js";

/** Starts `agent` answering `trigger` in the channel (a message its run read too late). */
export type StartAnswer = (
  channel: ChannelRecord,
  agent: AgentRecord,
  trigger: ChannelMessage,
  requestedBy: string,
) => Promise<RunHandle>;

/** The inbox of each agent session (lane) with a channel run going on here. */
export class ChannelInboxes {
  readonly #deps: AgentRunnerDeps;
  readonly #startAnswer: StartAnswer;
  /** The steering inbox of each agent session (lane) with a channel run going on here. */
  readonly #inboxes = new Map<string, SteeringInbox>();

  constructor(deps: AgentRunnerDeps, startAnswer: StartAnswer) {
    this.#deps = deps;
    this.#startAnswer = startAnswer;
  }

  /** The steering inbox of the agent's session in the channel, live while a run of it goes on. */
  open(channel: ChannelRecord, agentId: string, runId: string, lookFirst: boolean): SteeringInbox {
    const lane = laneOf(channelRef(channel.id, agentId));
    const inbox = new SteeringInbox(
      runId,
      async () => {
        const latest = (await this.#deps.store.messages.list(channel.id, { limit: 1 }))[0];
        if (!latest) return [];
        const unseen = await unseenInput(this.#deps, channel, agentId, latest.id);
        return unseen.messages.length > 0 ? [{ role: "user", content: unseen.text }] : [];
      },
      { lookFirst },
    );
    this.#inboxes.set(lane, inbox);
    return inbox;
  }

  /**
   * Hands a message to the agent's run in progress in the channel (steer mode): true when a run of
   * this instance took it; it reads the message before its next model call.
   */
  steer(channelId: string, agentId: string, message: ChannelMessage): boolean {
    const inbox = this.#inboxes.get(laneOf(channelRef(channelId, agentId)));
    if (!inbox || inbox.closed || !this.#deps.runs.isActive(inbox.runId)) return false;
    inbox.notify(message);
    return true;
  }

  /**
   * A person stopped the run: the messages sent to it that it has not read yet start no run of their
   * own (stopping means stopping everything the person asked of it).
   */
  dropUnread(runId: string): void {
    for (const [lane, inbox] of this.#inboxes) {
      if (inbox.runId !== runId) continue;
      inbox.closed = true;
      this.#inboxes.delete(lane);
    }
  }

  /**
   * Ends the lane's inbox after its run; a message that reached it too late to be read is answered by
   * a new run (resolves to it, if any).
   */
  async close(channelId: string, agentId: string, runId: string): Promise<RunHandle | undefined> {
    const lane = laneOf(channelRef(channelId, agentId));
    const inbox = this.#inboxes.get(lane);
    if (!inbox || inbox.runId !== runId) return undefined;
    inbox.closed = true;
    this.#inboxes.delete(lane);
    const late = inbox.unread();
    if (!late) return undefined;
    const { store } = this.#deps;
    const channel = await store.channels.get(channelId);
    const agent = await store.agents.get(agentId);
    if (!channel || !agent) return undefined;
    return this.#startAnswer(channel, agent, late, late.author.type === "user" ? late.author.id : "system");
  }
}
