/**
 * One turn of a persisted conversation: load the session's live context, run the agent loop with a
 * layered, self-compacting context, and store every unit of messages (one transaction each), the run
 * record and its trace as they happen.
 */
import { randomUUID } from "node:crypto";
import type { FallbackSettings } from "../llm/fallback-chain.js";
import { stream as defaultStream } from "../llm/providers.js";
import type { ModelSpec, StreamFunction, StreamOptions, UserMessage } from "../llm/types.js";
import { todoStoreFor } from "../store/todo-store.js";
import type {
  FinishRunInput,
  RunStepInput,
  RunStepResult,
  SessionRef,
  SessionStore,
} from "../store/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import { type CompactionSettings, compact, defaultCompactionSettings } from "./compactor.js";
import { defaultTokenCounter, type TokenCounter, UsageCalibrator } from "./context/index.js";
import type { AgentEvent } from "./events.js";
import type { LayerProvider, LayerResult } from "./layered-context.js";
import { promptCacheKey } from "./prompt-cache-key.js";
import { type TurnState, turnContextBuilder } from "./session-turn-context.js";
import { type OpenedTurn, openTurn, textOf, titleFrom } from "./session-turn-open.js";

export type { LayerProvider } from "./layered-context.js";

import type { ApprovalDecision, Approver } from "./approvals.js";
import { type ContextBuilder, runAgent, type ToolEnvironment } from "./run-agent.js";
import type { ObserveRun } from "./run-observer.js";
import type { SteeringSource } from "./steering.js";
import type { OutputSpec } from "./structured-output.js";
import { TraceRecorder } from "./trace-recorder.js";

export interface SessionTurnOptions {
  store: SessionStore;
  ref: SessionRef;
  model: ModelSpec;
  input: UserMessage["content"];
  system?: string;
  tools?: ToolRegistry;
  toolEnvironment: Omit<ToolEnvironment, "todos" | "userId" | "sessionId">;
  maxIterations?: number;
  signal?: AbortSignal;
  stream?: StreamFunction;
  /** Cooldowns of the model chain, shared by the runs of the process (see `RunAgentOptions.fallback`). */
  fallback?: FallbackSettings;
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  compaction?: Partial<CompactionSettings>;
  /** See `RunAgentOptions.keepImagesTurns`. */
  keepImagesTurns?: number;
  layers?: LayerProvider;
  counter?: TokenCounter;
  /** Keeps estimate corrections across turns of one session. */
  calibrator?: UsageCalibrator;
  /** Values scrubbed from the trace (API keys). */
  secrets?: string[];
  runId?: string;
  /** See `RunAgentOptions.approve`; `wait` ends the turn `waiting`, its checkpoint stored. */
  approve?: Approver;
  askFirst?: readonly string[];
  steering?: SteeringSource;
  /** Hold the final answer to a JSON Schema (see `RunAgentOptions.output`). */
  output?: OutputSpec;
  /**
   * Store the turn context (recalled memories, named skills, todos) after the user message, so later
   * requests repeat it and the cached prefix grows (default true). False for a session several people
   * read (a group's): it is sent with this run's calls only, so one person's memories never reach
   * another's requests.
   */
  storeTurnContext?: boolean;
  /**
   * Continue the stored run `runId` from its checkpoint instead of starting a turn (`input` is then
   * not appended): after a person decided its pending approvals (`decisions`, by call id), or after
   * the process running it died.
   */
  resume?: { reason: "approval" | "restart"; decisions?: Record<string, ApprovalDecision> };
  /** Another reader of the run's events (OpenTelemetry export); `agentId` names the agent to it. */
  observe?: ObserveRun;
  agentId?: string;
  agentName?: string;
}

/** Runs one user turn in a stored session; yields the same events as `runAgent`. */
export async function* runSessionTurn(options: SessionTurnOptions): AsyncGenerator<AgentEvent, void> {
  const { store, ref, model } = options;
  const runId = options.runId ?? randomUUID();
  const signal = options.signal ?? new AbortController().signal;
  const stream = options.stream ?? defaultStream;
  const counter = options.counter ?? defaultTokenCounter;
  const calibrator = options.calibrator ?? new UsageCalibrator();
  const settings = { ...defaultCompactionSettings, ...options.compaction };

  const title = titleFrom(options.input);
  const query = textOf(options.input);
  // A fresh turn's first model call needs the context layers (persona, memory, skills), which need only
  // the person and the query: their reads start now, beside the turn's own writes, not after them.
  // The first context awaits them (and reports their failure).
  const layered: Promise<LayerResult> | undefined = options.resume
    ? undefined
    : options.layers?.({ userId: ref.userId, query, signal });
  layered?.catch(() => undefined);
  const opened = await openTurn(options, runId, title);
  const { resume } = opened;
  const state: TurnState = {
    live: opened.live,
    summary: opened.summary,
    todos: opened.todos,
    pendingTurnContext: undefined,
    askedMessage: undefined,
    lastEstimate: 0,
  };

  const trace = new TraceRecorder(store, ref, runId, options.secrets ?? []);
  const observer = options.observe?.({
    runId,
    agentId: options.agentId ?? "dimsum",
    ...(options.agentName ? { agentName: options.agentName } : {}),
    model,
    input: options.resume ? "" : options.input,
    conversationId: `${ref.userId}/${ref.sessionId}`,
  });
  const buildContext = turnContextBuilder(
    {
      store,
      ref,
      model,
      runId,
      query,
      resumed: options.resume !== undefined,
      layers: options.layers,
      layered,
      stream,
      counter,
      calibrator,
      settings,
      contextEvent,
    },
    state,
  );

  let finished = false;
  const events = streamTurn(options, { runId, signal, stream, buildContext, resume }, state);
  // Each step's writes (messages, trace events, then the checkpoint or the run's end) go to the store
  // as one unit before the step's event is passed on.
  const save = stepSaver(options, runId, state);
  // An event read ahead of its turn (the `done` after a final answer), passed on next.
  let ahead: IteratorResult<AgentEvent, void> | undefined;
  try {
    while (true) {
      const next = ahead ?? (await events.next());
      ahead = undefined;
      if (next.done) break;
      const event = next.value;
      trace.record(event);
      observer?.record(event);
      switch (event.type) {
        case "messages": {
          const final = event.messages.at(-1)?.role === "assistant";
          let done: Extract<AgentEvent, { type: "done" }> | undefined;
          if (final) {
            // A final answer is the run's last step: the `done` that follows it at once is written with
            // it, so the answer and the run's end are one write.
            ahead = await events.next();
            if (!ahead.done && ahead.value.type === "done") {
              done = ahead.value;
              trace.record(done);
              observer?.record(done);
            }
          }
          const step: RunStepInput = { messages: event.messages, events: trace.take() };
          if (done) step.finish = finishOf(done);
          // A final answer's checkpoint is never needed: finishing the run clears it.
          else if (event.checkpoint && !final) step.checkpoint = { value: event.checkpoint };
          // The next context (after a tool round or steering) reads the todos the step's tools left.
          if (!final) step.readTodos = true;
          const saved = await save(step);
          state.live.push(...saved.messages.map((m) => ({ id: m.id, message: m.message })));
          state.todos = saved.todos;
          if (done) {
            finished = true;
            yield event;
            ahead = undefined;
            yield done;
            continue;
          }
          break;
        }
        case "checkpoint":
          await store.saveCheckpoint(ref, runId, event.checkpoint);
          break;
        case "waiting":
          await save({ events: trace.take(), checkpoint: { value: event.checkpoint, waiting: true } });
          finished = true;
          break;
        case "usage":
          calibrator.observe(state.lastEstimate, event.usage.inputTokens);
          break;
        case "done":
          await save({ events: trace.take(), finish: finishOf(event) });
          finished = true;
          break;
        case "error":
          await save({
            events: trace.take(),
            finish: {
              status: event.code === "aborted" ? "cancelled" : "error",
              iterations: 0,
              error: event.message,
            },
          });
          finished = true;
          break;
      }
      yield event;
    }
  } finally {
    observer?.end();
    try {
      // As `for await` does when its loop ends early: the agent loop's own cleanup runs first.
      await events.return(undefined);
    } finally {
      if (!finished) {
        await save({
          events: trace.take(),
          finish: { status: "cancelled", iterations: 0, note: "the caller stopped reading the run" },
        });
      }
    }
  }
}

/**
 * Stream, approvals, tools, steering: the agent loop over the opened turn, its context built by
 * `buildContext`, resumed from `run.resume` when given.
 */
function streamTurn(
  options: SessionTurnOptions,
  run: {
    runId: string;
    signal: AbortSignal;
    stream: StreamFunction;
    buildContext: ContextBuilder;
    resume: OpenedTurn["resume"];
  },
  state: TurnState,
): AsyncGenerator<AgentEvent, void> {
  const { model, store, ref } = options;
  const { runId, signal, stream, buildContext, resume } = run;
  return runAgent({
    model,
    messages: state.live.map((m) => m.message),
    system: options.system,
    tools: options.tools,
    toolEnvironment: {
      ...options.toolEnvironment,
      todos: todoStoreFor(store, ref),
      userId: ref.userId,
      sessionId: ref.sessionId,
    },
    maxIterations: options.maxIterations,
    signal,
    runId,
    stream,
    ...(options.fallback ? { fallback: options.fallback } : {}),
    streamOptions: { ...options.streamOptions, cacheKey: promptCacheKey(ref) },
    buildContext,
    ...(options.keepImagesTurns !== undefined ? { keepImagesTurns: options.keepImagesTurns } : {}),
    ...(options.approve ? { approve: options.approve } : {}),
    ...(options.askFirst ? { askFirst: options.askFirst } : {}),
    ...(options.steering ? { steering: options.steering } : {}),
    ...(options.output ? { output: options.output } : {}),
    ...(resume ? { resume } : {}),
  });
}

/**
 * Checkpoint: each step's writes in one unit. The run's first write carries its turn context (the
 * model already saw it), before the step's own messages.
 */
function stepSaver(
  options: SessionTurnOptions,
  runId: string,
  state: TurnState,
): (step: RunStepInput) => Promise<RunStepResult> {
  const { store, ref } = options;
  const keepContext = options.storeTurnContext !== false;
  return (step) => {
    if (!keepContext) return saveRunStep(store, ref, runId, step);
    const context = state.pendingTurnContext;
    state.pendingTurnContext = undefined;
    const unit = context ? { ...step, messages: [context, ...(step.messages ?? [])] } : step;
    return saveRunStep(store, ref, runId, unit);
  };
}

/** How a run that ended with `done` is finished in the store. */
function finishOf(event: Extract<AgentEvent, { type: "done" }>): FinishRunInput {
  return {
    status: "done",
    iterations: event.iterations,
    usage: event.usage,
    ...(event.capReached ? { note: "iteration cap reached" } : {}),
  };
}

/** One step of a run: in one write where the store has `saveRunStep`, else call by call in its order. */
async function saveRunStep(
  store: SessionStore,
  ref: SessionRef,
  runId: string,
  step: RunStepInput,
): Promise<RunStepResult> {
  if (store.saveRunStep) return store.saveRunStep(ref, runId, step);
  const messages = step.messages?.length ? await store.appendMessages(ref, runId, step.messages) : [];
  if (step.events?.length) await store.appendRunEvents(ref, runId, step.events);
  if (step.checkpoint) {
    const { value, waiting } = step.checkpoint;
    await store.saveCheckpoint(ref, runId, value, waiting ? { waiting } : {});
  }
  const run = step.finish ? await store.finishRun(ref, runId, step.finish) : undefined;
  return { messages, ...(run ? { run } : {}) };
}

/** Forces compaction of a session's live context now (`/compact`). */
export async function compactSession(options: {
  store: SessionStore;
  ref: SessionRef;
  model: ModelSpec;
  stream?: StreamFunction;
  signal?: AbortSignal;
  counter?: TokenCounter;
}): Promise<AgentEvent[]> {
  const { store, ref, model } = options;
  const live = (await store.loadMessages(ref)).map((m) => ({ id: m.id, message: m.message }));
  const outcome = await compact({
    runId: "compact",
    model,
    stream: options.stream ?? defaultStream,
    counter: options.counter ?? defaultTokenCounter,
    settings: defaultCompactionSettings,
    live,
    summary: await store.getSummary(ref),
    frame: { messages: [] },
    signal: options.signal ?? new AbortController().signal,
    force: true,
  });
  if (outcome.compactedUpto !== undefined && outcome.summary !== undefined) {
    await store.compact(ref, { summary: outcome.summary, uptoMessageId: outcome.compactedUpto });
  }
  return outcome.events;
}

/** The trace/CLI event naming what the layers added. */
export function contextEvent(runId: string, result: LayerResult): AgentEvent {
  const event: AgentEvent = {
    type: "context",
    runId,
    skills: result.skills ?? [],
    memories: result.memories ?? [],
  };
  if (result.memoryMode) event.memoryMode = result.memoryMode;
  return event;
}
