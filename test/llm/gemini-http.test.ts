/** End to end over real HTTP: the built request reaches a local server and its CRLF-separated SSE parses. */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createParser } from "eventsource-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiAdapter } from "../../src/llm/gemini/index.js";
import type { ModelEvent, ModelSpec } from "../../src/llm/types.js";
import { sseEventsFor, summarise } from "../support/fixtures.js";

let server: Server;
let baseUrl: string;
const received: Array<{ url: string; headers: IncomingMessage["headers"]; body: unknown }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      text += chunk;
    });
    req.on("end", () => {
      received.push({ url: req.url ?? "", headers: req.headers, body: JSON.parse(text) });
      res.writeHead(200, { "content-type": "text/event-stream" });
      // The live API may separate events with CRLF pairs.
      for (const e of sseEventsFor("google--google-stream-tool-call-arguments.chunks.txt"))
        res.write(`data: ${e.data}\r\n\r\n`);
      res.end();
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

describe("Gemini over HTTP", () => {
  it("sends the request to streamGenerateContent?alt=sse and parses the streamed reply", async () => {
    const model: ModelSpec = {
      provider: "gemini",
      id: "gemini-2.5-flash",
      protocol: "gemini",
      baseUrl,
      apiKey: "test-key",
      contextWindow: 1048576,
    };
    const request = geminiAdapter.buildRequest(
      model,
      { messages: [{ role: "user", content: "weather?" }] },
      {},
    );
    const response = await fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: JSON.stringify(request.body),
    });
    const parser = geminiAdapter.createParser(model);
    const events: ModelEvent[] = [];
    const sse = createParser({
      onEvent: (e) => events.push(...parser.push({ event: e.event, data: e.data })),
    });
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      sse.feed(decoder.decode(chunk, { stream: true }));
    events.push(...parser.finish());

    const r = summarise(events);
    expect(r.toolCalls.map((c) => JSON.parse(c.arguments))).toEqual([
      { location: "Boston" },
      { location: "San Francisco" },
    ]);
    expect(r.done?.finishReason).toBe("tool_calls");
    expect(received.at(-1)?.url).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(received.at(-1)?.headers["x-goog-api-key"]).toBe("test-key");
    expect(received.at(-1)?.body).toEqual({ contents: [{ role: "user", parts: [{ text: "weather?" }] }] });
  });
});
