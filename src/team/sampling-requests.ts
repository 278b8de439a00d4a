/**
 * MCP sampling in team runs: a server's request to use the agent's model is shown to the person the
 * run acts for (the conversation, the system prompt, the token limit, the model); approved, the
 * agent's own model answers it; declined, timed out or stopped, it is refused with the reason.
 */
import type { ModelSpec, StreamFunction } from "../llm/types.js";
import { sampleWithModel, textOf } from "../mcp/sampling.js";
import type { SamplePerson, SamplingRequest } from "../tools/types.js";
import type { ElicitationScope, Elicitations } from "./elicitations.js";
import type { SamplingView } from "./types.js";

export interface PersonSamplerOptions {
  broker: Elicitations;
  scope: ElicitationScope;
  model: ModelSpec;
  stream: StreamFunction;
  /** The run's own signal: stopping the run withdraws the question and stops the completion. */
  runSignal: AbortSignal;
}

/** Asks the person, then (approved) runs the request on the agent's model. */
export function personSampler(options: PersonSamplerOptions): SamplePerson {
  const { broker, scope, model, stream, runSignal } = options;
  return async (server, request, signal) => {
    const both = AbortSignal.any([signal, runSignal]);
    const answer = await broker.askSampling(scope, server, samplingView(request, model), both);
    if (answer.action !== "accept") {
      return { approved: false, reason: answer.reason ?? `the person chose ${answer.action}` };
    }
    return { approved: true, result: await sampleWithModel(model, stream, request, both) };
  };
}

/** What the approval card shows of a request. */
export function samplingView(request: SamplingRequest, model: ModelSpec): SamplingView {
  const view: SamplingView = {
    messages: request.messages.map((m) => ({
      role: m.role === "assistant" ? "assistant" : "user",
      text: textOf(m.content),
    })),
    maxTokens: request.maxTokens,
    model: model.id,
  };
  if (typeof request.systemPrompt === "string" && request.systemPrompt !== "")
    view.systemPrompt = request.systemPrompt;
  return view;
}
