/**
 * The agent loop: build context -> stream model -> collect tool calls -> validate -> execute
 * (parallel where safe) -> append results -> check stop conditions -> repeat.
 */
import { randomUUID } from "node:crypto";
import { DimsumError, toDimsumError } from "../errors.js";
import { createMemoryCooldownStore } from "../llm/cooldowns.js";
import { chainModel, type FallbackSettings, withFallbacks } from "../llm/fallback-chain.js";
import { stream as defaultStream } from "../llm/providers.js";
import { withTextToolCalls } from "../llm/text-tool-calls.js";
import type {
  AssistantMessage,
  Context,
  Message,
  ModelSpec,
  StreamFunction,
  StreamOptions,
  ToolCall,
  ToolResultMessage,
  UserMessage,
} from "../llm/types.js";
import { ToolRegistry } from "../tools/registry.js";
import type { ToolContext } from "../tools/types.js";
import type { Approver } from "./approvals.js";
import type { RunCheckpoint } from "./checkpoint.js";
import { type AgentEvent, errorEvent } from "./events.js";
import { executeTools, type ToolOutcome } from "./execute-tools.js";
import type { SteeringSource } from "./steering.js";
import { firstStop, maxIterationsReached, RepeatedCallGuard, type StopCondition } from "./stop-conditions.js";
import { streamModel } from "./stream-model.js";
import {
  correctionMessage,
  invalidOutputError,
  OutputChecker,
  type OutputSpec,
  outputInstruction,
} from "./structured-output.js";
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
  /**
   * Cooldowns of the model chain (`model.fallbacks`), shared by the runs of a process or of every
   * instance; default: this run's own.
   */
  fallback?: FallbackSettings;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  /** Budget for one tool result, in characters (default 20,000). */
  maxToolResultChars?: number;
  buildContext?: ContextBuilder;
  stopConditions?: StopCondition[];
  /**
   * Decides calls that need approval (the shell's confirm rules, the ask-first list, a tool's own
   * flag): at once, or `wait` to end the run `waiting` with a checkpoint. Default: the tool
   * environment's `approve` (yes/no); with neither, such calls are refused with the reason.
   */
  approve?: Approver;
  /** Tool names, or `prefix*` patterns, whose every call needs approval. */
  askFirst?: readonly string[];
  /** Messages that reach the run while it goes on, read between steps. */
  steering?: SteeringSource;
  /**
   * Continue a run from its checkpoint (`messages` is then the stored conversation without the
   * checkpoint's open turn): after its approvals were decided, or after the process running it died.
   */
  resume?: { checkpoint: RunCheckpoint; reason: "approval" | "restart" };
  /**
   * Hold the final answer to a JSON Schema: tools may be used first; the answer must be JSON valid
   * against it (sent back once with the problems, then the run fails `output_invalid`). The parsed
   * value is the `done` event's `output`.
   */
  output?: OutputSpec;
}

const defaultBuildContext: ContextBuilder = ({ system, messages, tools, toolsOffered }) => {
  const context: Context = { messages };
  if (system) context.system = system;
  if (toolsOffered && tools.names().length > 0) context.tools = tools.schemas();
  return context;
};

/** Runs the ReAct loop as a stream of typed events, ending with exactly one `done`, `error` or `waiting`. */
export async function* runAgent(options: RunAgentOptions): AsyncGenerator<AgentEvent, void> {
  const runId = options.runId ?? randomUUID();
  const signal = options.signal ?? new AbortController().signal;
  const registry = options.tools ?? new ToolRegistry();
  const maxIterations = options.maxIterations ?? 10;
  const stopConditions = options.stopConditions ?? [maxIterationsReached];
  const buildContext = options.buildContext ?? defaultBuildContext;
  const resume = options.resume?.checkpoint;
  const guard = new RepeatedCallGuard(3, resume?.calls ?? []);
  const messages = [...options.messages];
  const toolContext: ToolContext = { ...options.toolEnvironment, signal, runId };
  const steering = options.steering;
  let output: OutputChecker | undefined;
  let corrected = false;
  let total = resume?.usage ?? emptyUsage();
  // Summed per call: the calls of a run may be answered by different models of the chain.
  let cost = resume ? costOf(resume.usage, options.model.pricing) : 0;
  let stopReason: string | undefined = resume?.stopReason;
  let iteration = resume?.iteration ?? 0;
  const checkpoint = (turn?: RunCheckpoint["turn"]): RunCheckpoint => ({
    version: 1,
    iteration,
    usage: total,
    ...(stopReason !== undefined ? { stopReason } : {}),
    calls: guard.entries(),
    ...(turn ? { turn } : {}),
  });
  const tools = (calls: AssistantMessage, known: RunCheckpoint["turn"] | undefined, interrupted: boolean) =>
    executeTools(toolCallsOf(calls), {
      runId,
      registry,
      context: toolContext,
      guard,
      maxResultChars: options.maxToolResultChars ?? 20_000,
      ...(options.approve ? { approve: options.approve } : {}),
      ...(options.askFirst ? { askFirst: options.askFirst } : {}),
      ...(steering ? { steering } : {}),
      ...(known ? { known: new Map(known.results.map((r) => [r.toolCallId, r])) } : {}),
      ...(known ? { decided: new Map(Object.entries(known.decisions)) } : {}),
      ...(interrupted ? { interrupted: true } : {}),
    });

  try {
    const stream = withFallbacks(
      withTextToolCalls(options.stream ?? defaultStream),
      options.fallback ?? { cooldowns: createMemoryCooldownStore() },
    );
    yield {
      type: "run_start",
      runId,
      model: `${options.model.provider}:${options.model.id}`,
      tools: registry.names(),
    };
    if (options.output) output = new OutputChecker(options.output);
    const system = options.output
      ? [options.system, outputInstruction(options.output)].filter(Boolean).join("\n\n")
      : options.system;
    if (options.resume) {
      yield { type: "resumed", runId, reason: options.resume.reason, iteration };
      const open = resume?.turn;
      if (open) {
        // A restart with no pending approvals: the turn's calls were running when the process died.
        const interrupted = options.resume.reason === "restart" && open.pending.length === 0;
        const outcome = yield* tools(open.message, open, interrupted);
        const unit = yield* closeTurn(open.message, outcome);
        if (!unit) return;
        messages.push(...unit);
        stopReason = firstStop(stopConditions, { iteration, maxIterations, signal });
      }
    }
    while (true) {
      iteration++;
      if (signal.aborted) throw new DimsumError("aborted", "The run was aborted.");
      if (iteration > 1) {
        const steered = yield* readSteering([]);
        if (steered) messages.push(...steered);
      }
      const toolsOffered = stopReason === undefined;
      yield { type: "turn_start", runId, iteration, toolsOffered };
      const reported: AgentEvent[] = [];
      const context = await buildContext({
        runId,
        system,
        messages,
        tools: registry,
        toolsOffered,
        signal,
        report: (event) => reported.push(event),
      });
      yield* reported;
      const streamOptions: StreamOptions = { ...options.streamOptions, signal };
      if (!toolsOffered) streamOptions.toolChoice = "none";
      if (output) streamOptions.responseFormat = output.format;

      const turn = yield* streamModel(runId, stream, options.model, context, streamOptions);
      if (!turn.ok) {
        yield errorEvent(runId, turn.error);
        return;
      }
      if (turn.usage) {
        total = addUsage(total, turn.usage);
        const callCost = costOf(turn.usage, chainModel(options.model, turn.model).pricing);
        cost = cost === undefined || callCost === undefined ? undefined : cost + callCost;
        const event: AgentEvent = { type: "usage", runId, usage: turn.usage, total, model: turn.model };
        if (cost !== undefined) event.costUsd = cost;
        yield event;
      }

      if (turn.toolCalls.length === 0 || !toolsOffered) {
        const message = toolsOffered ? turn.message : withoutToolCalls(turn.message);
        // A message that arrived while the answer streamed is answered in this run.
        if (toolsOffered && steering?.pending()) {
          const steered = yield* readSteering([message]);
          if (steered) {
            messages.push(...steered);
            continue;
          }
        }
        messages.push(message);
        yield { type: "messages", runId, messages: [message], checkpoint: checkpoint() };
        const checked = output?.check(answerText(message));
        if (checked && !checked.ok) {
          if (corrected) throw invalidOutputError(checked.problems);
          // Sent back once, with what was wrong.
          corrected = true;
          const fix = correctionMessage(checked.problems);
          messages.push(fix);
          yield { type: "messages", runId, messages: [fix], checkpoint: checkpoint() };
          continue;
        }
        const done: Extract<AgentEvent, { type: "done" }> = {
          type: "done",
          runId,
          answer: answerText(message),
          iterations: iteration,
          capReached: !toolsOffered,
          finishReason: turn.finishReason,
          usage: total,
          model: turn.model,
        };
        if (cost !== undefined) done.costUsd = cost;
        if (checked?.ok) done.output = checked.value;
        yield done;
        return;
      }

      // Written before the calls run, so a restart knows which calls were in flight.
      yield {
        type: "checkpoint",
        runId,
        checkpoint: checkpoint({ message: turn.message, results: [], pending: [], decisions: {} }),
      };
      const outcome = yield* tools(turn.message, undefined, false);
      const unit = yield* closeTurn(turn.message, outcome);
      if (!unit) return;
      messages.push(...unit);
      stopReason = firstStop(stopConditions, { iteration, maxIterations, signal });
    }
  } catch (err) {
    yield errorEvent(runId, toDimsumError(err));
  }

  /**
   * Ends a turn's tool phase: the assistant message and every result as one unit, or (calls pending
   * approval) the `waiting` event with the checkpoint; undefined then.
   */
  async function* closeTurn(
    message: AssistantMessage,
    outcome: ToolOutcome,
  ): AsyncGenerator<AgentEvent, Array<AssistantMessage | ToolResultMessage> | undefined> {
    // An abort during tools drops the whole turn: never an assistant tool call without its results.
    if (signal.aborted) throw new DimsumError("aborted", "The run was aborted.");
    const done = outcome.results.filter((r): r is ToolResultMessage => r !== undefined);
    if (outcome.pending.length > 0) {
      const turn = { message, results: done, pending: outcome.pending, decisions: {} };
      yield { type: "waiting", runId, approvals: outcome.pending, checkpoint: checkpoint(turn) };
      return undefined;
    }
    const unit = [message, ...done];
    yield { type: "messages", runId, messages: unit, checkpoint: checkpoint() };
    return unit;
  }

  /** Takes steering messages, if any, and yields them (after `before`) as one unit. */
  async function* readSteering(
    before: AssistantMessage[],
  ): AsyncGenerator<AgentEvent, Array<AssistantMessage | UserMessage> | undefined> {
    if (!steering) return undefined;
    const taken = await steering.take();
    if (taken.length === 0) return undefined;
    const unit = [...before, ...taken];
    yield { type: "steered", runId, count: taken.length };
    yield { type: "messages", runId, messages: unit, checkpoint: checkpoint() };
    return unit;
  }
}

function toolCallsOf(message: AssistantMessage): ToolCall[] {
  return message.content.flatMap((p) => {
    if (p.type !== "tool_call") return [];
    const { type: _type, ...call } = p;
    return [call];
  });
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
