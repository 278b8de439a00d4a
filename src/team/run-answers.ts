/**
 * The answer a run posts to its channel: built from its events while it runs, posted when it ends,
 * waits or fails, and picked up where it stopped when the run resumes (after approvals or a crash).
 */

import type { AgentEvent } from "../agent/events.js";
import type { LiveRunParts } from "./live-run-parts.js";
import { failureOf, withAnswer } from "./live-run-parts.js";
import { askApprovalsOf, endParts, failurePart, textOfParts } from "./message-parts.js";
import type { RunHandle } from "./run-manager.js";
import type { AgentRunnerDeps, AnswerPlace } from "./runner-deps.js";
import { mergeStoredParts, readStoredRunParts } from "./stored-run-parts.js";
import type { StoredRun } from "./team-store.js";
import type { ChannelMessage, MessagePart } from "./types.js";

/** A restarted run's agent events start at the next multiple of this (no run says a billion things). */
export const RESTART_SEQ_BLOCK = 1_000_000_000;

/** Where a waiting run's last agent event number is kept, so its resumed events follow on. */
function seqKey(runId: string): string {
  return `run_seq:${runId}`;
}

/** Where a resumed run goes on (see `RunAnswers.resumePoint`). */
export interface ResumePoint {
  existing: ChannelMessage | undefined;
  place: AnswerPlace;
  firstSeq: number;
  start: MessagePart[] | undefined;
}

/** Ends the steering inbox of a run that ended; a message it got too late starts a new run. */
export type CloseInbox = (
  channelId: string,
  agentId: string,
  runId: string,
) => Promise<RunHandle | undefined>;

/** Posts runs' answers to their channels. */
export class RunAnswers {
  readonly #deps: AgentRunnerDeps;
  readonly #live: LiveRunParts;
  readonly #closeInbox: CloseInbox;

  constructor(deps: AgentRunnerDeps, live: LiveRunParts, closeInbox: CloseInbox) {
    this.#deps = deps;
    this.#live = live;
    this.#closeInbox = closeInbox;
  }

  /** Where a resumed run goes on: its answer message so far, its place, event numbers and parts. */
  async resumePoint(stored: StoredRun, reason: "approval" | "restart"): Promise<ResumePoint> {
    const { store } = this.#deps;
    const { run } = stored;
    const existing = await store.messages.byRun(run.id);
    const place: AnswerPlace = {};
    if (existing?.replyTo !== undefined) place.replyTo = existing.replyTo;
    if (existing?.versionOf !== undefined) place.versionOf = existing.versionOf;
    let firstSeq = Number((await store.meta.get(seqKey(run.id))) ?? "0");
    if (reason === "restart") {
      // The process that died numbered events past the last one stored: a new process numbers its
      // own from the next block, so a page that saw the old ones never takes the new ones for repeats.
      firstSeq = (Math.floor(firstSeq / RESTART_SEQ_BLOCK) + 1) * RESTART_SEQ_BLOCK;
      await store.meta.set(seqKey(run.id), String(firstSeq));
    }
    // After a crash the answer goes on from everything the run did, stored or not in its message.
    const start =
      reason === "restart"
        ? mergeStoredParts(
            existing?.parts ?? [],
            await readStoredRunParts(this.#deps.sessions, stored.ref, run.id),
          )
        : undefined;
    return { existing, place, firstSeq, start };
  }

  /**
   * Posts (or ends) the answer of a run that will not go on after its process died: what it said and
   * the tool calls that ran, as the session and checkpoint kept them, ended by `failure`. Nested runs
   * show in their caller's answer, and runs outside channels have no chat: nothing is posted for them.
   */
  async postInterrupted(stored: StoredRun, failure: { message: string; hint?: string }): Promise<void> {
    const { run } = stored;
    if (run.channelId === "" || run.depth > 0) return;
    const { store, bus, sessions, now } = this.#deps;
    const existing = await store.messages.byRun(run.id);
    const rebuilt = await readStoredRunParts(sessions, stored.ref, run.id);
    const parts = endParts(
      mergeStoredParts(existing?.parts ?? [], rebuilt),
      failurePart("interrupted", failure.message, failure.hint),
    );
    const text = textOfParts(parts);
    if (existing) {
      const edited = await store.messages.edit(existing.id, text, null, parts);
      if (edited) bus.emit({ type: "message", channelId: run.channelId, message: edited });
      return;
    }
    const message = await store.messages.insert({
      channelId: run.channelId,
      author: { type: "agent", id: run.agentId },
      text,
      parts,
      runId: run.id,
      // A chat answer shows below the message it answers; a flow step's output stands alone.
      ...(run.flowId === undefined ? { replyTo: run.triggerMessageId } : {}),
      mentions: [],
      createdAt: now(),
    });
    bus.emit({ type: "message", channelId: run.channelId, message });
  }

  /**
   * Runs a turn whose answer is posted to the channel with its parts: the answer when it ends, or
   * what it said so far and the error or stop that ended it (then the failure is thrown on).
   */
  async answering<T extends { text: string; waiting?: unknown }>(
    channelId: string,
    agentId: string,
    runId: string,
    signal: AbortSignal,
    place: AnswerPlace,
    existing: ChannelMessage | undefined,
    turn: (onEvent: (event: AgentEvent, seq: number) => void) => Promise<T>,
    /** The parts the answer starts from (a run resumed after a crash: what it did before). */
    start?: MessagePart[],
  ): Promise<T> {
    // A resumed run's answer goes on in the message it posted when it began to wait.
    this.#live.begin(runId, start ? [...start] : existing ? [...existing.parts] : []);
    const post = (text: string, parts: MessagePart[]) =>
      this.#postAnswer(channelId, agentId, runId, text, parts, place, existing);
    try {
      const result = await turn((event, seq) => this.#live.record(runId, event, seq));
      if (result.waiting) {
        await this.#postWaiting(runId, post);
        return result;
      }
      const parts = withAnswer(this.#live.current(runId), result.text);
      if (result.text.trim() !== "" || parts.length > 0) {
        await post(existing || start ? textOfParts(parts) || result.text : result.text, parts);
      }
      return result;
    } catch (err) {
      const parts = endParts(this.#live.current(runId), failureOf(err, signal));
      await post(textOfParts(parts), parts).catch(() => undefined);
      throw err;
    } finally {
      this.#live.end(runId);
      void this.#closeInbox(channelId, agentId, runId).catch(() => undefined);
    }
  }

  /** A run waits for approvals: its event number is kept and its answer asks the person. */
  async #postWaiting(runId: string, post: (text: string, parts: MessagePart[]) => Promise<void>) {
    const requestedBy = (await this.#deps.store.runs.get(runId))?.requestedBy ?? "";
    await this.#deps.store.meta.set(seqKey(runId), String(this.#live.seq(runId)));
    const name = requestedBy ? (await this.#deps.nameOf([requestedBy]))(requestedBy) : undefined;
    const parts = askApprovalsOf(this.#live.current(runId), requestedBy, name);
    await post(textOfParts(parts), parts);
  }

  async #postAnswer(
    channelId: string,
    agentId: string,
    runId: string,
    text: string,
    parts: MessagePart[],
    place: AnswerPlace,
    existing?: ChannelMessage,
  ): Promise<void> {
    // A resumed run goes on in the message it posted before it waited (found when it resumed).
    if (existing && existing.author.type === "agent" && existing.author.id === agentId) {
      // Another instance closed the run (this one lost its lease): its answer is no longer wanted.
      if (!(await this.#deps.runs.holds(runId))) return;
      const edited = await this.#deps.store.messages.edit(existing.id, text, null, parts);
      if (edited) this.#deps.bus.emit({ type: "message", channelId, message: edited });
      return;
    }
    // Stored only while this instance still holds the run (checked in the same write).
    const message = await this.#deps.runs.insertIfHeld(runId, this.#deps.store.messages, {
      channelId,
      author: { type: "agent", id: agentId },
      text,
      parts,
      runId,
      ...place,
      mentions: [],
      createdAt: this.#deps.now(),
    });
    if (message) this.#deps.bus.emit({ type: "message", channelId, message });
  }
}
