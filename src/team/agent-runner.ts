/**
 * Starts agent runs of every kind: an answer in a channel, a step of a collaboration flow, a nested
 * call_agent run, and a direct completion for the OpenAI-compatible endpoint. Each is a RunManager
 * run around one agent turn, in its own session.
 */
import { randomUUID } from "node:crypto";
import type { AgentEvent } from "../agent/events.js";
import { DimsumError, notFound, toDimsumError } from "../errors.js";
import type { Message, Usage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import { runAgentTurn, type TurnRuntime } from "./agent-turn.js";
import { type CallScope, createCallAgentTool } from "./call-agent-tool.js";
import type { EventBus } from "./event-bus.js";
import type { StepLauncher, StepOutcome } from "./flow-runner.js";
import { inputFor } from "./flows.js";
import {
  applyAgentEvent,
  endParts,
  failurePart,
  startChildRun,
  textOfParts,
  updateChildRun,
} from "./message-parts.js";
import type { RunHandle, RunManager, RunRequest } from "./run-manager.js";
import {
  callSystemText,
  channelSystemText,
  directSystemText,
  flowStepSystemText,
  formatChannelInput,
  type NamesFor,
  peopleIn,
  stepInput,
} from "./team-prompt.js";
import type { TeamStore } from "./team-store.js";
import type { AgentRecord, ChannelMessage, ChannelRecord, MessagePart } from "./types.js";

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
}

export interface CompletionMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

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

function laneOf(ref: SessionRef): string {
  return `${ref.userId}\u0000${ref.sessionId}`;
}

/** Runs agents for the team facade. */
export class AgentRunner {
  readonly #deps: AgentRunnerDeps;
  /** The parts of each live run's answer, built from its agent events. */
  readonly #parts = new Map<string, MessagePart[]>();
  /** The number of the last agent event folded into each live run's parts. */
  readonly #seqs = new Map<string, number>();

  constructor(deps: AgentRunnerDeps) {
    this.#deps = deps;
  }

  /** Starts `agent` answering in the channel; its input is what it has not seen up to `trigger`. */
  startChannelRun(
    channel: ChannelRecord,
    agent: AgentRecord,
    trigger: ChannelMessage,
    requestedBy: string,
    options: AnswerOptions = {},
  ): Promise<RunHandle> {
    const { store, runtime, now } = this.#deps;
    const place: AnswerPlace = { replyTo: trigger.id };
    if (options.versionOf !== undefined) place.versionOf = options.versionOf;
    const ref = { userId: `channel:${channel.id}`, sessionId: `agent:${agent.id}` };
    return this.#start(
      { channelId: channel.id, agentId: agent.id, triggerMessageId: trigger.id, depth: 0, ref, requestedBy },
      (runId, signal) =>
        this.#answering(channel.id, agent.id, runId, signal, place, async (onEvent) => {
          // Re-read: the channel and the agent may have changed while the run was queued.
          const current = (await store.channels.get(channel.id)) ?? channel;
          const agents = new Map((await store.agents.list()).map((a) => [a.id, a]));
          const self = agents.get(agent.id) ?? agent;
          const reader = `agent:${agent.id}`;
          const seen = await store.messages.advanceMarker(reader, channel.id, trigger.id, now());
          const unseen = (
            await store.messages.range(channel.id, seen, trigger.id, MAX_INPUT_MESSAGES)
          ).filter(
            // Its own answers it knows; a failed answer with nothing said has nothing to read.
            (m) => !(m.author.type === "agent" && m.author.id === agent.id) && m.text.trim() !== "",
          );
          const workspace = this.#deps.workspaceFor(channel.id);
          const shown = unseen.length > 0 ? unseen : [(await store.messages.get(trigger.id)) ?? trigger];
          const authors = shown.flatMap((m) => (m.author.type === "user" ? [m.author.id] : []));
          const names = await this.#deps.nameOf([...peopleIn(current), ...authors]);
          const input = formatChannelInput(shown, names);
          return runAgentTurn(runtime, {
            agent: self,
            runId,
            channelId: channel.id,
            ref,
            input: options.note ? `${options.note}\n\n${input}` : input,
            system: channelSystemText(self, current, agents, names),
            workspace,
            signal,
            extraTools: [
              this.#callTool(runId, channel.id, trigger.id, 0, [agent.id], requestedBy, workspace, {
                present: options.present === true,
                rootRunId: runId,
              }),
            ],
            requestedBy,
            ...(options.present ? { present: true } : {}),
            onEvent,
          });
        }),
    );
  }

  /** Starts the run of a flow step; its output is posted to the channel and handed to the flow. */
  readonly launchStep: StepLauncher = async (flow, index) => {
    const { store, runtime } = this.#deps;
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
      (runId, signal) =>
        this.#answering(flow.channelId, step.agentId, runId, signal, {}, async (onEvent) => {
          const channel = await store.channels.get(flow.channelId);
          if (!channel) throw notFound(`The flow's channel ${flow.channelId} no longer exists.`);
          const agent = await this.#agent(step.agentId);
          const nextStep = flow.steps[index + 1];
          const next = nextStep ? await store.agents.get(nextStep.agentId) : undefined;
          const workspace = this.#deps.workspaceFor(channel.id);
          const result = await runAgentTurn(runtime, {
            agent,
            runId,
            channelId: channel.id,
            ref,
            input: stepInput(step.instruction, inputFor(flow, index)),
            system: flowStepSystemText(agent, channel, index, flow.steps.length, next),
            workspace,
            signal,
            extraTools: [
              this.#callTool(runId, channel.id, flow.triggerMessageId, 0, [agent.id], requestedBy, workspace),
            ],
            requestedBy,
            onEvent,
          });
          output = result.answer;
          return result;
        }),
    );
    const done = handle.finished.then(
      (run): StepOutcome =>
        run.status === "done"
          ? { ok: true, output }
          : { ok: false, error: run.error ?? `The step's run ended ${run.status}.` },
    );
    return { runId: handle.run.id, done };
  };

  /** Runs `target` for call_agent, nested under the calling run; returns its answer. */
  async runNested(target: AgentRecord, scope: CallScope, task: string, signal: AbortSignal): Promise<string> {
    const ref = { userId: `call:${scope.parentRunId}`, sessionId: `agent:${target.id}` };
    const chain = [...scope.chain, target.id];
    let answer = "";
    let failure: DimsumError | undefined;
    const handle = await this.#start(
      {
        channelId: scope.channelId,
        agentId: target.id,
        triggerMessageId: scope.triggerMessageId,
        depth: scope.depth + 1,
        parentRunId: scope.parentRunId,
        ref,
        requestedBy: scope.requestedBy,
        signal,
      },
      async (runId, runSignal) => {
        const caller = await this.#deps.store.agents.get(scope.chain.at(-1) ?? "");
        this.#parts.set(runId, []);
        this.#updateParts(scope.parentRunId, (parts) => startChildRun(parts, runId, target.id));
        let status: "done" | "error" | "cancelled" = "done";
        try {
          const result = await runAgentTurn(this.#deps.runtime, {
            agent: target,
            runId,
            channelId: scope.channelId,
            ref,
            input: task,
            system: callSystemText(target, caller, chain),
            workspace: scope.workspace,
            signal: runSignal,
            extraTools: [
              this.#callTool(
                runId,
                scope.channelId,
                scope.triggerMessageId,
                scope.depth + 1,
                chain,
                scope.requestedBy,
                scope.workspace,
                { present: scope.present === true, rootRunId: scope.rootRunId ?? scope.parentRunId },
              ),
            ],
            requestedBy: scope.requestedBy,
            // The person of the outermost run answers the called agent's MCP requests there.
            ...(scope.present ? { present: true, askIn: scope.rootRunId ?? scope.parentRunId } : {}),
            onEvent: (event, seq) => this.#record(runId, event, seq),
          });
          answer = result.answer;
          this.#updateParts(runId, (parts) => withAnswer(parts, result.text));
          return result;
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
      },
    );
    const run = await handle.finished;
    if (run.status !== "done") {
      throw new DimsumError(
        "tool_failed",
        `@${target.id} did not answer: ${failure?.message ?? run.error ?? run.status}`,
      );
    }
    return answer.trim() === "" ? `(@${target.id} gave an empty answer)` : answer;
  }

  /** A direct run of an agent over an OpenAI-style conversation, in a session of its own. */
  async complete(
    userId: string,
    agent: AgentRecord,
    systemExtra: string[],
    history: CompletionMessage[],
    input: string,
    options: { signal?: AbortSignal; onDelta?: (text: string) => void },
  ): Promise<{ text: string; usage?: Usage; runId: string }> {
    const ref = { userId: `api:${userId}`, sessionId: `complete:${randomUUID()}` };
    if (history.length > 0) {
      await this.#deps.sessions.openSession(ref, { title: input.slice(0, 60) });
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
    const handle = await this.#start(request, async (runId, signal) => {
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
          extraTools: [this.#callTool(runId, "", 0, 0, [agent.id], userId, workspace)],
          ...(options.onDelta ? { onDelta: options.onDelta } : {}),
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

  #start(
    request: Omit<RunRequest, "lane">,
    turn: (runId: string, signal: AbortSignal) => Promise<{ usage?: Usage }>,
  ): Promise<RunHandle> {
    return this.#deps.runs.start({ ...request, lane: laneOf(request.ref) }, ({ run, signal }) =>
      turn(run.id, signal),
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
        getAgent: (id) => store.agents.get(id),
        listAgentIds: async () => (await store.agents.list()).map((a) => a.id),
        runNested: (target, scope, task, signal) => this.runNested(target, scope, task, signal),
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
  async #answering<T extends { text: string }>(
    channelId: string,
    agentId: string,
    runId: string,
    signal: AbortSignal,
    place: AnswerPlace,
    turn: (onEvent: (event: AgentEvent, seq: number) => void) => Promise<T>,
  ): Promise<T> {
    this.#parts.set(runId, []);
    try {
      const result = await turn((event, seq) => this.#record(runId, event, seq));
      const parts = withAnswer(this.#parts.get(runId) ?? [], result.text);
      if (result.text.trim() !== "" || parts.length > 0) {
        await this.#postAnswer(channelId, agentId, runId, result.text, parts, place);
      }
      return result;
    } catch (err) {
      const parts = endParts(this.#parts.get(runId) ?? [], this.#failure(err, signal));
      await this.#postAnswer(channelId, agentId, runId, textOfParts(parts), parts, place).catch(
        () => undefined,
      );
      throw err;
    } finally {
      this.#parts.delete(runId);
      this.#seqs.delete(runId);
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
  ): Promise<void> {
    // Another instance closed the run (this one lost its lease): its answer is no longer wanted.
    if (!(await this.#deps.runs.holds(runId))) return;
    const message = await this.#deps.store.messages.insert({
      channelId,
      author: { type: "agent", id: agentId },
      text,
      parts,
      runId,
      ...place,
      mentions: [],
      createdAt: this.#deps.now(),
    });
    this.#deps.bus.emit({ type: "message", channelId, message });
  }
}

/** The parts with the final answer as text when no text was streamed (a model that did not stream). */
function withAnswer(parts: MessagePart[], text: string): MessagePart[] {
  if (text.trim() === "" || parts.some((p) => p.type === "text")) return parts;
  return [...parts, { type: "text", text }];
}

function toMessage(m: CompletionMessage): Message {
  return m.role === "assistant"
    ? { role: "assistant", content: [{ type: "text", text: m.content }] }
    : { role: "user", content: m.content };
}
