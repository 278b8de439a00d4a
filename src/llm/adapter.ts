/**
 * What a wire protocol adapter provides. Adapters only translate: the canonical context into an HTTP
 * request, and the provider's SSE events back into ModelEvents. Transport, retries, timeouts and abort
 * live in `stream.ts`, shared by all protocols.
 */
import type { Context, ModelEvent, ModelSpec, StreamOptions, WireProtocol } from "./types.js";

export interface HttpRequestSpec {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** One server-sent event as the SSE parser delivers it. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Stateful translator for one response stream. */
export interface StreamParser {
  /** Translates one SSE event; returns the events it produced (never `done`). */
  push(event: SseEvent): ModelEvent[];
  /** Called once when the stream ends; returns the final events, ending with `done` or `error`. */
  finish(): ModelEvent[];
}

export interface ProtocolAdapter {
  readonly protocol: WireProtocol;
  /** Builds the streaming request for one model call. */
  buildRequest(model: ModelSpec, context: Context, options: StreamOptions): HttpRequestSpec;
  createParser(model: ModelSpec): StreamParser;
  /** Pulls a human-readable message out of an error response body (JSON or text). */
  errorMessage(status: number, bodyText: string): string;
}
