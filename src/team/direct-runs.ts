/**
 * Turns with a given system text and input: a meeting's speaker or its minutes (posted to the
 * channel like any answer), and a direct completion for the OpenAI-compatible endpoint (in a session
 * of its own, posted nowhere).
 */

import { randomUUID } from "node:crypto";
import type { OutputSpec } from "../agent/structured-output.js";
import { DimsumError, toDimsumError } from "../errors.js";
import type { Message, Usage, UserMessage } from "../llm/types.js";
import type { SessionRef } from "../store/types.js";
import { runAgentTurn } from "./agent-turn.js";
import { RunKind } from "./run-kind.js";
import type { RunRequest } from "./run-manager.js";
import { topScope } from "./run-tools.js";
import { requireAgent, startRun } from "./runner-deps.js";
import { directSystemText } from "./team-prompt.js";
import type { AgentRecord } from "./types.js";

/** A message of an OpenAI-style conversation; a person's may carry images and files. */
export type CompletionMessage =
  | { role: "system" | "assistant"; content: string }
  | { role: "user"; content: UserMessage["content"] };

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

/** Runs turns given their system text and input. */
export class DirectRuns extends RunKind {
  /**
   * Starts a turn of `agentId` with a given system text and input (a meeting's speaker or its
   * minutes), posted to the channel as the agent's answer like any other; `done` settles with the
   * outcome. The turn's tools are the agent's own and call_agent.
   */
  async launchTurn(spec: TurnSpec): Promise<{ runId: string; done: Promise<TurnOutcome> }> {
    let outcome: TurnOutcome | undefined;
    const handle = await startRun(
      this.deps.runs,
      {
        channelId: spec.channelId,
        agentId: spec.agentId,
        triggerMessageId: spec.triggerMessageId,
        depth: 0,
        ref: spec.ref,
        requestedBy: spec.requestedBy,
      },
      (runId, signal) =>
        this.answers.answering(
          spec.channelId,
          spec.agentId,
          runId,
          signal,
          {},
          undefined,
          async (onEvent) => {
            const result = await this.#specTurn(spec, runId, signal, onEvent);
            outcome = {
              ok: true,
              answer: result.answer,
              tokens: result.usage.inputTokens + result.usage.outputTokens,
              costUsd: result.costUsd ?? 0,
            };
            return result;
          },
        ),
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

  /** The agent's turn of a `TurnSpec`, in the channel's shared session. */
  async #specTurn(
    spec: TurnSpec,
    runId: string,
    signal: AbortSignal,
    onEvent: NonNullable<Parameters<typeof runAgentTurn>[1]["onEvent"]>,
  ) {
    const agent = await requireAgent(this.deps.store, spec.agentId);
    const workspace = this.deps.workspaceFor(spec.channelId);
    return runAgentTurn(this.deps.runtime, {
      agent,
      runId,
      channelId: spec.channelId,
      ref: spec.ref,
      input: spec.input,
      system: spec.system,
      workspace,
      signal,
      sharedSession: true,
      extraTools: await this.tools.callTools(
        topScope(runId, spec.channelId, spec.triggerMessageId, agent.id, spec.requestedBy, workspace),
      ),
      requestedBy: spec.requestedBy,
      ...(spec.output ? { output: spec.output } : {}),
      onEvent,
    });
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
      await this.deps.sessions.openSession(ref, { title: textOfContent(input).slice(0, 60) });
      await this.deps.sessions.appendMessages(ref, undefined, history.map(toMessage));
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
    const handle = await startRun(this.deps.runs, request, async (runId, signal, setModel) => {
      const workspace = this.deps.workspaceFor(`api-${userId.replace(/[^A-Za-z0-9_-]/g, "_")}`);
      try {
        const result = await runAgentTurn(this.deps.runtime, {
          agent,
          runId,
          channelId: "",
          ref,
          input,
          system: directSystemText(agent, systemExtra),
          workspace,
          signal,
          billedTo: userId,
          extraTools: await this.tools.callTools(topScope(runId, "", 0, agent.id, userId, workspace)),
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
