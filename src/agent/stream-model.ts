/** Phase: stream one model call, forwarding deltas as agent events and collecting the outcome. */
import { DimsumError } from "../errors.js";
import type {
  AssistantMessage,
  Context,
  FinishReason,
  ModelSpec,
  StreamFunction,
  StreamOptions,
  ToolCall,
  Usage,
} from "../llm/types.js";
import type { AgentEvent } from "./events.js";

export type ModelTurn =
  | {
      ok: true;
      message: AssistantMessage;
      toolCalls: ToolCall[];
      finishReason: FinishReason;
      usage?: Usage;
      /** `provider:id` of the model that answered (the chain may have moved). */
      model: string;
    }
  | { ok: false; error: DimsumError };

/** Runs the model and yields text/reasoning/retry events; returns the assistant turn or the error. */
export async function* streamModel(
  runId: string,
  stream: StreamFunction,
  model: ModelSpec,
  context: Context,
  options: StreamOptions,
): AsyncGenerator<AgentEvent, ModelTurn> {
  const toolCalls: ToolCall[] = [];
  let answering = `${model.provider}:${model.id}`;
  for await (const event of stream(model, context, options)) {
    switch (event.type) {
      case "text_delta":
        yield { type: "text_delta", runId, text: event.text };
        break;
      case "reasoning_delta":
        yield { type: "reasoning_delta", runId, text: event.text };
        break;
      case "retry":
        yield { type: "retry", runId, attempt: event.attempt, delayMs: event.delayMs, reason: event.reason };
        break;
      case "model_fallback": {
        answering = event.to;
        const { type: _type, ...move } = event;
        yield { type: "model_fallback", runId, ...move };
        break;
      }
      case "tool_call":
        toolCalls.push(event.call);
        break;
      case "usage":
        break;
      case "error":
        return { ok: false, error: event.error };
      case "done": {
        const turn: ModelTurn = {
          ok: true,
          message: event.message,
          toolCalls: toolCalls.length > 0 ? toolCalls : collectCalls(event.message),
          finishReason: event.finishReason,
          model: answering,
        };
        if (event.usage) turn.usage = event.usage;
        return turn;
      }
    }
  }
  return { ok: false, error: new DimsumError("internal", "the provider stream ended without a done event") };
}

function collectCalls(message: AssistantMessage): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const part of message.content) {
    if (part.type === "tool_call") {
      const { type: _type, ...call } = part;
      calls.push(call);
    }
  }
  return calls;
}
