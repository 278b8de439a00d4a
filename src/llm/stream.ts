/**
 * The transport every protocol adapter runs through: POST the adapter's request, read the SSE body,
 * let the adapter translate each event, and handle retries, timeouts and abort on the way.
 */
import type { IncomingMessage } from "node:http";
import { toDimsumError } from "../errors.js";
import { abortableSleep } from "../shared/abortable-sleep.js";
import type { ProtocolAdapter, SseEvent } from "./adapter.js";
import { type CallDeadlines, resolveCallLimits, startCallDeadlines } from "./call-limits.js";
import { readBodyText, sendPost } from "./http-post.js";
import { resolveRetryPolicy, retryDelayMs } from "./retry.js";
import { createSseDecoder } from "./sse.js";
import {
  type AttemptFailure,
  abortedError,
  limitFailure,
  limitMidStreamError,
  midStreamFailure,
  missingKeyError,
  modelUrl,
  networkFailure,
  retryStoppedError,
  statusFailure,
} from "./transport-errors.js";
import type { Context, ModelEvent, ModelSpec, StreamFunction, StreamOptions } from "./types.js";

/** Injectable time, so retry tests need not wait for real backoff. */
export interface StreamDeps {
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Returns a number in [0, 1), like Math.random; drives backoff jitter. */
  random?: () => number;
  /** Milliseconds clock for the call's deadlines, like Date.now. */
  now?: () => number;
}

interface PreparedRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
}

interface Settings {
  adapter: ProtocolAdapter;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  random: () => number;
  now: () => number;
}

/** Builds the provider function for one wire protocol. The function never throws: failures end the stream as one `error` event. */
export function createStreamFunction(adapter: ProtocolAdapter, deps: StreamDeps = {}): StreamFunction {
  const settings: Settings = {
    adapter,
    sleep: deps.sleep ?? abortableSleep,
    random: deps.random ?? Math.random,
    now: deps.now ?? Date.now,
  };
  return (model, context, options = {}) => streamModel(settings, model, context, options);
}

async function* streamModel(
  settings: Settings,
  model: ModelSpec,
  context: Context,
  options: StreamOptions,
): AsyncGenerator<ModelEvent> {
  const { signal } = options;
  try {
    if (model.apiKeyEnv && !model.apiKey) {
      yield { type: "error", error: missingKeyError(model) };
      return;
    }
    const prepared = prepareRequest(settings.adapter, model, context, options);
    const policy = resolveRetryPolicy(options.retry);
    const deadlines = startCallDeadlines(resolveCallLimits(model.limits, options.limits), settings.now);
    let resentStale = false;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) {
        yield { type: "error", error: abortedError() };
        return;
      }
      const failure = yield* attemptOnce(settings.adapter, model, prepared, signal, deadlines);
      if (failure === undefined) return;
      if (failure.staleSocket && !resentStale) {
        // A pooled socket the server had already closed: not the provider's fault, so no backoff and no count.
        resentStale = true;
        attempt--;
        continue;
      }
      if (!failure.retryable || attempt > policy.maxRetries) {
        yield { type: "error", error: failure.toError(attempt) };
        return;
      }
      const delayMs = retryDelayMs(attempt, policy, settings.random, failure.retryAfterMs);
      const blocked = deadlines.retryBlockedBy(delayMs);
      if (blocked !== undefined) {
        yield { type: "error", error: retryStoppedError(failure.toError(attempt), blocked) };
        return;
      }
      yield { type: "retry", attempt, delayMs, reason: failure.reason };
      await settings.sleep(delayMs, signal);
    }
  } catch (err) {
    // Config errors from prepareRequest, or a bug (e.g. in an adapter's parser): still one final event.
    yield { type: "error", error: toDimsumError(err, "internal") };
  }
}

function prepareRequest(
  adapter: ProtocolAdapter,
  model: ModelSpec,
  context: Context,
  options: StreamOptions,
): PreparedRequest {
  const spec = adapter.buildRequest(model, context, options);
  const url = modelUrl(model, spec.url);
  const body = typeof spec.body === "string" ? spec.body : JSON.stringify(spec.body);
  const headers: Record<string, string> = {
    accept: "text/event-stream",
    "content-type": "application/json",
    ...model.headers,
    ...spec.headers,
    "content-length": String(Buffer.byteLength(body)),
  };
  return { url, headers, body };
}

/**
 * One HTTP exchange. Yields the adapter's events and returns undefined on success, or returns the
 * failure to retry or report. A failure after output has been yielded comes back as non-retryable.
 */
async function* attemptOnce(
  adapter: ProtocolAdapter,
  model: ModelSpec,
  prepared: PreparedRequest,
  signal: AbortSignal | undefined,
  deadlines: CallDeadlines,
): AsyncGenerator<ModelEvent, AttemptFailure | undefined> {
  const post = sendPost(prepared.url, prepared.headers, prepared.body, { signal });
  const timers = deadlines.startAttempt(() => post.expire());
  /** A failure with no output yet: our own deadline, else what the socket said. */
  const failed = (err: unknown, reused: boolean): AttemptFailure =>
    timers.expired !== undefined && post.cause === "timeout"
      ? limitFailure(model, timers.expired)
      : networkFailure(model, err, post.cause, 0, reused);
  try {
    let res: IncomingMessage;
    try {
      res = await post.response;
    } catch (err) {
      return failed(err, post.reusedSocket);
    }
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      try {
        return statusFailure(adapter, model, status, res.headers, await readBodyText(res));
      } catch (err) {
        return failed(err, false);
      }
    }

    const parser = adapter.createParser(model);
    const pending: SseEvent[] = [];
    const sse = createSseDecoder((event) => {
      // Only real data keeps the call alive: comments never get here, and keep-alive events are skipped.
      if (isRealData(event)) timers.data();
      pending.push(event);
    });
    let yielded = false;
    try {
      for await (const chunk of res as AsyncIterable<Buffer>) {
        sse.feed(chunk);
        if (pending.length === 0) continue;
        for (const event of pending) {
          for (const out of parser.push(event)) {
            yielded = true;
            yield out;
          }
        }
        pending.length = 0;
      }
    } catch (err) {
      if (!yielded) return failed(err, false);
      const hit = post.cause === "timeout" ? timers.expired : undefined;
      const error = hit ? limitMidStreamError(model, hit) : midStreamFailure(model, err, post.cause, 0);
      return { retryable: false, reason: error.message, toError: () => error };
    }
    sse.end();
    for (const event of pending) yield* parser.push(event);
    yield* parser.finish();
    return undefined;
  } finally {
    timers.stop();
    post.release();
  }
}

/** An SSE event that carries data, other than a keep-alive `ping` event (Anthropic sends those). */
function isRealData(event: SseEvent): boolean {
  return event.data !== "" && event.event !== "ping";
}
