/**
 * What a message does for an agent of the chat, by the chat's queue mode: start an answer, reach the
 * answer in progress (`steer`), wait for a burst to end (`collect`, one answer for all), stop the
 * answer in progress and answer everything (`interrupt`), or wait behind it (`followup`). A run that
 * waits for approval reads the messages sent meanwhile when it goes on, whatever the mode (but
 * `interrupt`, which ends it).
 */
import { type AgentRunner, channelRef } from "./agent-runner.js";
import type { RunApprovals } from "./run-approvals.js";
import { laneOf, type RunManager } from "./run-manager.js";
import type { TeamStore } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, QueueMode, TeamRun } from "./types.js";

/** How long `collect` waits after a message for the next one of the burst (default 1.5 s). */
export const DEFAULT_COLLECT_MS = 1500;

/** The modes of chats without their own (the config's `queue.direct` and `queue.group`). */
export interface QueueDefaults {
  direct: QueueMode;
  group: QueueMode;
}

/** The mode of a chat: its own, else the default of its kind (`steer` direct, `collect` group). */
export function queueModeOf(
  channel: Pick<ChannelRecord, "kind" | "queueMode">,
  defaults: QueueDefaults = { direct: "steer", group: "collect" },
): QueueMode {
  return channel.queueMode ?? defaults[channel.kind];
}

/** A message that started no run for an agent, and why. */
export interface QueuedFor {
  agentId: string;
  mode: "steer" | "collect" | "waiting";
}

export interface MessageQueueDeps {
  store: TeamStore;
  runs: RunManager;
  runner: AgentRunner;
  approvals: RunApprovals;
  onError: (err: unknown) => void;
  collectMs?: number;
  defaults?: QueueDefaults;
}

interface Burst {
  timer: NodeJS.Timeout | undefined;
  channel: ChannelRecord;
  agent: AgentRecord;
  latest: ChannelMessage;
  requestedBy: string;
  present: boolean;
}

export class MessageQueue {
  readonly #deps: MessageQueueDeps;
  readonly #bursts = new Map<string, Burst>();

  constructor(deps: MessageQueueDeps) {
    this.#deps = deps;
  }

  /** Routes the message to `agent`: the run it started, or why it started none. */
  async deliver(
    channel: ChannelRecord,
    agent: AgentRecord,
    message: ChannelMessage,
    requestedBy: string,
    present: boolean,
    override?: QueueMode,
  ): Promise<{ run: TeamRun } | { queued: QueuedFor }> {
    const { store, runs, runner, approvals } = this.#deps;
    const mode = override ?? queueModeOf(channel, this.#deps.defaults);
    const ref = channelRef(channel.id, agent.id);
    const lane = laneOf(ref);
    const waiting = await store.runs.listWaiting(ref);
    if (mode === "interrupt") {
      const reason = "Interrupted by a new message.";
      await Promise.all(runs.activeInLane(lane).map((run) => runs.cancel(run.id, reason)));
      for (const stored of waiting) await approvals.cancelWaiting(stored, reason);
    } else if (waiting.length > 0) {
      return { queued: { agentId: agent.id, mode: "waiting" } };
    }
    if (mode === "steer" && runner.steer(channel.id, agent.id, message)) {
      return { queued: { agentId: agent.id, mode: "steer" } };
    }
    if (mode === "collect") {
      this.#collect({ timer: undefined, channel, agent, latest: message, requestedBy, present }, lane);
      return { queued: { agentId: agent.id, mode: "collect" } };
    }
    const handle = await runner.startChannelRun(channel, agent, message, requestedBy, { present });
    return { run: handle.run };
  }

  /** Adds the message to the agent's burst; the burst is answered once it ends and the agent is free. */
  #collect(next: Burst, lane: string): void {
    const burst = this.#bursts.get(lane);
    if (burst) {
      burst.latest = next.latest;
      burst.channel = next.channel;
      burst.present = burst.present || next.present;
      if (burst.timer === undefined) return; // waiting for the agent's run: it takes the latest
      clearTimeout(burst.timer);
    }
    const current = burst ?? next;
    this.#bursts.set(lane, current);
    current.timer = setTimeout(() => {
      current.timer = undefined;
      void this.#answer(lane, current).catch(this.#deps.onError);
    }, this.#deps.collectMs ?? DEFAULT_COLLECT_MS);
  }

  async #answer(lane: string, burst: Burst): Promise<void> {
    const { runs, runner } = this.#deps;
    // Messages that arrive while the agent still answers join this burst.
    for (let busy = runs.activeInLane(lane); busy.length > 0; busy = runs.activeInLane(lane)) {
      await Promise.all(busy.map((run) => runs.settled(run.id)));
    }
    if (this.#bursts.get(lane) === burst) this.#bursts.delete(lane);
    await runner.startChannelRun(burst.channel, burst.agent, burst.latest, burst.requestedBy, {
      present: burst.present,
    });
  }

  /** Drops the bursts not yet answered (shutdown). */
  close(): void {
    for (const burst of this.#bursts.values()) if (burst.timer) clearTimeout(burst.timer);
    this.#bursts.clear();
  }
}
