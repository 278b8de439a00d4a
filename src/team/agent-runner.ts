/**
 * Starts agent runs of every kind: an answer in a channel, a step of a collaboration flow, a nested
 * call_agent run, and a direct completion for the OpenAI-compatible endpoint. Each is a RunManager
 * run around one agent turn, in its own session.
 */

import { createHash, randomUUID } from "node:crypto";
import type { RemoteAgentConfig } from "../a2a/remote-config.js";
import { remoteAgentTools } from "../a2a/remote-tools.js";
import type { ApprovalDecision, Approver } from "../agent/approvals.js";
import type { AgentEvent } from "../agent/events.js";
import { INTERRUPTED_BY_RESTART } from "../agent/execute-tools.js";
import type { OutputSpec } from "../agent/structured-output.js";
import { emptyUsage } from "../agent/usage.js";
import type { AttachmentLimits } from "../attachments/kinds.js";
import { type AttachedFile, userContent } from "../attachments/to-parts.js";
import { DimsumError, notFound, toDimsumError } from "../errors.js";
import type { Message, Usage, UserMessage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { Tool } from "../tools/types.js";
import { runAgentTurn, type TurnRuntime } from "./agent-turn.js";
import { type CallScope, createCallAgentTool } from "./call-agent-tool.js";
import type { EventBus } from "./event-bus.js";
import type { StepLauncher, StepOutcome } from "./flow-runner.js";
import { inputFor } from "./flows.js";
import type { AnsweredRun } from "./handoffs.js";
import {
  applyAgentEvent,
  askApprovalsOf,
  endParts,
  failurePart,
  startChildRun,
  textOfParts,
  updateChildRun,
} from "./message-parts.js";
import { laneOf, type RunBody, type RunHandle, type RunManager, type RunRequest } from "./run-manager.js";
import { callableAgents } from "./run-visibility.js";
import { createShareFileTool, mayShareFiles } from "./share-file-tool.js";
import { SteeringInbox } from "./steering-inbox.js";
import { mergeStoredParts, readStoredRunParts } from "./stored-run-parts.js";
import {
  callSystemText,
  channelSystemText,
  directSystemText,
  flowStepSystemText,
  formatChannelInput,
  type NamesFor,
  peopleIn,
  purposeOf,
  stepInput,
  type UserNamer,
} from "./team-prompt.js";
import type { RunJob, StoredRun, TeamStore } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, FlowRecord, MessagePart } from "./types.js";

/** How many unseen channel messages an agent gets at most as its input. */
const MAX_INPUT_MESSAGES = 40;

export interface AgentRunnerDeps {
  store: TeamStore;
  sessions: SessionStore;
  runs: RunManager;
  runtime: TurnRuntime;
  bus: EventBus;
  now: () => number;
  workspaceFor: (key: string) => string;
  nameOf: NamesFor;
  /**
   * The remote A2A agents (a2a.json and Settings), read at the start of each run: each a tool of the
   * run, its call shown as a nested run.
   */
  remoteAgents?: () => Promise<readonly RemoteAgentConfig[]>;
  /** Tools read at the start of each run and offered to it (HTTP tools saved in Settings). */
  httpTools?: () => Promise<readonly Tool[]>;
  /** The attachment limits a file an agent shares in a chat is checked against (absent: no share_file). */
  shareFileLimits?: AttachmentLimits;
  /**
   * The nested run of `agentId` under `parentRunId` that a restart (or a lost instance) cut off, set
   * aside for the caller's resumed call_agent; each is handed out once.
   */
  adoptNested?: (parentRunId: string, agentId: string) => StoredRun | undefined;
  /** Told when a chat answer was posted (first run or resumed), e.g. to start the agents it hands over to. */
  onAnswered?: (done: AnsweredRun) => Promise<void>;
}

/** A message of an OpenAI-style conversation; a person's may carry images and files. */
export type CompletionMessage =
  | { role: "system" | "assistant"; content: string }
  | { role: "user"; content: UserMessage["content"] };

/** Where a channel answer goes: the message it replies to, and the answer it is a new version of. */
export interface AnswerOptions {
  versionOf?: number;
  /** Said to the agent before the messages (e.g. that the person asked for another answer). */
  note?: string;
  /** The person is at the web chat: MCP requests for input are put to them. */
  present?: boolean;
}

interface AnswerPlace {
  replyTo?: number;
  versionOf?: number;
}

/** A turn with its own system text and input, posted to the channel (see `launchTurn`). */
export interface TurnSpec {
  channelId: string;
  agentId: string;
  triggerMessageId: number;
  ref: SessionRef;
  requestedBy: string;
  system: string;
  input: string;
  output?: OutputSpec;
}

/** How a `launchTurn` turn ended: its final answer and what it spent, or why it did not end. */
export type TurnOutcome =
  | { ok: true; answer: string; tokens: number; costUsd: number }
  | { ok: false; cancelled: boolean; error: string };

/** Where a resumed run goes on (see `AgentRunner.#resumePoint`). */
interface ResumePoint {
  existing: ChannelMessage | undefined;
  place: AnswerPlace;
  firstSeq: number;
  start: MessagePart[] | undefined;
}

/** The session an agent's turns in a channel are stored in. */
export function channelRef(channelId: string, agentId: string): SessionRef {
  return { userId: `channel:${channelId}`, sessionId: `agent:${agentId}` };
}

/** Where a waiting run's last agent event number is kept, so its resumed events follow on. */
function seqKey(runId: string): string {
  return `run_seq:${runId}`;
}

/** A restarted run's agent events start at the next multiple of this (no run says a billion things). */
export const RESTART_SEQ_BLOCK = 1_000_000_000;

/** Runs agents for the team facade. */
export class AgentRunner {
  readonly #deps: AgentRunnerDeps;
  /** The parts of each live run's answer, built from its agent events. */
  readonly #parts = new Map<string, MessagePart[]>();
  /** The number of the last agent event folded into each live run's parts. */
  readonly #seqs = new Map<string, number>();
  /** The steering inbox of each agent session (lane) with a channel run going on here. */
  readonly #inboxes = new Map<string, SteeringInbox>();

  constructor(deps: AgentRunnerDeps) {
    this.#deps = deps;
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
    return this.#deps.runs.submit(
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
      const { store } = this.#deps;
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
    const { store, runtime } = this.#deps;
    const place: AnswerPlace = { replyTo: trigger.id };
    if (job.versionOf !== undefined) place.versionOf = job.versionOf;
    const options: AnswerOptions = job.present ? { present: true } : {};
    return async ({ run, signal, setModel }) => {
      const runId = run.id;
      const result = await this.#answering(
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
            : await store.channels.getWithAgents(channel.id);
          const current = read.channel ?? channel;
          const agents = new Map(read.agents.map((a) => [a.id, a]));
          const self = agents.get(agent.id) ?? agent;
          const unseen = await this.#unseenInput(current, agent.id, trigger.id);
          const shown = unseen.messages.length > 0 ? unseen.text : await this.#inputOf(current, trigger);
          const files = await this.#filesOf(
            current.id,
            unseen.messages.length > 0 ? unseen.messages : [trigger],
          );
          const workspace = this.#deps.workspaceFor(channel.id);
          return runAgentTurn(runtime, {
            ...(await this.#channelTurn(
              current,
              self,
              agents,
              { runId, triggerId: trigger.id, requestedBy },
              workspace,
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
        await this.#deps.onAnswered?.({
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
    const { store, runtime } = this.#deps;
    const { run } = stored;
    const { existing, place, firstSeq, start } = await this.#resumePoint(stored, reason);
    return this.#deps.runs.resume(
      stored,
      laneOf(stored.ref),
      async ({ signal, setModel }) => {
        const result = await this.#answering(
          run.channelId,
          run.agentId,
          run.id,
          signal,
          place,
          existing,
          async (onEvent) => {
            const read = await store.channels.getWithAgents(run.channelId);
            const channel = read.channel;
            if (!channel) throw notFound(`The channel ${run.channelId} no longer exists.`);
            const agents = new Map(read.agents.map((a) => [a.id, a]));
            const self = agents.get(run.agentId);
            if (!self) throw notFound(`The agent @${run.agentId} no longer exists.`);
            const names = await this.#deps.nameOf(peopleIn(channel));
            const workspace = this.#deps.workspaceFor(channel.id);
            return runAgentTurn(runtime, {
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
                workspace,
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
          await this.#deps.onAnswered?.({
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

  /** Where a resumed run goes on: its answer message so far, its place, event numbers and parts. */
  async #resumePoint(stored: StoredRun, reason: "approval" | "restart"): Promise<ResumePoint> {
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
   * Continues a flow step whose process died (the caller holds its run), from its checkpoint like a
   * chat answer; `done` settles with its output, which the flow then hands to the next step.
   */
  async resumeFlowStep(
    stored: StoredRun,
    flow: FlowRecord,
    fence?: number,
  ): Promise<{ runId: string; done: Promise<StepOutcome> }> {
    const { run } = stored;
    const index = run.stepIndex ?? flow.currentStep;
    const { existing, firstSeq, start } = await this.#resumePoint(stored, "restart");
    let output = "";
    const handle = await this.#deps.runs.resume(
      stored,
      laneOf(stored.ref),
      async ({ signal, setModel }) =>
        outcomeOf(
          await this.#answering(
            run.channelId,
            run.agentId,
            run.id,
            signal,
            {},
            existing,
            async (onEvent) => {
              const result = await runAgentTurn(this.#deps.runtime, {
                ...(await this.#stepTurn(flow, index, run.id, stored.ref, stored.requestedBy, signal)),
                input: "",
                resume: { reason: "restart", decisions: {} },
                firstSeq,
                onEvent,
                onModel: setModel,
              });
              output = result.answer;
              return result;
            },
            start,
          ),
        ),
      fence,
    );
    return { runId: run.id, done: stepOutcome(handle, () => output) };
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

  /** What every channel turn of `agent` shares, first run or resumed. */
  async #channelTurn(
    channel: ChannelRecord,
    agent: AgentRecord,
    agents: Map<string, AgentRecord>,
    {
      runId,
      triggerId,
      requestedBy,
      resumed,
    }: { runId: string; triggerId: number; requestedBy: string; resumed?: boolean },
    workspace: string,
    signal: AbortSignal,
    options: AnswerOptions,
    names: UserNamer,
  ) {
    // A resumed run reads what was said while it waited (or was down) before its next model call.
    const steering = this.#inbox(channel, agent.id, runId, resumed === true);
    return {
      agent,
      runId,
      channelId: channel.id,
      ref: channelRef(channel.id, agent.id),
      // A group's agent session is read by every member: one person's recalled memories stay out of it.
      ...(channel.kind === "group" ? { sharedSession: true } : {}),
      system: channelSystemText(agent, channel, agents, names, await this.#purposes(channel, agent.id)),
      workspace,
      signal,
      extraTools: await this.#callTools(runId, channel.id, triggerId, 0, [agent.id], requestedBy, workspace, {
        present: options.present === true,
        rootRunId: runId,
      }),
      requestedBy,
      ...(options.present ? { present: true } : {}),
      approve: this.#approver(channel.id, agent.id),
      steering,
    };
  }

  /** What the other agents of a group are for, from their personas (for the team prompt). */
  async #purposes(channel: ChannelRecord, agentId: string): Promise<Map<string, string>> {
    const purposes = new Map<string, string>();
    if (channel.kind !== "group") return purposes;
    for (const member of channel.members) {
      if (member.type !== "agent" || member.id === agentId) continue;
      const soul = await this.#deps.runtime.personas.read(member.id).catch(() => undefined);
      const purpose = soul ? purposeOf(soul.content) : undefined;
      if (purpose) purposes.set(member.id, purpose);
    }
    return purposes;
  }

  /** Approvals in a chat: a tool approved "always" there runs; anything else waits for a person. */
  #approver(channelId: string, agentId: string): Approver {
    const { grants } = this.#deps.store;
    return async (request) =>
      (await grants.has(channelId, agentId, request.tool)) ? { decision: "approve", always: true } : "wait";
  }

  /** The messages `agentId` has not seen in the channel, up to `upto`, as its input. */
  async #unseenInput(channel: ChannelRecord, agentId: string, upto: number) {
    const { store, now } = this.#deps;
    const unseen = await store.messages.unseen(
      `agent:${agentId}`,
      channel.id,
      upto,
      now(),
      MAX_INPUT_MESSAGES,
    );
    const messages = unseen.messages.filter(
      // Its own answers it knows; a failed answer with nothing said has nothing to read.
      (m) => !(m.author.type === "agent" && m.author.id === agentId) && m.text.trim() !== "",
    );
    const authors = messages.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
    const names = await this.#deps.nameOf([...peopleIn(channel), ...authors]);
    return { messages, text: formatChannelInput(messages, names), names: Promise.resolve(names) };
  }

  /** The files people attached to these messages, read from the chat's attachments, in order. */
  async #filesOf(channelId: string, messages: readonly ChannelMessage[]): Promise<AttachedFile[]> {
    const files: AttachedFile[] = [];
    for (const message of messages) {
      for (const part of message.parts) {
        if (part.type !== "attachment") continue;
        const found = await this.#deps.store.attachments.read(channelId, part.id);
        if (found)
          files.push({ name: part.name, mimeType: part.mimeType, kind: part.kind, data: found.data });
      }
    }
    return files;
  }

  async #inputOf(channel: ChannelRecord, trigger: ChannelMessage): Promise<string> {
    const shown = [(await this.#deps.store.messages.get(trigger.id)) ?? trigger];
    const authors = shown.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
    return formatChannelInput(shown, await this.#deps.nameOf([...peopleIn(channel), ...authors]));
  }

  /** The steering inbox of the agent's session in the channel, live while a run of it goes on. */
  #inbox(channel: ChannelRecord, agentId: string, runId: string, lookFirst: boolean): SteeringInbox {
    const lane = laneOf(channelRef(channel.id, agentId));
    const inbox = new SteeringInbox(
      runId,
      async () => {
        const latest = (await this.#deps.store.messages.list(channel.id, { limit: 1 }))[0];
        if (!latest) return [];
        const unseen = await this.#unseenInput(channel, agentId, latest.id);
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
   * Ends the lane's inbox after its run; a message that reached it too late to be read is answered by
   * a new run (resolves to it, if any).
   */
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

  async #closeInbox(channelId: string, agentId: string, runId: string): Promise<RunHandle | undefined> {
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
    return this.startChannelRun(
      channel,
      agent,
      late,
      late.author.type === "user" ? late.author.id : "system",
    );
  }

  /** Starts the run of a flow step; its output is posted to the channel and handed to the flow. */
  readonly launchStep: StepLauncher = async (flow, index) => {
    const { store } = this.#deps;
    const step = flow.steps[index];
    if (!step) throw notFound(`Flow ${flow.id} has no step ${index}.`);
    const trigger = await store.messages.get(flow.triggerMessageId);
    const requestedBy = trigger?.author.type === "user" ? trigger.author.id : "system";
    const ref = { userId: `flow:${flow.id}`, sessionId: `step:${index}:${randomUUID()}` };
    let output = "";
    const handle = await this.#start(
      {
        channelId: flow.channelId,
        agentId: step.agentId,
        triggerMessageId: flow.triggerMessageId,
        depth: 0,
        flowId: flow.id,
        stepIndex: index,
        ref,
        requestedBy,
      },
      (runId, signal, setModel) =>
        this.#answering(flow.channelId, step.agentId, runId, signal, {}, undefined, async (onEvent) => {
          const result = await runAgentTurn(this.#deps.runtime, {
            ...(await this.#stepTurn(flow, index, runId, ref, requestedBy, signal)),
            input: stepInput(step.instruction, inputFor(flow, index)),
            onEvent,
            onModel: setModel,
          });
          output = result.answer;
          return result;
        }),
    );
    return { runId: handle.run.id, done: stepOutcome(handle, () => output) };
  };

  /** What a flow step's turn is, first run or resumed (its input aside). */
  async #stepTurn(
    flow: FlowRecord,
    index: number,
    runId: string,
    ref: SessionRef,
    requestedBy: string,
    signal: AbortSignal,
  ) {
    const { store } = this.#deps;
    const step = flow.steps[index];
    if (!step) throw notFound(`Flow ${flow.id} has no step ${index}.`);
    const channel = await store.channels.get(flow.channelId);
    if (!channel) throw notFound(`The flow's channel ${flow.channelId} no longer exists.`);
    const agent = await this.#agent(step.agentId);
    const nextStep = flow.steps[index + 1];
    const next = nextStep ? await store.agents.get(nextStep.agentId) : undefined;
    const workspace = this.#deps.workspaceFor(channel.id);
    return {
      agent,
      runId,
      channelId: channel.id,
      ref,
      system: flowStepSystemText(agent, channel, index, flow.steps.length, next),
      workspace,
      signal,
      extraTools: await this.#callTools(
        runId,
        channel.id,
        flow.triggerMessageId,
        0,
        [agent.id],
        requestedBy,
        workspace,
      ),
      requestedBy,
    };
  }

  /**
   * Starts a turn of `agentId` with a given system text and input (a meeting's speaker or its
   * minutes), posted to the channel as the agent's answer like any other; `done` settles with the
   * outcome. The turn's tools are the agent's own and call_agent.
   */
  async launchTurn(spec: TurnSpec): Promise<{ runId: string; done: Promise<TurnOutcome> }> {
    const { runtime } = this.#deps;
    let outcome: TurnOutcome | undefined;
    const handle = await this.#start(
      {
        channelId: spec.channelId,
        agentId: spec.agentId,
        triggerMessageId: spec.triggerMessageId,
        depth: 0,
        ref: spec.ref,
        requestedBy: spec.requestedBy,
      },
      (runId, signal) =>
        this.#answering(spec.channelId, spec.agentId, runId, signal, {}, undefined, async (onEvent) => {
          const agent = await this.#agent(spec.agentId);
          const workspace = this.#deps.workspaceFor(spec.channelId);
          const result = await runAgentTurn(runtime, {
            agent,
            runId,
            channelId: spec.channelId,
            ref: spec.ref,
            input: spec.input,
            system: spec.system,
            workspace,
            signal,
            sharedSession: true,
            extraTools: await this.#callTools(
              runId,
              spec.channelId,
              spec.triggerMessageId,
              0,
              [agent.id],
              spec.requestedBy,
              workspace,
            ),
            requestedBy: spec.requestedBy,
            ...(spec.output ? { output: spec.output } : {}),
            onEvent,
          });
          outcome = {
            ok: true,
            answer: result.answer,
            tokens: result.usage.inputTokens + result.usage.outputTokens,
            costUsd: result.costUsd ?? 0,
          };
          return result;
        }),
    );
    const done = handle.finished.then(
      (run): TurnOutcome =>
        run.status === "done" && outcome
          ? outcome
          : {
              ok: false,
              cancelled: run.status === "cancelled",
              error: run.error ?? `The run ended ${run.status}.`,
            },
    );
    return { runId: handle.run.id, done };
  }

  /**
   * Runs `target` for call_agent, nested under the calling run; returns its answer. `restarted`: the
   * call was running when the process died; the nested run it started goes on from its checkpoint
   * (its finished tool calls are not run again), or, when none is left to go on with, the call says
   * it was interrupted.
   */
  async runNested(
    target: AgentRecord,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
    restarted = false,
  ): Promise<string> {
    const ref = { userId: `call:${scope.parentRunId}`, sessionId: `agent:${target.id}` };
    const chain = [...scope.chain, target.id];
    let resumed: (ResumePoint & { stored: StoredRun }) | undefined;
    if (restarted) {
      const stored = this.#deps.adoptNested?.(scope.parentRunId, target.id);
      if (!stored) throw new DimsumError("tool_failed", INTERRUPTED_BY_RESTART);
      resumed = { stored, ...(await this.#resumePoint(stored, "restart")) };
    }
    return this.#runChild(
      scope,
      target.id,
      ref,
      signal,
      {
        failed: (reason) => new DimsumError("tool_failed", `@${target.id} did not answer: ${reason}`),
        empty: `(@${target.id} gave an empty answer)`,
      },
      async (runId, runSignal, setModel) => {
        const caller = await this.#deps.store.agents.get(scope.chain.at(-1) ?? "");
        const result = await runAgentTurn(this.#deps.runtime, {
          agent: target,
          runId,
          channelId: scope.channelId,
          ref: resumed?.stored.ref ?? ref,
          input: resumed ? "" : task,
          ...(resumed
            ? { resume: { reason: "restart" as const, decisions: {} }, firstSeq: resumed.firstSeq }
            : {}),
          system: callSystemText(target, caller, chain),
          workspace: scope.workspace,
          signal: runSignal,
          extraTools: await this.#callTools(
            runId,
            scope.channelId,
            scope.triggerMessageId,
            scope.depth + 1,
            chain,
            scope.requestedBy,
            scope.workspace,
            { present: scope.present === true, rootRunId: scope.rootRunId ?? scope.parentRunId },
          ),
          requestedBy: scope.requestedBy,
          // The person of the outermost run answers the called agent's MCP requests there.
          ...(scope.present ? { present: true, askIn: scope.rootRunId ?? scope.parentRunId } : {}),
          onEvent: (event, seq) => this.#record(runId, event, seq),
          onModel: setModel,
        });
        return { answer: result.answer, shown: result.text, outcome: result };
      },
      resumed ? { stored: resumed.stored, parts: resumed.start ?? [] } : undefined,
    );
  }

  /** A direct run of an agent over an OpenAI-style conversation, in a session of its own. */
  async complete(
    userId: string,
    agent: AgentRecord,
    systemExtra: string[],
    history: CompletionMessage[],
    input: UserMessage["content"],
    options: { signal?: AbortSignal; onDelta?: (text: string) => void; output?: OutputSpec },
  ): Promise<{ text: string; usage?: Usage; runId: string }> {
    const ref = { userId: `api:${userId}`, sessionId: `complete:${randomUUID()}` };
    if (history.length > 0) {
      await this.#deps.sessions.openSession(ref, { title: textOfContent(input).slice(0, 60) });
      await this.#deps.sessions.appendMessages(ref, undefined, history.map(toMessage));
    }
    let text = "";
    let usage: Usage | undefined;
    let failure: DimsumError | undefined;
    const request: Omit<RunRequest, "lane"> = {
      channelId: "",
      agentId: agent.id,
      triggerMessageId: 0,
      depth: 0,
      ref,
      requestedBy: userId,
    };
    if (options.signal) request.signal = options.signal;
    const handle = await this.#start(request, async (runId, signal, setModel) => {
      const workspace = this.#deps.workspaceFor(`api-${userId.replace(/[^A-Za-z0-9_-]/g, "_")}`);
      try {
        const result = await runAgentTurn(this.#deps.runtime, {
          agent,
          runId,
          channelId: "",
          ref,
          input,
          system: directSystemText(agent, systemExtra),
          workspace,
          signal,
          billedTo: userId,
          extraTools: await this.#callTools(runId, "", 0, 0, [agent.id], userId, workspace),
          ...(options.onDelta ? { onDelta: options.onDelta } : {}),
          ...(options.output ? { output: options.output } : {}),
          onModel: setModel,
        });
        text = result.answer;
        usage = result.usage;
        return result;
      } catch (err) {
        failure = toDimsumError(err);
        throw err;
      }
    });
    const run = await handle.finished;
    if (run.status === "cancelled") throw new DimsumError("aborted", run.error ?? "The run was cancelled.");
    if (run.status !== "done") throw failure ?? new DimsumError("internal", run.error ?? "The run failed.");
    return usage ? { text, usage, runId: run.id } : { text, runId: run.id };
  }

  /**
   * Runs a remote A2A agent for its tool, nested under the calling run like a called agent: its
   * streamed answer shows in the caller's answer as it comes; returns the answer.
   */
  async runRemote(
    remote: RemoteAgentConfig,
    scope: CallScope,
    task: string,
    signal: AbortSignal,
  ): Promise<string> {
    const agentId = `a2a:${remote.name}`;
    const ref = { userId: `call:${scope.parentRunId}`, sessionId: `a2a:${remote.name}` };
    const who = `the A2A agent "${remote.name}"`;
    return this.#runChild(
      scope,
      agentId,
      ref,
      signal,
      {
        failed: (reason, failure) =>
          new DimsumError(
            "tool_failed",
            `The A2A agent "${remote.name}" did not answer: ${reason}`,
            failure?.hint ? { hint: failure.hint } : {},
          ),
        empty: `(${who} gave an empty answer)`,
      },
      async (runId, runSignal) => {
        let seq = 0;
        const emit = (event: AgentEvent) => {
          seq++;
          this.#deps.runtime.emit({ type: "agent", channelId: scope.channelId, runId, seq, event });
          this.#record(runId, event, seq);
        };
        let answer = "";
        emit({ type: "run_start", runId, model: remote.url, tools: [] });
        // Loaded on the first call: the A2A client is not needed before.
        const { askRemoteAgent } = await import("../a2a/remote-agent.js");
        const stream = askRemoteAgent(remote, task, runSignal);
        for (;;) {
          const next = await stream.next();
          if (next.done) {
            answer = next.value;
            break;
          }
          if (next.value.type === "text") emit({ type: "text_delta", runId, text: next.value.text });
        }
        const usage = emptyUsage();
        emit({
          type: "done",
          runId,
          answer,
          iterations: 1,
          capReached: false,
          finishReason: "stop",
          usage,
        });
        return { answer, shown: answer, outcome: { usage } };
      },
    );
  }

  /**
   * Runs `work` as a run nested under the calling run (a called agent, a remote A2A agent): its
   * answer shows in the caller's as it comes and settles with its end. Returns the answer (`says.empty`
   * for a blank one); a run that did not end `done` throws `says.failed` with the reason.
   */
  async #runChild(
    scope: CallScope,
    agentId: string,
    ref: SessionRef,
    signal: AbortSignal,
    says: { failed: (reason: string, failure: DimsumError | undefined) => DimsumError; empty: string },
    work: (
      runId: string,
      runSignal: AbortSignal,
      setModel: (model: string) => void,
    ) => Promise<{ answer: string; shown: string; outcome: TurnReport }>,
    /** The nested run a restart cut off, going on (with what it did before). */
    resumed?: { stored: StoredRun; parts: MessagePart[] },
  ): Promise<string> {
    let answer = "";
    let failure: DimsumError | undefined;
    const body = async (runId: string, runSignal: AbortSignal, setModel: (model: string) => void) => {
      this.#parts.set(runId, resumed ? [...resumed.parts] : []);
      this.#updateParts(scope.parentRunId, (parts) => startChildRun(parts, runId, agentId));
      let status: "done" | "error" | "cancelled" = "done";
      try {
        const done = await work(runId, runSignal, setModel);
        answer = done.answer;
        this.#updateParts(runId, (parts) => withAnswer(parts, done.shown));
        return done.outcome;
      } catch (err) {
        failure = toDimsumError(err);
        status = runSignal.aborted ? "cancelled" : "error";
        this.#updateParts(runId, (parts) => endParts(parts, this.#failure(err, runSignal)));
        throw err;
      } finally {
        const childParts = this.#parts.get(runId) ?? [];
        this.#parts.delete(runId);
        this.#seqs.delete(runId);
        this.#updateParts(scope.parentRunId, (parts) => updateChildRun(parts, runId, status, childParts));
      }
    };
    const handle = resumed
      ? await this.#deps.runs.resume(
          resumed.stored,
          laneOf(resumed.stored.ref),
          async ({ run, signal: runSignal, setModel }) => outcomeOf(await body(run.id, runSignal, setModel)),
          undefined,
          signal,
        )
      : await this.#start(
          {
            channelId: scope.channelId,
            agentId,
            triggerMessageId: scope.triggerMessageId,
            depth: scope.depth + 1,
            parentRunId: scope.parentRunId,
            ref,
            requestedBy: scope.requestedBy,
            signal,
          },
          body,
        );
    const run = await handle.finished;
    if (run.status !== "done") throw says.failed(failure?.message ?? run.error ?? run.status, failure);
    return answer.trim() === "" ? says.empty : answer;
  }

  /** call_agent and the remote A2A agents' tools of a run (the remote agents as they are now). */
  async #callTools(
    parentRunId: string,
    channelId: string,
    triggerMessageId: number,
    depth: number,
    chain: string[],
    requestedBy: string,
    workspace: string,
    asking: { present: boolean; rootRunId: string } = { present: false, rootRunId: parentRunId },
  ) {
    const callAgent = this.#callTool(
      parentRunId,
      channelId,
      triggerMessageId,
      depth,
      chain,
      requestedBy,
      workspace,
      asking,
    );
    const remotes = (await this.#deps.remoteAgents?.()) ?? [];
    const http = [...(await this.#shareTool(channelId, chain)), ...((await this.#deps.httpTools?.()) ?? [])];
    if (remotes.length === 0) return [callAgent, ...http];
    const scope: CallScope = {
      channelId,
      triggerMessageId,
      parentRunId,
      depth,
      chain,
      requestedBy,
      workspace,
      rootRunId: asking.rootRunId,
    };
    return [
      callAgent,
      ...remoteAgentTools(remotes, (remote, task, signal) => this.runRemote(remote, scope, task, signal)),
      ...http,
    ];
  }

  /** share_file for a chat run of an agent that may read its workspace. */
  async #shareTool(channelId: string, chain: readonly string[]): Promise<Tool[]> {
    const limits = this.#deps.shareFileLimits;
    const agentId = chain[chain.length - 1];
    if (!limits || channelId === "" || !agentId) return [];
    const agent = await this.#deps.store.agents.get(agentId);
    if (!agent || !mayShareFiles(agent)) return [];
    const { store, now } = this.#deps;
    return [
      createShareFileTool({
        limits,
        put: async ({ name, ...file }) => {
          const id = createHash("sha256").update(file.data).digest("hex");
          return store.attachments.put(
            { id, ...file },
            { channelId, name, by: `agent:${agentId}`, at: now() },
          );
        },
      }),
    ];
  }

  #start(
    request: Omit<RunRequest, "lane">,
    turn: (runId: string, signal: AbortSignal, setModel: (model: string) => void) => Promise<TurnReport>,
  ): Promise<RunHandle> {
    return this.#deps.runs.start(
      { ...request, lane: laneOf(request.ref) },
      async ({ run, signal, setModel }) => outcomeOf(await turn(run.id, signal, setModel)),
    );
  }

  #callTool(
    parentRunId: string,
    channelId: string,
    triggerMessageId: number,
    depth: number,
    chain: string[],
    requestedBy: string,
    workspace: string,
    asking: { present: boolean; rootRunId: string } = { present: false, rootRunId: parentRunId },
  ) {
    const { store } = this.#deps;
    return createCallAgentTool(
      {
        ...callableAgents(store, this.#deps.runtime.viewerOf, requestedBy),
        runNested: (target, scope, task, signal, restarted) =>
          this.runNested(target, scope, task, signal, restarted),
      },
      {
        channelId,
        triggerMessageId,
        parentRunId,
        depth,
        chain,
        requestedBy,
        workspace,
        ...(asking.present ? { present: true } : {}),
        rootRunId: asking.rootRunId,
      },
    );
  }

  async #agent(id: string): Promise<AgentRecord> {
    const agent = await this.#deps.store.agents.get(id);
    if (!agent) throw notFound(`The agent @${id} no longer exists.`);
    return agent;
  }

  /**
   * Runs a turn whose answer is posted to the channel with its parts: the answer when it ends, or
   * what it said so far and the error or stop that ended it (then the failure is thrown on).
   */
  async #answering<T extends { text: string; waiting?: unknown }>(
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
    this.#parts.set(runId, start ? [...start] : existing ? [...existing.parts] : []);
    const post = (text: string, parts: MessagePart[]) =>
      this.#postAnswer(channelId, agentId, runId, text, parts, place, existing);
    try {
      const result = await turn((event, seq) => this.#record(runId, event, seq));
      if (result.waiting) {
        const requestedBy = (await this.#deps.store.runs.get(runId))?.requestedBy ?? "";
        await this.#deps.store.meta.set(seqKey(runId), String(this.#seqs.get(runId) ?? 0));
        const name = requestedBy ? (await this.#deps.nameOf([requestedBy]))(requestedBy) : undefined;
        const parts = askApprovalsOf(this.#parts.get(runId) ?? [], requestedBy, name);
        await post(textOfParts(parts), parts);
        return result;
      }
      const parts = withAnswer(this.#parts.get(runId) ?? [], result.text);
      if (result.text.trim() !== "" || parts.length > 0) {
        await post(existing || start ? textOfParts(parts) || result.text : result.text, parts);
      }
      return result;
    } catch (err) {
      const parts = endParts(this.#parts.get(runId) ?? [], this.#failure(err, signal));
      await post(textOfParts(parts), parts).catch(() => undefined);
      throw err;
    } finally {
      this.#parts.delete(runId);
      this.#seqs.delete(runId);
      void this.#closeInbox(channelId, agentId, runId).catch(() => undefined);
    }
  }

  /** What a live run's answer holds so far, and the number of its last event folded in. */
  liveParts(runId: string): { parts: MessagePart[]; seq: number } | undefined {
    const parts = this.#parts.get(runId);
    return parts ? { parts, seq: this.#seqs.get(runId) ?? 0 } : undefined;
  }

  #record(runId: string, event: AgentEvent, seq: number): void {
    this.#seqs.set(runId, seq);
    this.#updateParts(runId, (parts) => applyAgentEvent(parts, event));
  }

  #failure(err: unknown, signal: AbortSignal) {
    if (signal.aborted) {
      const reason: unknown = signal.reason;
      return failurePart(
        "aborted",
        reason instanceof Error && reason.name !== "AbortError" ? reason.message : "The run was cancelled.",
      );
    }
    const error = toDimsumError(err);
    return failurePart(error.code, error.message, error.hint);
  }

  #updateParts(runId: string, update: (parts: MessagePart[]) => MessagePart[]): void {
    const current = this.#parts.get(runId);
    if (current) this.#parts.set(runId, update(current));
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

/** What a turn reports to its run: usage, model and cost (kept on the run), whether it waits. */
interface TurnReport {
  usage?: Usage;
  waiting?: unknown;
  model?: string;
  costUsd?: number;
}

/** The run's record of a turn's outcome. */
function outcomeOf(result: TurnReport): Awaited<ReturnType<RunBody>> {
  return {
    ...(result.usage ? { usage: result.usage } : {}),
    ...(result.model ? { model: result.model } : {}),
    ...(result.costUsd !== undefined ? { costUsd: result.costUsd } : {}),
    ...(result.waiting ? { waiting: true } : {}),
  };
}

/** How a flow step's run ended, for the flow: its output, or why it has none. */
function stepOutcome(handle: RunHandle, output: () => string): Promise<StepOutcome> {
  return handle.finished.then(
    (run): StepOutcome =>
      run.status === "done"
        ? { ok: true, output: output() }
        : { ok: false, error: run.error ?? `The step's run ended ${run.status}.` },
  );
}

/** The parts with the final answer as text when no text was streamed (a model that did not stream). */
function withAnswer(parts: MessagePart[], text: string): MessagePart[] {
  if (text.trim() === "" || parts.some((p) => p.type === "text")) return parts;
  return [...parts, { type: "text", text }];
}

/** The text of a person's message content (its files left out). */
function textOfContent(content: UserMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

function toMessage(m: CompletionMessage): Message {
  return m.role === "assistant"
    ? { role: "assistant", content: [{ type: "text", text: m.content }] }
    : { role: "user", content: m.content };
}
