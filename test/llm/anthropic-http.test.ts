/** End to end over real HTTP: the built request reaches a local server and its SSE reply parses. */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProtocolAdapter } from "../../src/llm/adapter.js";
import { anthropicAdapter } from "../../src/llm/anthropic/index.js";
import type { Context, ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { sseBodyFor, summarise } from "../support/fixtures.js";

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

let server: Server;
let baseUrl: string;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: JSON.parse(text),
      });
      res.writeHead(200, { "content-type": "text/event-stream" });
      // Split the reply mid-event so the SSE parser has to reassemble it.
      const body = sseBodyFor("anthropic--anthropic-tool-no-args.chunks.txt");
      const cut = Math.floor(body.length / 3);
      res.write(body.slice(0, cut));
      setImmediate(() => res.end(body.slice(cut)));
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await once(server, "close");
});

/** A minimal stand-in for the shared transport: fetch, SSE-parse, feed the adapter's parser. */
async function call(adapter: ProtocolAdapter, model: ModelSpec, context: Context): Promise<ModelEvent[]> {
  const request = adapter.buildRequest(model, context, {});
  const response = await fetch(request.url, {
    method: "POST",
    headers: request.headers,
    body: JSON.stringify(request.body),
  });
  const parser = adapter.createParser(model);
  const out: ModelEvent[] = [];
  const sse = createParser({ onEvent: (e) => out.push(...parser.push({ event: e.event, data: e.data })) });
  const decoder = new TextDecoder();
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
    sse.feed(decoder.decode(chunk, { stream: true }));
  out.push(...parser.finish());
  return out;
}

describe("Anthropic over HTTP", () => {
  it("sends the request to /v1/messages and parses the streamed reply", async () => {
    const model: ModelSpec = {
      provider: "anthropic",
      id: "claude-sonnet-4-5",
      protocol: "anthropic",
      baseUrl,
      apiKey: "test-key",
      contextWindow: 200000,
      quirks: { promptCache: false },
    };
    const events = await call(anthropicAdapter, model, {
      system: "sys",
      messages: [{ role: "user", content: "hi" }],
    });
    const r = summarise(events);
    expect(r.text).toBe("I'll update the issue list for you.");
    expect(r.toolCalls).toEqual([
      { id: "toolu_01QE1WLsSVp5hy5Q3GmGTmjP", name: "updateIssueList", arguments: "{}" },
    ]);
    expect(r.done?.finishReason).toBe("tool_calls");

    const request = received.at(-1);
    expect(request?.method).toBe("POST");
    expect(request?.url).toBe("/v1/messages");
    expect(request?.headers["x-api-key"]).toBe("test-key");
    expect(request?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request?.body).toMatchObject({ model: "claude-sonnet-4-5", stream: true, system: "sys" });
  });
});
