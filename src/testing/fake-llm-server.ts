/**
 * A scripted fake LLM: real HTTP on 127.0.0.1 speaking the OpenAI, Anthropic and Gemini streaming
 * protocols at once. Tests and benches queue turns, run real clients against it, then read the log.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { anthropicEncoder } from "./fake-llm-anthropic.js";
import { defaultErrorMessage, estimateUsage, makeSplitter } from "./fake-llm-encoders.js";
import { geminiEncoder } from "./fake-llm-gemini.js";
import { openaiEncoder } from "./fake-llm-openai.js";
import type {
  FakeErrorTurn,
  FakeLlmServer,
  FakeLlmServerOptions,
  FakeReply,
  FakeStall,
  FakeTurn,
  ProtocolEncoder,
  RecordedRequest,
  ReplyContext,
} from "./fake-llm-types.js";
import { FakePromptCache } from "./fake-prompt-cache.js";

export type {
  FakeErrorTurn,
  FakeLlmServer,
  FakeLlmServerOptions,
  FakeReply,
  FakeStall,
  FakeToolCall,
  FakeTurn,
  FakeTurnFn,
  RecordedRequest,
} from "./fake-llm-types.js";

import { listenOnLoopback } from "./listen-on-loopback.js";

const ENCODERS: Record<RecordedRequest["protocol"], ProtocolEncoder | undefined> = {
  openai: openaiEncoder,
  anthropic: anthropicEncoder,
  gemini: geminiEncoder,
  unknown: undefined,
};

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

const GEMINI_PATH = /\/models\/([^/]+):(streamGenerateContent|generateContent)$/;

/** Works out protocol, model and streaming from the route and body, as the real APIs would. */
function describeRequest(
  method: string,
  path: string,
  body: unknown,
): Omit<RecordedRequest, "headers" | "body"> {
  const pathname = path.split("?")[0] ?? path;
  const fields = (typeof body === "object" && body !== null ? body : {}) as {
    model?: unknown;
    stream?: unknown;
  };
  const model = typeof fields.model === "string" ? fields.model : undefined;
  const base = { method, path, model, stream: fields.stream === true };
  if (method !== "POST") return { ...base, protocol: "unknown" };
  if (pathname.endsWith("/chat/completions")) return { ...base, protocol: "openai" };
  if (pathname.endsWith("/v1/messages")) return { ...base, protocol: "anthropic" };
  const gemini = GEMINI_PATH.exec(pathname);
  if (gemini) {
    const id = decodeURIComponent(gemini[1] ?? "");
    return { ...base, protocol: "gemini", model: id, stream: gemini[2] === "streamGenerateContent" };
  }
  return { ...base, protocol: "unknown" };
}

async function readBody(req: IncomingMessage): Promise<{ bytes: number; body: unknown }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return { bytes: 0, body: undefined };
  try {
    return { bytes: Buffer.byteLength(text), body: JSON.parse(text) as unknown };
  } catch {
    return { bytes: Buffer.byteLength(text), body: text };
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

function write(res: ServerResponse, data: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) resolve();
    else res.write(data, () => resolve());
  });
}

/** Starts the server on 127.0.0.1 with a free port. */
export async function startFakeLlmServer(options: FakeLlmServerOptions = {}): Promise<FakeLlmServer> {
  const queue: FakeTurn[] = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  const split = makeSplitter(options.chunkSize);
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const defaultTurn: FakeTurn = options.defaultTurn ?? { text: "ok" };
  const timers = new Set<NodeJS.Timeout>();
  let seq = 0;
  const promptCache = options.promptCache ? new FakePromptCache() : undefined;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        resolve();
      }, ms);
      timer.unref();
      timers.add(timer);
    });

  const nextTurn = (): FakeTurn | undefined => {
    const turn = queue.shift();
    if (turn !== undefined) return turn;
    return options.strict ? undefined : defaultTurn;
  };

  async function sendStream(
    res: ServerResponse,
    frames: string[],
    dropAfter: number | undefined,
  ): Promise<void> {
    const limit = dropAfter === undefined ? frames.length : Math.max(0, Math.min(dropAfter, frames.length));
    res.writeHead(200, SSE_HEADERS);
    if (chunkDelayMs <= 0 && dropAfter === undefined) {
      res.end(frames.join(""));
      return;
    }
    res.flushHeaders();
    if (chunkDelayMs <= 0) {
      await write(res, frames.slice(0, limit).join(""));
    } else {
      for (let i = 0; i < limit && !res.destroyed; i++) {
        if (i > 0) await sleep(chunkDelayMs);
        await write(res, frames[i] ?? "");
      }
    }
    if (dropAfter === undefined) {
      if (!res.destroyed) res.end();
      return;
    }
    // Let the written bytes leave before cutting the connection mid-stream.
    setImmediate(() => res.socket?.destroy());
  }

  /** Sends the first events, then keeps the connection alive with pings, trickles or silence. */
  async function sendStalled(res: ServerResponse, frames: string[], stall: FakeStall): Promise<void> {
    const sent = frames.slice(0, Math.max(0, Math.min(stall.afterChunks, frames.length)));
    res.writeHead(200, SSE_HEADERS);
    res.flushHeaders();
    await write(res, sent.join(""));
    const every = stall.everyMs ?? 20;
    const again =
      stall.mode === "ping" ? ": ping\n\n\n" : stall.mode === "trickle" ? (sent.at(-1) ?? "") : "";
    while (!res.destroyed) {
      await sleep(every);
      if (again !== "") await write(res, again);
    }
  }

  async function reply(res: ServerResponse, recorded: RecordedRequest, turn: FakeReply, bytes: number) {
    const encoder = ENCODERS[recorded.protocol];
    if (!encoder) return;
    const ctx = {
      reply: turn,
      model: recorded.model ?? "fake-model",
      seq: ++seq,
      usage: cacheUsage(turn, recorded, bytes),
      split,
    };
    if (recorded.stream && turn.stall !== undefined)
      await sendStalled(res, encoder.stream(ctx, recorded), turn.stall);
    else if (recorded.stream) await sendStream(res, encoder.stream(ctx, recorded), turn.dropAfterChunks);
    else if (turn.dropAfterChunks !== undefined) res.socket?.destroy();
    else sendJson(res, 200, encoder.json(ctx));
  }

  function cacheUsage(turn: FakeReply, recorded: RecordedRequest, bytes: number): ReplyContext["usage"] {
    const usage: ReplyContext["usage"] = estimateUsage(turn, bytes);
    if (!promptCache || recorded.protocol === "unknown") return usage;
    const cache = promptCache.observe(recorded.protocol, recorded.body);
    return { ...usage, input: cache.input, cached: cache.cached, cacheWrite: cache.written };
  }

  function replyError(res: ServerResponse, recorded: RecordedRequest, turn: FakeErrorTurn): void {
    const { status, body, headers } = turn.error;
    const encoder = ENCODERS[recorded.protocol] ?? openaiEncoder;
    sendJson(res, status, body ?? encoder.errorBody(status, defaultErrorMessage(status)), headers);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    const path = req.url ?? "/";
    const { bytes, body } = await readBody(req);
    const recorded: RecordedRequest = { ...describeRequest(method, path, body), headers: req.headers, body };
    requests.push(recorded);
    if (method === "GET" && options.models && /\/models(\?.*)?$/.test(path)) {
      const gemini = /\/v1(alpha|beta)\/models/.test(path);
      const models = options.models;
      sendJson(
        res,
        200,
        gemini
          ? {
              models: models.map((id) => ({
                name: `models/${id}`,
                supportedGenerationMethods: ["generateContent"],
              })),
            }
          : { object: "list", data: models.map((id) => ({ id, object: "model" })) },
      );
      return;
    }
    const encoder = ENCODERS[recorded.protocol];
    if (!encoder) {
      sendJson(res, 404, { error: { message: `fake LLM server: no route for ${method} ${path}` } });
      return;
    }
    let turn = nextTurn();
    if (turn === undefined) {
      const message = "fake LLM server: no turn queued for this request (strict mode)";
      sendJson(res, 500, encoder.errorBody(500, message));
      return;
    }
    while (typeof turn === "function") turn = await turn(recorded);
    if (turn.delayMs !== undefined && turn.delayMs > 0) await sleep(turn.delayMs);
    if (res.destroyed) return;
    if (turn.error !== undefined) replyError(res, recorded, turn);
    else await reply(res, recorded, turn, bytes);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const message = `fake LLM server: ${err instanceof Error ? err.message : String(err)}`;
      if (!res.headersSent) sendJson(res, 500, { error: { message } });
      else res.destroy();
    });
  });
  const port = await listenOnLoopback(server);

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    get pending() {
      return queue.length;
    },
    enqueue(...turns) {
      queue.push(...turns);
    },
    reset() {
      queue.length = 0;
      requests.length = 0;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
