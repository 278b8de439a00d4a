/**
 * The build-context phase of a session turn: each model call's context from the layers (persona,
 * memory, skills, read once), the turn context after the user message, the session summary and the
 * live messages, compacted when the estimate passes the threshold.
 */
import type { Message, ModelSpec, StreamFunction, UserMessage } from "../llm/types.js";
import type { SessionRef, SessionStore } from "../store/types.js";
import type { TodoItem } from "../tools/types.js";
import { type CompactionSettings, compact, type LiveMessage } from "./compactor.js";
import { estimateContextTokens, type TokenCounter, type UsageCalibrator } from "./context/index.js";
import type { AgentEvent } from "./events.js";
import {
  buildLayeredContext,
  type ContextLayers,
  type LayerProvider,
  type LayerResult,
  renderTurnLayers,
  splitLayers,
} from "./layered-context.js";
import type { ContextBuilder } from "./run-agent.js";
import { newToConversation, turnContextMessage } from "./turn-context.js";

/** What a session turn's phases share and change as the run goes on. */
export interface TurnState {
  live: LiveMessage[];
  summary: string | undefined;
  /** The todos read with the last write, for the next context; read again when there are none. */
  todos: TodoItem[] | undefined;
  /** The turn context until the run's first write stores it (right after the user message). */
  pendingTurnContext: UserMessage | undefined;
  /** The user message the turn context belongs to. */
  askedMessage: Message | undefined;
  /** The last context's token estimate, which the usage reported after it calibrates. */
  lastEstimate: number;
}

export interface TurnContextInput {
  store: SessionStore;
  ref: SessionRef;
  model: ModelSpec;
  runId: string;
  query: string;
  /** A resumed run's turn context was stored with its first step. */
  resumed: boolean;
  layers: LayerProvider | undefined;
  /** The layers' reads already started for the first context, if any. */
  layered: Promise<LayerResult> | undefined;
  stream: StreamFunction;
  counter: TokenCounter;
  calibrator: UsageCalibrator;
  settings: CompactionSettings;
  /** The trace/CLI event naming what the layers added. */
  contextEvent: (runId: string, result: LayerResult) => AgentEvent;
}

/** Build context: the run's context builder over `state`. */
export function turnContextBuilder(input: TurnContextInput, state: TurnState): ContextBuilder {
  const { store, ref, model, runId, query, stream, counter, calibrator, settings } = input;
  let layered = input.layered;
  let extra: Partial<ContextLayers> | undefined;
  return async ({ system, tools, toolsOffered, signal: runSignal, report }) => {
    if (!extra) {
      const pending = layered;
      layered = undefined;
      const result = input.layers
        ? await (pending ?? input.layers({ userId: ref.userId, query, signal: runSignal }))
        : { layers: {} };
      const { stable, turn } = splitLayers(result.layers);
      extra = stable;
      if (input.layers) report(input.contextEvent(runId, result));
      // A resumed run's turn context was stored with its first step.
      if (!input.resumed) {
        const current = state.todos ?? (await store.getTodos(ref));
        state.todos = undefined;
        const text = renderTurnLayers(newToConversation({ ...turn, todos: current }, state.live));
        if (text) {
          state.pendingTurnContext = turnContextMessage(text);
          state.askedMessage = state.live.at(-1)?.message;
        }
      }
    }
    const layers: ContextLayers = { system, ...extra, summary: state.summary };
    const schemas = toolsOffered ? tools.schemas() : undefined;
    const frame = buildLayeredContext(layers, [], schemas);
    let messages = state.live.map((m) => m.message);
    if (state.pendingTurnContext) {
      // Right after the user message it belongs to: later steps of the run come after it.
      const at = messages.indexOf(state.askedMessage ?? state.pendingTurnContext);
      messages.splice(at < 0 ? messages.length : at + 1, 0, state.pendingTurnContext);
    }
    const estimate = calibrator.calibrate(estimateContextTokens({ ...frame, messages }, counter));
    if (estimate > settings.threshold * model.contextWindow) {
      const outcome = await compact({
        runId,
        model,
        stream,
        counter,
        settings,
        live: state.live,
        summary: state.summary,
        frame,
        signal: runSignal,
      });
      if (outcome.compactedUpto !== undefined && outcome.summary !== undefined) {
        await store.compact(ref, { summary: outcome.summary, uptoMessageId: outcome.compactedUpto });
      }
      state.live = outcome.live;
      state.summary = outcome.summary;
      messages = outcome.messages;
      for (const event of outcome.events) report(event);
    }
    const context = buildLayeredContext({ ...layers, summary: state.summary }, messages, schemas);
    state.lastEstimate = estimateContextTokens(context, counter);
    return context;
  };
}
