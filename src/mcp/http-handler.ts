/**
 * Dimsum's MCP server over Streamable HTTP, as a `node:http` request handler the HTTP server mounts
 * (e.g. at `/mcp`). Both protocol revisions on one endpoint: a 2026-07-28 request (it carries the
 * per-request `_meta` envelope) is served on its own by the SDK's `createMcpHandler`, with tool
 * changes published on `subscriptions/listen` streams; a 2025 client gets one protocol session
 * (`Mcp-Session-Id`), and an unknown session gets 404 so the client re-initialises. Requests from a
 * browser page on another host are refused (DNS rebinding).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import { createMcpHandler, isLegacyRequest } from "@modelcontextprotocol/server";
import { hostAllowed } from "./host-check.js";
import { createDimsumMcpServer, type DimsumMcpServer, type DimsumMcpServerOptions } from "./tool-server.js";

export interface McpHttpHandlerOptions {
  /**
   * Host names (without port) accepted in `Host` and `Origin`. When absent, a request that arrived on
   * a loopback address must name localhost, 127.0.0.1 or [::1]; others are not checked here.
   */
  allowedHosts?: string[];
  /** Most concurrent sessions; the least recently used one is closed beyond this (default 100). */
  maxSessions?: number;
}

export interface McpHttpHandler {
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
  readonly server: DimsumMcpServer;
  /** Open sessions. */
  sessionCount(): number;
  /** Closes every session. */
  close(): Promise<void>;
}

const DEFAULT_MAX_SESSIONS = 100;
/** The SDK's own bound on a request body (4 MiB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** A request handler serving `server` (or one built from options) over Streamable HTTP. */
export function createMcpHttpHandler(
  server: DimsumMcpServer | DimsumMcpServerOptions,
  options: McpHttpHandlerOptions = {},
): McpHttpHandler {
  const mcp = "createSession" in server ? server : createDimsumMcpServer(server);
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  // 2026-07-28: one untracked server instance per request; 2025 requests never reach it.
  const modern = createMcpHandler(() => mcp.createInstance(), { legacy: "reject" });
  const serveModern = toNodeHandler(modern);
  const stopPublishing = mcp.onToolsChanged(() => modern.notify.toolsChanged());

  const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req, options.allowedHosts)) {
      return sendError(res, 403, -32000, "Forbidden: this host or origin may not use the MCP endpoint.");
    }
    const sessionId = header(req, "mcp-session-id");
    if (sessionId !== undefined) {
      const transport = transports.get(sessionId);
      if (!transport) return sendError(res, 404, -32001, "Session not found; initialise a new session.");
      // Re-inserting keeps the map in least-recently-used order for eviction.
      transports.delete(sessionId);
      transports.set(sessionId, transport);
      return transport.handleRequest(req, res);
    }
    if (req.method !== "POST") {
      return sendError(res, 400, -32000, "Bad request: Mcp-Session-Id header is required.");
    }
    const body = await readJson(req);
    if (!body.ok) return sendError(res, body.status, -32700, body.message);
    if (!(await isLegacyRequest(webRequestOf(req), body.value))) {
      return serveModern(req, res, body.value);
    }
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        evictBeyond(maxSessions);
      },
      onsessionclosed: (id) => {
        transports.delete(id);
      },
    });
    const session = mcp.createSession();
    transport.onclose = () => {
      if (transport.sessionId) transports.delete(transport.sessionId);
    };
    await session.connect(transport);
    await transport.handleRequest(req, res, body.value);
    // Not an initialize request (the transport answered 400): nothing to keep.
    if (transport.sessionId === undefined || !transports.has(transport.sessionId)) {
      await session.close().catch(() => {});
    }
  };

  // Never rejects: the server mounting us should not need to know how MCP fails.
  const handler = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      await serve(req, res);
    } catch (err) {
      if (res.headersSent) res.destroy(err instanceof Error ? err : undefined);
      else sendError(res, 500, -32603, `Internal error: ${err instanceof Error ? err.message : String(err)}`);
    }
  };

  const evictBeyond = (limit: number) => {
    while (transports.size > limit) {
      const [oldest, transport] = transports.entries().next().value as [
        string,
        NodeStreamableHTTPServerTransport,
      ];
      transports.delete(oldest);
      void transport.close().catch(() => {});
    }
  };

  return Object.assign(handler, {
    server: mcp,
    sessionCount: () => transports.size,
    async close() {
      stopPublishing();
      await modern.close().catch(() => {});
      const open = [...transports.values()];
      transports.clear();
      await Promise.all(open.map((transport) => transport.close().catch(() => {})));
      await mcp.close();
    },
  });
}

type BodyRead = { ok: true; value: unknown } | { ok: false; status: number; message: string };

/** Reads and parses a POST body (the revision is told by what it carries). */
async function readJson(req: IncomingMessage): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > MAX_BODY_BYTES) {
      return {
        ok: false,
        status: 413,
        message: `Request body too large: the limit is ${MAX_BODY_BYTES} bytes.`,
      };
    }
    chunks.push(buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch {
    return { ok: false, status: 400, message: "Parse error: the request body is not JSON." };
  }
}

/** The request line and headers as a web Request, for the SDK's revision check (the body is passed apart). */
function webRequestOf(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return new Request(new URL(req.url ?? "/", `http://${req.headers.host ?? "localhost"}`), {
    method: req.method ?? "POST",
    headers,
  });
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sendError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
