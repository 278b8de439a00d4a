/**
 * Hand-offs by @mention in a group: an agent's finished answer that mentions other agents of the
 * group (as text, `@coder`, `@写手`) starts each of them next, answering that message with the
 * conversation so far. A chain of hand-offs is stopped, with a note in the group, after
 * `groups.maxHandoffs` hand-offs or when an agent repeats what it already said in the chain (a
 * circle); a person's Stop of any run of the chain ends it. The chain's state is kept in the
 * database (meta keys), so a restarted server goes on with it and starts nobody twice.
 */
import { createHash } from "node:crypto";
import { parseMentions } from "./mentions.js";
import type { RunHandle } from "./run-manager.js";
import type { TeamStore } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, TeamEvent } from "./types.js";

/** A chain of hand-offs: its id (the first run's), how many hand-offs it made, who said what. */
export interface HandoffChain {
  id: string;
  hops: number;
  /** Each answer of the chain so far: its agent and a digest of its text. */
  said: Array<{ agentId: string; digest: string }>;
}

export interface HandoffDeps {
  store: TeamStore;
  now: () => number;
  emit: (event: TeamEvent) => void;
  maxHandoffs: number;
  /** Starts `agent` answering `trigger` in the channel (a chat answer job). */
  start: (
    channel: ChannelRecord,
    agent: AgentRecord,
    trigger: ChannelMessage,
    requestedBy: string,
  ) => Promise<RunHandle>;
  /** Cancels a live run of this instance. */
  cancel: (runId: string, reason: string) => Promise<unknown>;
  onError: (err: unknown) => void;
}

/** What a finished chat answer says to the hand-offs. */
export interface AnsweredRun {
  runId: string;
  channelId: string;
  agentId: string;
  /** The message the answer replied to. */
  triggerMessageId: number;
  requestedBy: string;
  /** The chat's kind, when the caller knows it: only a group's answers hand over (others: no read). */
  channelKind?: ChannelRecord["kind"];
}

const chainKey = (triggerId: number, agentId: string) => `handoff:${triggerId}:${agentId}`;
const doneKey = (runId: string) => `handoff_done:${runId}`;
const stoppedKey = (chainId: string) => `handoff_stopped:${chainId}`;

/** A digest of an answer's words, so an agent saying the same again is seen as a circle. */
function digestOf(text: string): string {
  const words = text.normalize("NFKC").toLowerCase().replace(/\s+/g, " ").trim();
  return createHash("sha256").update(words).digest("hex").slice(0, 16);
}

/** Starts the agents an answer hands over to, within the chain's limits. */
export class Handoffs {
  readonly #deps: HandoffDeps;
  /** The live runs of each chain on this instance (so a Stop ends its siblings). */
  readonly #live = new Map<string, Set<string>>();
  /** The chain of each live run here. */
  readonly #chainOf = new Map<string, string>();

  constructor(deps: HandoffDeps) {
    this.#deps = deps;
  }

  /** The chain a run belongs to (it started by a hand-off), else one that starts with it. */
  async chainOf(run: { id: string; agentId: string; triggerMessageId: number }): Promise<HandoffChain> {
    const stored = await this.#deps.store.meta.get(chainKey(run.triggerMessageId, run.agentId));
    if (stored) {
      try {
        return JSON.parse(stored) as HandoffChain;
      } catch {
        // A damaged entry starts a new chain rather than stopping the group.
      }
    }
    return { id: run.id, hops: 0, said: [] };
  }

  /**
   * Called once an answer is posted: starts the agents it mentions (never its own agent), or says
   * in the group why the chain stops. Runs once per answer, whichever instance or restart calls it.
   */
  async answered(done: AnsweredRun): Promise<void> {
    const { store, now } = this.#deps;
    this.#forget(done.runId);
    if (done.channelKind !== undefined && done.channelKind !== "group") return;
    const { channel, agents } = await store.channels.getWithAgents(done.channelId);
    if (channel?.kind !== "group") return;
    const answer = await store.messages.byRun(done.runId);
    if (answer?.author.type !== "agent" || answer.text.trim() === "") return;
    const members = new Set(channel.members.filter((m) => m.type === "agent").map((m) => m.id));
    const present = agents.filter((a) => members.has(a.id));
    const mentioned = parseMentions(answer.text, present).agentIds.filter((id) => id !== done.agentId);
    if (mentioned.length === 0) return;
    if (!(await store.meta.claim(doneKey(done.runId), String(now())))) return;
    const chain = await this.chainOf({
      id: done.runId,
      agentId: done.agentId,
      triggerMessageId: done.triggerMessageId,
    });
    if (await store.meta.get(stoppedKey(chain.id))) return;
    const digest = digestOf(answer.text);
    if (chain.said.some((s) => s.agentId === done.agentId && s.digest === digest)) {
      await this.#note(
        channel,
        `Hand-off stopped: @${done.agentId} said the same as before in this chain, so it would go round in a circle. Mention an agent yourself to go on.`,
      );
      return;
    }
    const said = [...chain.said, { agentId: done.agentId, digest }];
    const byId = new Map(present.map((a) => [a.id, a]));
    let hops = chain.hops;
    for (const agentId of mentioned) {
      const agent = byId.get(agentId);
      if (!agent) continue;
      if (hops >= this.#deps.maxHandoffs) {
        await this.#note(
          channel,
          `Hand-off stopped: this chain reached its limit of ${this.#deps.maxHandoffs} hand-offs between agents (groups.maxHandoffs), so @${agentId} was not started. Mention an agent yourself to go on.`,
        );
        return;
      }
      hops++;
      const next: HandoffChain = { id: chain.id, hops, said };
      await store.meta.set(chainKey(answer.id, agentId), JSON.stringify(next));
      const handle = await this.#deps.start(channel, agent, answer, done.requestedBy);
      this.#track(chain.id, handle);
    }
  }

  /**
   * A person stopped a run: when it belongs to a hand-off chain, the chain ends (its other live runs
   * here are stopped too, and nobody is started after them).
   */
  async stopped(
    run: { id: string; agentId: string; triggerMessageId: number },
    reason: string,
  ): Promise<void> {
    const chainId = this.#chainOf.get(run.id) ?? (await this.chainOf(run)).id;
    await this.#deps.store.meta.set(stoppedKey(chainId), String(this.#deps.now()));
    for (const runId of this.#live.get(chainId) ?? []) {
      if (runId !== run.id) await this.#deps.cancel(runId, reason);
    }
  }

  #track(chainId: string, handle: RunHandle): void {
    const runs = this.#live.get(chainId) ?? new Set<string>();
    runs.add(handle.run.id);
    this.#live.set(chainId, runs);
    this.#chainOf.set(handle.run.id, chainId);
    void handle.finished.then(() => this.#forget(handle.run.id)).catch(this.#deps.onError);
  }

  #forget(runId: string): void {
    const chainId = this.#chainOf.get(runId);
    if (chainId === undefined) return;
    this.#chainOf.delete(runId);
    const runs = this.#live.get(chainId);
    runs?.delete(runId);
    if (runs?.size === 0) this.#live.delete(chainId);
  }

  async #note(channel: ChannelRecord, text: string): Promise<void> {
    const message = await this.#deps.store.messages.insert({
      channelId: channel.id,
      author: { type: "system", id: "handoffs" },
      text,
      mentions: [],
      createdAt: this.#deps.now(),
    });
    this.#deps.emit({ type: "message", channelId: channel.id, message });
  }
}
