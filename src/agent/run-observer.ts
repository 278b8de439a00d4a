/**
 * A reader of one run's agent events beside the trace recorder (e.g. OpenTelemetry export). Entry
 * points hand an `ObserveRun` down; the session runner opens one observer per run and shows it every
 * event, then ends it however the run ended.
 */
import type { ModelSpec, UserMessage } from "../llm/types.js";
import type { AgentEvent } from "./events.js";

/** What an observer knows of a run when it starts. */
export interface ObservedRun {
  runId: string;
  /** The agent's id (`dimsum run`: `dimsum`). */
  agentId: string;
  /** The agent's display name, when it has one. */
  agentName?: string;
  model: ModelSpec;
  /** The person's input that started the turn ("" for a resumed run). */
  input: UserMessage["content"];
  /** The session the run belongs to (gen_ai.conversation.id). */
  conversationId: string;
}

export interface RunObserver {
  record(event: AgentEvent): void;
  /** The run is over (its last event was recorded, or its reader stopped). Called once. */
  end(): void;
}

export type ObserveRun = (run: ObservedRun) => RunObserver;

/**
 * Passes a run's events on while an observer reads them (runs without a session runner); the
 * observer opens at the run's first event and ends when the stream does.
 */
export async function* observeEvents(
  events: AsyncIterable<AgentEvent>,
  observe: ObserveRun | undefined,
  run: Omit<ObservedRun, "runId">,
): AsyncGenerator<AgentEvent, void> {
  if (!observe) {
    yield* events;
    return;
  }
  let observer: RunObserver | undefined;
  try {
    for await (const event of events) {
      observer ??= observe({ ...run, runId: event.runId });
      observer.record(event);
      yield event;
    }
  } finally {
    observer?.end();
  }
}
