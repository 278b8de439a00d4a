/**
 * One turn of a persisted conversation: load the session's live context, run the agent loop with a
 * layered, self-compacting context, and store every unit of messages (one transaction each), the run
 * record and its trace as they happen.
 */
import { randomUUID } from "node:crypto";
import { stream as defaultStream } from "../llm/providers.js";
import type { Message, ModelSpec, StreamFunction, StreamOptions, UserMessage } from "../llm/types.js";
import { todoStoreFor } from "../store/todo-store.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { ToolRegistry } from "../tools/registry.js";
import {
  type CompactionSettings,
  compact,
  defaultCompactionSettings,
  type LiveMessage,
} from "./compactor.js";
import {
  defaultTokenCounter,
  estimateContextTokens,
  type TokenCounter,
  UsageCalibrator,
} from "./context/index.js";
import type { AgentEvent } from "./events.js";
import {
  buildLayeredContext,
  type ContextLayers,
  type LayerProvider,
  type LayerResult,
} from "./layered-context.js";

export type { LayerProvider } from "./layered-context.js";

import { type ContextBuilder, runAgent, type ToolEnvironment } from "./run-agent.js";
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
  streamOptions?: Omit<StreamOptions, "signal" | "toolChoice">;
  compaction?: Partial<CompactionSettings>;
  layers?: LayerProvider;
  counter?: TokenCounter;
  /** Keeps estimate corrections across turns of one session. */
  calibrator?: UsageCalibrator;
  /** Values scrubbed from the trace (API keys). */
  secrets?: string[];
  runId?: string;
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

  const session = await store.openSession(ref, { title: titleFrom(options.input) });
  let live: LiveMessage[] = (await store.loadMessages(ref)).map((m) => ({ id: m.id, message: m.message }));
  let summary = session.summary;
  const userMessage: Message = { role: "user", content: options.input };
  const [storedUser] = await store.appendMessages(ref, runId, [userMessage]);
  live.push({ id: storedUser?.id, message: userMessage });
  await store.startRun(ref, { runId, model: `${model.provider}:${model.id}`, prompt: textOf(options.input) });

  const query = textOf(options.input);
  const trace = new TraceRecorder(store, ref, runId, options.secrets ?? []);
  let lastEstimate = 0;
  let extra: Partial<ContextLayers> | undefined;

  const buildContext: ContextBuilder = async ({ system, tools, toolsOffered, signal: runSignal, report }) => {
    if (!extra) {
      const result = options.layers
        ? await options.layers({ userId: ref.userId, query, signal: runSignal })
        : { layers: {} };
      extra = result.layers;
      if (options.layers) report(contextEvent(runId, result));
    }
    const layers: ContextLayers = { system, ...extra, summary, todos: await store.getTodos(ref) };
    const schemas = toolsOffered ? tools.schemas() : undefined;
    const frame = buildLayeredContext(layers, [], schemas);
    let messages = live.map((m) => m.message);
    const estimate = calibrator.calibrate(estimateContextTokens({ ...frame, messages }, counter));
    if (estimate > settings.threshold * model.contextWindow) {
      const outcome = await compact({
        runId,
        model,
        stream,
        counter,
        settings,
        live,
        summary,
        frame,
        signal: runSignal,
      });
      if (outcome.compactedUpto !== undefined && outcome.summary !== undefined) {
        await store.compact(ref, { summary: outcome.summary, uptoMessageId: outcome.compactedUpto });
      }
      live = outcome.live;
      summary = outcome.summary;
      messages = outcome.messages;
      for (const event of outcome.events) report(event);
    }
    const context = buildLayeredContext({ ...layers, summary }, messages, schemas);
    lastEstimate = estimateContextTokens(context, counter);
    return context;
  };

  let finished = false;
  try {
    for await (const event of runAgent({
      model,
      messages: live.map((m) => m.message),
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
      streamOptions: options.streamOptions,
      buildContext,
    })) {
      trace.record(event);
      switch (event.type) {
        case "messages": {
          const saved = await store.appendMessages(ref, runId, event.messages);
          live.push(...saved.map((m) => ({ id: m.id, message: m.message })));
          await trace.flush();
          break;
        }
        case "usage":
          calibrator.observe(lastEstimate, event.usage.inputTokens);
          break;
        case "done":
          await trace.flush();
          await store.finishRun(ref, runId, {
            status: "done",
            iterations: event.iterations,
            usage: event.usage,
            ...(event.capReached ? { note: "iteration cap reached" } : {}),
          });
          finished = true;
          break;
        case "error":
          await trace.flush();
          await store.finishRun(ref, runId, {
            status: event.code === "aborted" ? "cancelled" : "error",
            iterations: 0,
            error: event.message,
          });
          finished = true;
          break;
      }
      yield event;
    }
  } finally {
    if (!finished) {
      await trace.flush();
      await store.finishRun(ref, runId, {
        status: "cancelled",
        iterations: 0,
        note: "the caller stopped reading the run",
      });
    }
  }
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

function textOf(content: UserMessage["content"]): string {
  return typeof content === "string"
    ? content
    : content.map((p) => (p.type === "text" ? p.text : "")).join(" ");
}

function titleFrom(content: UserMessage["content"]): string {
  const text = textOf(content).replace(/\s+/g, " ").trim();
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}
