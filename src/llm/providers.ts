/**
 * Stream functions by wire protocol. Adapters load lazily so a command pays only for the protocol
 * it uses (import time dominates a one-shot CLI's cold start).
 */
import { toDimsumError } from "../errors.js";
import type { ProtocolAdapter } from "./adapter.js";
import { createStreamFunction } from "./stream.js";
import type { Context, ModelEvent, ModelSpec, StreamFunction, StreamOptions, WireProtocol } from "./types.js";

const loaders: Record<WireProtocol, () => Promise<ProtocolAdapter>> = {
  openai: async () => (await import("./openai/index.js")).openaiAdapter,
  anthropic: async () => (await import("./anthropic/index.js")).anthropicAdapter,
  gemini: async () => (await import("./gemini/index.js")).geminiAdapter,
};

const cache = new Map<WireProtocol, Promise<StreamFunction>>();

/** The stream function for a protocol, created on first use. */
export function streamFunctionFor(protocol: WireProtocol): Promise<StreamFunction> {
  let fn = cache.get(protocol);
  if (!fn) {
    fn = loaders[protocol]().then((adapter) => createStreamFunction(adapter));
    cache.set(protocol, fn);
  }
  return fn;
}

/** Streams one model call, dispatching on the model's protocol. Never throws. */
export async function* stream(
  model: ModelSpec,
  context: Context,
  options?: StreamOptions,
): AsyncIterable<ModelEvent> {
  let fn: StreamFunction;
  try {
    fn = await streamFunctionFor(model.protocol);
  } catch (err) {
    yield { type: "error", error: toDimsumError(err) };
    return;
  }
  yield* fn(model, context, options);
}
