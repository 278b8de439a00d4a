/** Shared pieces for the HTTP tool tests: a tool context, a registry call, and a local test server. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { defaultToolsConfig } from "../../../src/tools/builtin/defaults.js";
import { ToolRegistry } from "../../../src/tools/registry.js";
import type { Tool, ToolContext, ToolResult } from "../../../src/tools/types.js";

/** A context whose config may allow private addresses (as `tools.fetch.allowPrivateNetwork` does). */
export function makeContext(allowPrivateNetwork = false): ToolContext {
  const config = defaultToolsConfig();
  config.fetch.allowPrivateNetwork = allowPrivateNetwork;
  return {
    signal: new AbortController().signal,
    workspace: process.cwd(),
    runId: "http-test",
    todos: { list: () => [], save: () => undefined },
    config,
  };
}

/** Validates the arguments and runs the tool through a real registry, as the agent loop does. */
export async function callTool(
  tool: Tool,
  args: Record<string, unknown>,
  ctx: ToolContext = makeContext(),
): Promise<ToolResult> {
  const registry = new ToolRegistry([tool]);
  const prepared = registry.prepareCall(tool.name, JSON.stringify(args));
  if (!prepared.ok) return { content: prepared.error, isError: true };
  return registry.execute(prepared, ctx);
}

export function textOf(result: ToolResult): string {
  return typeof result.content === "string"
    ? result.content
    : result.content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface TestServer {
  base: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records requests and answers with `handle`. */
export async function startServer(
  handle: (req: RecordedRequest, res: ServerResponse) => void,
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString("utf8");
    });
    req.on("end", () => {
      const recorded = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body };
      requests.push(recorded);
      handle(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Sends JSON with a status. */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
}
