/**
 * Dimsum's MCP server over Streamable HTTP, as a `node:http` request handler the HTTP server mounts
 * (e.g. at `/mcp`). One protocol session per client (`Mcp-Session-Id`); an unknown session gets 404
 * so the client re-initialises. Requests from a browser page on another host are refused (DNS rebinding).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
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

/** A request handler serving `server` (or one built from options) over Streamable HTTP. */
export function createMcpHttpHandler(
  server: DimsumMcpServer | DimsumMcpServerOptions,
  options: McpHttpHandlerOptions = {},
): McpHttpHandler {
  const mcp = "createSession" in server ? server : createDimsumMcpServer(server);
  const transports = new Map<string, NodeStreamableHTTPServerTransport>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;

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
    await transport.handleRequest(req, res);
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
      const open = [...transports.values()];
      transports.clear();
      await Promise.all(open.map((transport) => transport.close().catch(() => {})));
      await mcp.close();
    },
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
