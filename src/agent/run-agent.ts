/**
 * The agent loop: build context -> stream model -> collect tool calls -> validate -> execute
 * (parallel where safe) -> append results -> check stop conditions -> repeat.
 */
import { randomUUID } from "node:crypto";
import { DimsumError, toDimsumError } from "../errors.js";
import { stream as defaultStream } from "../llm/providers.js";
import type {
  AssistantMessage,
  Context,
  Message,
  ModelSpec,
  StreamFunction,
  StreamOptions,
  Usage,
} from "../llm/types.js";
import { ToolRegistry } from "../tools/registry.js";
import type { ToolContext } from "../tools/types.js";
import { type AgentEvent, errorEvent } from "./events.js";
import { executeTools } from "./execute-tools.js";
import { firstStop, maxIterationsReached, RepeatedCallGuard, type StopCondition } from "./stop-conditions.js";
import { streamModel } from "./stream-model.js";
import { addUsage, costOf, emptyUsage } from "./usage.js";

/** What every tool call of the run shares; `signal` and `runId` are filled in by the loop. */
export type ToolEnvironment = Omit<ToolContext, "signal" | "runId">;

/** Inputs of one context build: the loop's view of the conversation so far. */
export interface ContextRequest {
  runId: string;
  system: string | undefined;
  messages: Message[];
  tools: ToolRegistry;
  toolsOffered: boolean;
  signal: AbortSignal;
  /** Adds an event (e.g. `compaction`) to the run's stream, yielded right after the context is built. */
  report: (event: AgentEvent) => void;
}

/** Builds the context for a model call. The default sends system + messages + tool schemas. */
export type ContextBuilder = (request: ContextRequest) => Context | Promise<Context>;

export interface RunAgentOptions {
  model: ModelSpec;
  /** The conversation so far, ending with the new user message. Not mutated. */
  messages: Message[];
  system?: string;
  tools?: ToolRegistry;
  toolEnvironment: ToolEnvironment;
  /** Model calls that may use tools (default 10); then one final call without tools answers. */
  maxIterations?: number;
  signal?: AbortSignal;
  runId?: string;
  /** The provider function; defaults to the one for the model's wire protocol. */
  stream?: StreamFunction;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** Budget for one tool result, in characters (default 20,000). */
  maxToolResultChars?: number;
  buildContext?: ContextBuilder;
  stopConditions?: StopCondition[];
}

const defaultBuildContext: ContextBuilder = ({ system, messages, tools, toolsOffered }) => {
  const context: Context = { messages };
  if (system) context.system = system;
  if (toolsOffered && tools.names().length > 0) context.tools = tools.schemas();
  return context;
};

/** Runs the ReAct loop as a stream of typed events, ending with exactly one `done` or `error`. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent, void> {
  const runId = options.runId ?? randomUUID();
  const signal = options.signal ?? new AbortController().signal;
  const registry = options.tools ?? new ToolRegistry();
  const maxIterations = options.maxIterations ?? 10;
  const stopConditions = options.stopConditions ?? [maxIterationsReached];
  const buildContext = options.buildContext ?? defaultBuildContext;
  const guard = new RepeatedCallGuard();
  const messages = [...options.messages];
  const toolContext: ToolContext = { ...options.toolEnvironment, signal, runId };
  let total = emptyUsage();
  let stopReason: string | undefined;

  try {
    const stream = options.stream ?? defaultStream;
    yield {
      type: "run_start",
      runId,
      model: `${options.model.provider}:${options.model.id}`,
      tools: registry.names(),
    };
    for (let iteration = 1; ; iteration++) {
      if (signal.aborted) throw new DimsumError("aborted", "The run was aborted.");
      const toolsOffered = stopReason === undefined;
      yield { type: "turn_start", runId, iteration, toolsOffered };
      const reported: AgentEvent[] = [];
      const context = await buildContext({
        runId,
        system: options.system,
        messages,
        tools: registry,
        toolsOffered,
        signal,
        report: (event) => reported.push(event),
      });
      yield* reported;
      const streamOptions: StreamOptions = { ...options.streamOptions, signal };
      if (!toolsOffered) streamOptions.toolChoice = "none";

      const turn = yield* streamModel(runId, stream, options.model, context, streamOptions);
      if (!turn.ok) {
        yield errorEvent(runId, turn.error);
        return;
      }
      if (turn.usage) {
        total = addUsage(total, turn.usage);
        yield usageEvent(runId, turn.usage, total, options.model);
      }

      if (turn.toolCalls.length === 0 || !toolsOffered) {
        const message = toolsOffered ? turn.message : withoutToolCalls(turn.message);
        messages.push(message);
        yield { type: "messages", runId, messages: [message] };
        const done: AgentEvent = {
          type: "done",
          runId,
          answer: answerText(message),
          iterations: iteration,
          capReached: !toolsOffered,
          finishReason: turn.finishReason,
          usage: total,
        };
        const cost = costOf(total, options.model.pricing);
        if (cost !== undefined) done.costUsd = cost;
        yield done;
        return;
      }

      const results = yield* executeTools(turn.toolCalls, {
        runId,
        registry,
        context: toolContext,
        guard,
        maxResultChars: options.maxToolResultChars ?? 20_000,
      });
      // An abort during tools drops the whole turn: never an assistant tool call without its results.
      if (signal.aborted) throw new DimsumError("aborted", "The run was aborted.");
      messages.push(turn.message, ...results);
      yield { type: "messages", runId, messages: [turn.message, ...results] };
      stopReason = firstStop(stopConditions, { iteration, maxIterations, signal });
    }
  } catch (err) {
    yield errorEvent(runId, toDimsumError(err));
  }
}

function usageEvent(runId: string, usage: Usage, total: Usage, model: ModelSpec): AgentEvent {
  const event: AgentEvent = { type: "usage", runId, usage, total };
  const cost = costOf(total, model.pricing);
  if (cost !== undefined) event.costUsd = cost;
  return event;
}

/** The final answer: the assistant's text parts joined. */
function answerText(message: AssistantMessage): string {
  return message.content
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("");
}

/** Some models call tools even when told not to; such calls are dropped so the history stays valid. */
function withoutToolCalls(message: AssistantMessage): AssistantMessage {
  return { ...message, content: message.content.filter((p) => p.type !== "tool_call") };
}
