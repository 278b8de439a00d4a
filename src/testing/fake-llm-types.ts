/** The script language of the fake LLM server: turns it replays and the requests it records. */
import type { IncomingHttpHeaders } from "node:http";
import type { FinishReason, WireProtocol } from "../llm/types.js";

export interface FakeToolCall {
  name: string;
  /**
   * An object is sent as JSON; a string is sent as is, so it may be malformed on purpose. Gemini
   * carries args as an object, so there a string is parsed, or sent raw if it is not JSON.
   */
  args: Record<string, unknown> | string;
  /** Defaults to a minted id (Gemini sends none unless one is given here). */
  id?: string;
}

/** Shared by every turn: wait this long before the first byte of the response. */
export interface TurnTiming {
  delayMs?: number;
}

/** A model reply, streamed in the protocol's real chunk shapes. */
export interface FakeReply extends TurnTiming {
  error?: never;
  text?: string;
  /** DeepSeek `reasoning_content` (openai), a signed thinking block (anthropic), `thought: true` parts (gemini). */
  reasoning?: string;
  toolCalls?: FakeToolCall[];
  /** Token counts to report; estimated from the sizes of request and reply when absent. */
  usage?: { input: number; output: number };
  /** Canonical reason, mapped to each protocol's own value; defaults to `tool_calls` or `stop`. */
  finishReason?: FinishReason;
  /** Send the headers and this many SSE events, then destroy the socket. */
  dropAfterChunks?: number;
  /** Send this many SSE events, then keep the connection open and never finish (see FakeStall). */
  stall?: FakeStall;
}

/**
 * A stream that stops making progress: after `afterChunks` events, every `everyMs` (default 20) it
 * sends nothing (`silent`), a `: ping` comment and a blank keep-alive line (`ping`), or the last event
 * again (`trickle`: real data that never ends). It goes on until the client hangs up.
 */
export interface FakeStall {
  afterChunks: number;
  mode: "silent" | "ping" | "trickle";
  everyMs?: number;
}

/** An HTTP error response. Without `body`, a protocol-shaped error JSON is sent. */
export interface FakeErrorTurn extends TurnTiming {
  error: { status: number; body?: unknown; headers?: Record<string, string> };
}

/** A turn computed from the request it answers (e.g. to echo the last tool result). */
export type FakeTurnFn = (request: RecordedRequest) => FakeTurn | Promise<FakeTurn>;

export type FakeTurn = FakeReply | FakeErrorTurn | FakeTurnFn;

export interface RecordedRequest {
  method: string;
  /** Path with query string, e.g. `/v1beta/models/g:streamGenerateContent?alt=sse`. */
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; the raw text if it was not JSON; undefined if empty. */
  body: unknown;
  protocol: WireProtocol | "unknown";
  /** Model id from the body (openai, anthropic) or the path (gemini). */
  model: string | undefined;
  stream: boolean;
}

export interface FakeLlmServerOptions {
  /** Answer when the queue is empty (default `{ text: "ok" }`); ignored when `strict`. */
  defaultTurn?: FakeTurn;
  /** Answer 500 when the queue is empty instead of the default turn. */
  strict?: boolean;
  /** Characters per text/argument piece; default cycles through 3–8 to exercise assembly. */
  chunkSize?: number;
  /** Pause between SSE events; 0 (the default) writes the whole stream at once. */
  chunkDelayMs?: number;
  /** Turns queued from the start. */
  turns?: FakeTurn[];
  /**
   * Model ids `GET …/models` lists (OpenAI and Anthropic shape `{data: [{id}]}`, Gemini's
   * `/v1beta/models` as `{models: [{name}]}`); without it that path answers 404 like any unknown one.
   */
  models?: string[];
  /**
   * Report prompt caching by each provider's rule (see fake-prompt-cache.ts): input tokens estimated
   * from the request, and the cached (and, for Anthropic, written) part of them.
   */
  promptCache?: boolean;
}

export interface FakeLlmServer {
  /** e.g. `http://127.0.0.1:PORT`; base URLs: openai `${url}/v1`, anthropic and gemini `${url}`. */
  readonly url: string;
  readonly port: number;
  /** Every request received, in order. Cleared in place by `reset()`. */
  readonly requests: RecordedRequest[];
  /** Turns still queued. */
  readonly pending: number;
  enqueue(...turns: FakeTurn[]): void;
  /** Empties the queue and the request log. */
  reset(): void;
  close(): Promise<void>;
}

/** What an encoder needs to render one reply. */
export interface ReplyContext {
  reply: FakeReply;
  model: string;
  /** Response number on this server, for minting ids. */
  seq: number;
  /** `input` counts every input token; `cached` and `cacheWrite` are parts of it. */
  usage: { input: number; output: number; cached?: number; cacheWrite?: number };
  split: (text: string) => string[];
}

/** Renders replies and errors in one wire protocol's shapes. */
export interface ProtocolEncoder {
  /** Complete SSE frames (each ends with its blank line). */
  stream(ctx: ReplyContext, request: RecordedRequest): string[];
  /** The non-streaming response body. */
  json(ctx: ReplyContext): unknown;
  errorBody(status: number, message: string): unknown;
}
