import { getEventListeners } from "node:events";
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { ProtocolAdapter } from "../../src/llm/adapter.js";
import { AssistantMessageBuilder } from "../../src/llm/message-builder.js";
import { createStreamFunction, type StreamDeps } from "../../src/llm/stream.js";
import type { ModelEvent, ModelSpec, StreamOptions } from "../../src/llm/types.js";

/** A tiny protocol: every data line is text, `[DONE]` is ignored, the end of the body is `done`. */
const lineAdapter: ProtocolAdapter = {
  protocol: "openai",
  buildRequest: (model, context) => ({
    url: `${model.baseUrl}/chat`,
    headers: model.apiKey ? { authorization: `Bearer ${model.apiKey}` } : ({} as Record<string, string>),
    body: { model: model.id, messages: context.messages },
  }),
  createParser: () => {
    const message = new AssistantMessageBuilder();
    return {
      push(event) {
        if (event.data === "[DONE]") return [];
        message.text(event.data);
        return [{ type: "text_delta", text: event.data }];
      },
      finish: () => [{ type: "done", finishReason: "stop", message: message.build() }],
    };
  },
  errorMessage: (_status, body) => {
    try {
      return (JSON.parse(body) as { error: { message: string } }).error.message;
    } catch {
      return body;
    }
  },
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface ScriptServer {
  url: string;
  requests: { headers: IncomingHttpHeaders; body: string }[];
  connections: () => number;
  closedRequests: () => number;
  close: () => Promise<void>;
}

const servers: ScriptServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A real HTTP server that answers the n-th request with `handlers[n]` (or the last handler). */
async function startServer(...handlers: Handler[]): Promise<ScriptServer> {
  const requests: ScriptServer["requests"] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  let closedRequests = 0;
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    requests.push({ headers: req.headers, body });
    res.on("close", () => {
      closedRequests++;
    });
    const handler = handlers[Math.min(requests.length - 1, handlers.length - 1)];
    handler?.(req, res);
  });
  server.keepAliveTimeout = 30_000;
  server.on("connection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const handle: ScriptServer = {
    url: `http://127.0.0.1:${port}`,
    requests,
    connections: () => connections,
    closedRequests: () => closedRequests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  servers.push(handle);
  return handle;
}

const sse =
  (...data: string[]): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(data.map((d) => `data: ${d}\n\n`).join(""));
  };

const status =
  (code: number, message: string, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(code, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify({ error: { message } }));
  };

/** Sends headers and the given events, then never finishes. */
const stall =
  (...data: string[]): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const d of data) res.write(`data: ${d}\n\n`);
  };

/** Sends headers and the given events, then destroys the socket. */
const drop =
  (...data: string[]): Handler =>
  (_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    const payload = data.map((d) => `data: ${d}\n\n`).join("");
    if (payload === "") setImmediate(() => res.socket?.destroy());
    else res.write(payload, () => setImmediate(() => res.socket?.destroy()));
  };

function modelFor(url: string, extra: Partial<ModelSpec> = {}): ModelSpec {
  return {
    provider: "acme",
    id: "acme-1",
    protocol: "openai",
    baseUrl: url,
    apiKey: "sk-test",
    apiKeyEnv: "ACME_API_KEY",
    contextWindow: 8000,
    ...extra,
  };
}

/** Injected time: records each requested delay and returns immediately. */
function fastTime(): StreamDeps & { delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: async (ms) => {
      delays.push(ms);
    },
    random: () => 0.5,
  };
}

const context = { messages: [{ role: "user" as const, content: "hi" }] };

async function run(
  url: string,
  options: StreamOptions = {},
  deps: StreamDeps = fastTime(),
  model = modelFor(url),
) {
  const events: ModelEvent[] = [];
  for await (const event of createStreamFunction(lineAdapter, deps)(model, context, options))
    events.push(event);
  return events;
}

function lastError(events: ModelEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "error") throw new Error(`expected a final error event, got ${JSON.stringify(last)}`);
  return last.error;
}

const texts = (events: ModelEvent[]) => events.flatMap((e) => (e.type === "text_delta" ? [e.text] : []));

describe("createStreamFunction: success path", () => {
  it("posts the adapter's JSON once and streams its events, ending with done", async () => {
    const server = await startServer(sse("Hel", "lo", "[DONE]"));
    const events = await run(server.url);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "text_delta", "done"]);
    expect(texts(events).join("")).toBe("Hello");
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(JSON.parse(request?.body ?? "")).toEqual({ model: "acme-1", messages: context.messages });
    expect(request?.headers).toMatchObject({
      authorization: "Bearer sk-test",
      accept: "text/event-stream",
      "content-type": "application/json",
    });
  });

  it("reuses one keep-alive connection for consecutive calls", async () => {
    const server = await startServer(sse("a"));
    await run(server.url);
    await run(server.url);
    await run(server.url);
    expect(server.requests).toHaveLength(3);
    expect(server.connections()).toBe(1);
  });

  it("accepts \\r\\n\\r\\n event separators", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: one\r\n\r\ndata: two\r\n\r\n");
    });
    expect(texts(await run(server.url))).toEqual(["one", "two"]);
  });

  it("keeps UTF-8 characters whole when the body splits inside them", async () => {
    const bytes = Buffer.from("data: 点心 “dim sum” 🥟\n\n", "utf8");
    const cuts = [7, 8, 19, 27, bytes.length - 4];
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      let from = 0;
      const next = (i: number) => {
        const to = cuts[i] ?? bytes.length;
        res.write(bytes.subarray(from, to));
        from = to;
        if (to === bytes.length) res.end();
        else setTimeout(() => next(i + 1), 5);
      };
      next(0);
    });
    expect(texts(await run(server.url))).toEqual(["点心 “dim sum” 🥟"]);
  });

  it("removes its abort listener when the call ends", async () => {
    const server = await startServer(sse("x"));
    const controller = new AbortController();
    await run(server.url, { signal: controller.signal });
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("frees the connection when the consumer stops reading early", async () => {
    const server = await startServer(stall("first", "second"));
    const stream = createStreamFunction(lineAdapter, fastTime())(modelFor(server.url), context);
    for await (const event of stream) {
      expect(event).toEqual({ type: "text_delta", text: "first" });
      break;
    }
    await expect.poll(() => server.closedRequests()).toBe(1);
  });
});

describe("createStreamFunction: status codes", () => {
  it("retries a 429, honouring Retry-After, then succeeds", async () => {
    const server = await startServer(status(429, "slow down", { "retry-after": "2" }), sse("ok"));
    const time = fastTime();
    const events = await run(server.url, {}, time);
    expect(events[0]).toEqual({ type: "retry", attempt: 1, delayMs: 2000, reason: "rate limited (429)" });
    expect(time.delays).toEqual([2000]);
    expect(events.slice(1).map((e) => e.type)).toEqual(["text_delta", "done"]);
    expect(server.requests).toHaveLength(2);
  });

  it("honours retry-after-ms and caps server delays at maxDelayMs", async () => {
    const server = await startServer(
      status(503, "busy", { "retry-after-ms": "150" }),
      status(503, "busy", { "retry-after": "3600" }),
      sse("ok"),
    );
    const time = fastTime();
    await run(server.url, { retry: { maxDelayMs: 5000 } }, time);
    expect(time.delays).toEqual([150, 5000]);
  });

  it("gives up on repeated 500s after maxRetries with provider_unavailable", async () => {
    const server = await startServer(status(500, "kaput"));
    const time = fastTime();
    const events = await run(server.url, { retry: { maxRetries: 2, baseDelayMs: 100 } }, time);
    expect(events.filter((e) => e.type === "retry")).toEqual([
      { type: "retry", attempt: 1, delayMs: 50, reason: "HTTP 500" },
      { type: "retry", attempt: 2, delayMs: 100, reason: "HTTP 500" },
    ]);
    const error = lastError(events);
    expect(error.code).toBe("provider_unavailable");
    expect(error.message).toContain("3 attempts");
    expect(error.message).toContain("kaput");
    expect(server.requests).toHaveLength(3);
  });

  it("reports rate_limit when 429s outlast the retries", async () => {
    const server = await startServer(status(429, "quota exceeded"));
    const events = await run(server.url, { retry: { maxRetries: 1 } });
    const error = lastError(events);
    expect(error.code).toBe("rate_limit");
    expect(error.status).toBe(429);
    expect(error.message).toContain("quota exceeded");
    expect(server.requests).toHaveLength(2);
  });

  it("reports a 401 as auth at once, naming the env var", async () => {
    const server = await startServer(status(401, "Incorrect API key provided"));
    const events = await run(server.url);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error.code).toBe("auth");
    expect(error.message).toBe("acme rejected the API key (401): Incorrect API key provided");
    expect(error.hint).toBe("set ACME_API_KEY to a valid key");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a 403 as auth without retrying", async () => {
    const server = await startServer(status(403, "no access to this model"));
    const error = lastError(await run(server.url));
    expect(error.code).toBe("auth");
    expect(error.message).toContain("no access to this model");
    expect(server.requests).toHaveLength(1);
  });

  it("reports a 400 as bad_request with the API's message, without retrying", async () => {
    const server = await startServer(status(400, "messages: field required"));
    const events = await run(server.url);
    expect(events).toHaveLength(1);
    const error = lastError(events);
    expect(error.code).toBe("bad_request");
    expect(error.message).toContain("messages: field required");
    expect(server.requests).toHaveLength(1);
  });

  it("points a 404 at the model id and base URL", async () => {
    const server = await startServer(status(404, "model not found"));
    const error = lastError(await run(server.url));
    expect(error.code).toBe("bad_request");
    expect(error.hint).toContain('"acme-1"');
    expect(error.hint).toContain(server.url);
    expect(server.requests).toHaveLength(1);
  });

  it("fails fast with a config error when the API key is missing", async () => {
    const server = await startServer(sse("never"));
    const events = await run(server.url, {}, fastTime(), modelFor(server.url, { apiKey: undefined }));
    const error = lastError(events);
    expect(error.code).toBe("config");
    expect(error.message).toBe("no API key for acme: set ACME_API_KEY");
    expect(server.requests).toHaveLength(0);
  });
});

describe("createStreamFunction: network failures", () => {
  it("retries a refused connection, then names the URL", async () => {
    const server = await startServer(sse("x"));
    const url = server.url;
    await server.close();
    servers.length = 0;
    const events = await run(url, { retry: { maxRetries: 1 } });
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1, reason: "connection refused" });
    const error = lastError(events);
    expect(error.code).toBe("provider_unavailable");
    expect(error.message).toBe(
      `cannot reach ${url} (connection refused, 2 attempts) — is the server running / is ACME_BASE_URL right?`,
    );
  });

  it("retries a connection dropped before any event", async () => {
    const server = await startServer(drop(), sse("second try"));
    const events = await run(server.url);
    expect(events.map((e) => e.type)).toEqual(["retry", "text_delta", "done"]);
    expect(texts(events)).toEqual(["second try"]);
    expect(server.requests).toHaveLength(2);
  });

  it("does not retry a connection dropped after an event was yielded", async () => {
    const server = await startServer(drop("partial"), sse("must not be requested"));
    const events = await run(server.url);
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    const error = lastError(events);
    expect(error.code).toBe("provider_unavailable");
    expect(error.message).toContain("mid-response");
    expect(server.requests).toHaveLength(1);
  });

  it("retries when the response headers do not arrive in time", async () => {
    const server = await startServer(() => undefined, sse("late but fine"));
    const events = await run(server.url, { limits: { firstByteMs: 150 } });
    expect(events[0]).toMatchObject({
      type: "retry",
      attempt: 1,
      reason: "no data within 150 ms (first-byte limit)",
    });
    expect(texts(events)).toEqual(["late but fine"]);
  });

  it("ends with a timeout error when the body goes idle after output", async () => {
    const server = await startServer(stall("only this"));
    const events = await run(server.url, { limits: { idleMs: 150 } });
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    expect(lastError(events).code).toBe("timeout");
    expect(server.requests).toHaveLength(1);
  });

  it("does not count keep-alive `ping` events or comments as data", async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: before the stall\n\n");
      const timer = setInterval(() => res.write('event: ping\ndata: {"type": "ping"}\n\n: ping\n\n\n'), 20);
      res.on("close", () => clearInterval(timer));
    });
    const events = await run(server.url, { limits: { idleMs: 200 } });
    // (This test adapter turns every event into text, pings included; the clock ignores them all the same.)
    expect(texts(events)[0]).toBe("before the stall");
    expect(lastError(events).message).toContain("idle limit");
  });

  it("reports timeout after the retries when the server never answers", async () => {
    const server = await startServer(() => undefined);
    const events = await run(server.url, { limits: { firstByteMs: 100 }, retry: { maxRetries: 1 } });
    const error = lastError(events);
    expect(error.code).toBe("timeout");
    expect(error.message).toContain("2 attempts");
    expect(server.requests).toHaveLength(2);
  });
});

describe("createStreamFunction: abort", () => {
  it("stops mid-stream with one aborted error and nothing after it", async () => {
    const server = await startServer(stall("first"));
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    const stream = createStreamFunction(lineAdapter, fastTime())(modelFor(server.url), context, {
      signal: controller.signal,
    });
    for await (const event of stream) {
      events.push(event);
      if (event.type === "text_delta") controller.abort();
    }
    expect(events.map((e) => e.type)).toEqual(["text_delta", "error"]);
    expect(lastError(events).code).toBe("aborted");
    await expect.poll(() => server.closedRequests()).toBe(1);
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });

  it("cuts a backoff sleep short", async () => {
    const server = await startServer(status(503, "busy", { "retry-after": "600" }));
    const controller = new AbortController();
    const events: ModelEvent[] = [];
    // The real sleep: it would wait 30 s if abort did not end it.
    const stream = createStreamFunction(lineAdapter)(modelFor(server.url), context, {
      signal: controller.signal,
    });
    for await (const event of stream) {
      events.push(event);
      if (event.type === "retry") controller.abort();
    }
    expect(events.map((e) => e.type)).toEqual(["retry", "error"]);
    expect(lastError(events).code).toBe("aborted");
    expect(server.requests).toHaveLength(1);
  });

  it("makes no request when the signal is already aborted", async () => {
    const server = await startServer(sse("x"));
    const events = await run(server.url, { signal: AbortSignal.abort() });
    expect(lastError(events).code).toBe("aborted");
    expect(server.requests).toHaveLength(0);
  });
});
