/**
 * Chat answers: an agent answers in a channel what it has not seen up to a message, as a job any
 * instance may claim; a run that waited for approvals, or whose process died, goes on in the same
 * answer message.
 */

import type { ApprovalDecision } from "../agent/approvals.js";
import { userContent } from "../attachments/to-parts.js";
import { notFound } from "../errors.js";
import { runAgentTurn } from "./agent-turn.js";
import type { ChannelInboxes } from "./channel-inboxes.js";
import { chatApprover, filesOf, inputOf, purposes, unseenInput } from "./channel-input.js";
import { RunKind, type RunKindParts } from "./run-kind.js";
import { laneOf, type RunBody, type RunHandle } from "./run-manager.js";
import { topScope } from "./run-tools.js";
import { type AnswerOptions, type AnswerPlace, channelRef, outcomeOf } from "./runner-deps.js";
import { channelSystemText, peopleIn, type UserNamer } from "./team-prompt.js";
import type { RunJob, StoredRun } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord } from "./types.js";

/** The run a channel turn belongs to, what triggered it and who asked. */
interface TurnOf {
  runId: string;
  triggerId: number;
  requestedBy: string;
  resumed?: boolean;
}

/** Runs agents' answers in channels. */
export class ChannelRuns extends RunKind {
  readonly #inboxes: ChannelInboxes;

  constructor(parts: RunKindParts, inboxes: ChannelInboxes) {
    super(parts);
    this.#inboxes = inboxes;
  }

  /**
   * Starts `agent` answering in the channel; its input is what it has not seen up to `trigger`. The
   * answer is a job: it waits for a slot, and with several instances any instance may run it.
   */
  startChannelRun(
    channel: ChannelRecord,
    agent: AgentRecord,
    trigger: ChannelMessage,
    requestedBy: string,
    options: AnswerOptions = {},
  ): Promise<RunHandle> {
    const ref = channelRef(channel.id, agent.id);
    const job: RunJob = { kind: "answer" };
    if (options.versionOf !== undefined) job.versionOf = options.versionOf;
    if (options.note !== undefined) job.note = options.note;
    if (options.present) job.present = true;
    return this.deps.runs.submit(
      {
        channelId: channel.id,
        agentId: agent.id,
        triggerMessageId: trigger.id,
        depth: 0,
        ref,
        requestedBy,
        lane: laneOf(ref),
      },
      job,
      this.#answerBody(channel, agent, trigger, requestedBy, job),
    );
  }

  /** The body of a claimed chat answer job (another instance may have enqueued it). */
  readonly bodyForJob = (stored: StoredRun, job: RunJob): RunBody => {
    const { run } = stored;
    return async (ctx) => {
      const { store } = this.deps;
      const { channel, agents } = await store.channels.getWithAgents(run.channelId);
      if (!channel) throw notFound(`The channel ${run.channelId} no longer exists.`);
      const agent = agents.find((a) => a.id === run.agentId);
      if (!agent) throw notFound(`The agent @${run.agentId} no longer exists.`);
      const trigger = await store.messages.get(run.triggerMessageId);
      if (!trigger) throw notFound(`The message ${run.triggerMessageId} no longer exists.`);
      return this.#answerBody(channel, agent, trigger, stored.requestedBy, job, agents)(ctx);
    };
  };

  #answerBody(
    channel: ChannelRecord,
    agent: AgentRecord,
    trigger: ChannelMessage,
    requestedBy: string,
    job: RunJob,
    /** Every agent, read with `channel` as the job was claimed: then neither is read again. */
    agentsRead?: AgentRecord[],
  ): RunBody {
    const place: AnswerPlace = { replyTo: trigger.id };
    if (job.versionOf !== undefined) place.versionOf = job.versionOf;
    const options: AnswerOptions = job.present ? { present: true } : {};
    return async ({ run, signal, setModel }) => {
      const runId = run.id;
      const result = await this.answers.answering(
        channel.id,
        agent.id,
        runId,
        signal,
        place,
        undefined,
        async (onEvent) => {
          // Re-read: the channel and the agent may have changed while the run was queued.
          const read = agentsRead
            ? { channel, agents: agentsRead }
            : await this.deps.store.channels.getWithAgents(channel.id);
          const current = read.channel ?? channel;
          const agents = new Map(read.agents.map((a) => [a.id, a]));
          const self = agents.get(agent.id) ?? agent;
          const unseen = await unseenInput(this.deps, current, agent.id, trigger.id);
          const shown = unseen.messages.length > 0 ? unseen.text : await inputOf(this.deps, current, trigger);
          const files = await filesOf(
            this.deps,
            current.id,
            unseen.messages.length > 0 ? unseen.messages : [trigger],
          );
          return runAgentTurn(this.deps.runtime, {
            ...(await this.#channelTurn(
              current,
              self,
              agents,
              { runId, triggerId: trigger.id, requestedBy },
              signal,
              options,
              await unseen.names,
            )),
            input: userContent(job.note ? `${job.note}\n\n${shown}` : shown, files),
            onEvent,
            onModel: setModel,
          });
        },
      );
      if (!result.waiting) {
        await this.deps.onAnswered?.({
          runId,
          channelId: channel.id,
          agentId: agent.id,
          triggerMessageId: trigger.id,
          requestedBy,
          channelKind: channel.kind,
        });
      }
      return outcomeOf(result);
    };
  }

  /**
   * Continues a channel run that waited for approvals, now decided (the caller claimed it from
   * `waiting`): the same answer message goes on from where it stopped.
   */
  async resumeChannelRun(
    stored: StoredRun,
    decisions: Record<string, ApprovalDecision>,
    reason: "approval" | "restart" = "approval",
    fence?: number,
  ): Promise<RunHandle> {
    const { run } = stored;
    const { existing, place, firstSeq, start } = await this.answers.resumePoint(stored, reason);
    return this.deps.runs.resume(
      stored,
      laneOf(stored.ref),
      async ({ signal, setModel }) => {
        const result = await this.answers.answering(
          run.channelId,
          run.agentId,
          run.id,
          signal,
          place,
          existing,
          async (onEvent) => {
            const { channel, self, agents, names } = await this.#resumedRead(stored);
            return runAgentTurn(this.deps.runtime, {
              ...(await this.#channelTurn(
                channel,
                self,
                agents,
                {
                  runId: run.id,
                  triggerId: run.triggerMessageId,
                  requestedBy: stored.requestedBy,
                  resumed: true,
                },
                signal,
                {},
                names,
              )),
              input: "",
              resume: { reason, decisions },
              firstSeq,
              onEvent,
              onModel: setModel,
            });
          },
          start,
        );
        if (!result.waiting) {
          await this.deps.onAnswered?.({
            runId: run.id,
            channelId: run.channelId,
            agentId: run.agentId,
            triggerMessageId: run.triggerMessageId,
            requestedBy: stored.requestedBy,
          });
        }
        return outcomeOf(result);
      },
      fence,
    );
  }

  /** The channel, the agent and the people's names a resumed run goes on with, read afresh. */
  async #resumedRead(stored: StoredRun) {
    const { run } = stored;
    const read = await this.deps.store.channels.getWithAgents(run.channelId);
    const channel = read.channel;
    if (!channel) throw notFound(`The channel ${run.channelId} no longer exists.`);
    const agents = new Map(read.agents.map((a) => [a.id, a]));
    const self = agents.get(run.agentId);
    if (!self) throw notFound(`The agent @${run.agentId} no longer exists.`);
    const names = await this.deps.nameOf(peopleIn(channel));
    return { channel, self, agents, names };
  }

  /** What every channel turn of `agent` shares, first run or resumed. */
  async #channelTurn(
    channel: ChannelRecord,
    agent: AgentRecord,
    agents: Map<string, AgentRecord>,
    { runId, triggerId, requestedBy, resumed }: TurnOf,
    signal: AbortSignal,
    options: AnswerOptions,
    names: UserNamer,
  ) {
    const workspace = this.deps.workspaceFor(channel.id);
    // A resumed run reads what was said while it waited (or was down) before its next model call.
    const steering = this.#inboxes.open(channel, agent.id, runId, resumed === true);
    return {
      agent,
      runId,
      channelId: channel.id,
      ref: channelRef(channel.id, agent.id),
      // A group's agent session is read by every member: one person's recalled memories stay out of it.
      ...(channel.kind === "group" ? { sharedSession: true } : {}),
      system: channelSystemText(agent, channel, agents, names, await purposes(this.deps, channel, agent.id)),
      workspace,
      signal,
      extraTools: await this.tools.callTools({
        ...topScope(runId, channel.id, triggerId, agent.id, requestedBy, workspace),
        present: options.present === true,
      }),
      requestedBy,
      ...(options.present ? { present: true } : {}),
      approve: chatApprover(this.deps, channel.id, agent.id),
      steering,
    };
  }
}
