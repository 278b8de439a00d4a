/**
 * Dimsum as an MCP server, the entry points: `serveStdio()` for `dimsum mcp serve`, and
 * `createMcpHttpHandler()` for the HTTP server to mount. The tool set itself is in tool-server.ts.
 * Both answer the 2026-07-28 revision (`server/discover`) and the 2025 `initialize` handshake: the
 * client's opening message decides which one a connection (stdio) or request (HTTP) speaks.
 */
import { StdioServerTransport, serveStdio as serveBothRevisions } from "@modelcontextprotocol/server/stdio";
import { createDimsumMcpServer, type DimsumMcpServer, type DimsumMcpServerOptions } from "./tool-server.js";

export { createMcpHttpHandler, type McpHttpHandler, type McpHttpHandlerOptions } from "./http-handler.js";
export {
  createDimsumMcpServer,
  type DimsumMcpServer,
  type DimsumMcpServerOptions,
  type McpToolContext,
  toCallToolResult,
} from "./tool-server.js";

export interface ServeStdioOptions extends DimsumMcpServerOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

export interface StdioServing {
  server: DimsumMcpServer;
  /** Resolves when the client goes away (stdin ends) or `close()` is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Serves the tools over stdin/stdout (`dimsum mcp serve`). Nothing else may write to stdout. */
export async function serveStdio(options: ServeStdioOptions): Promise<StdioServing> {
  const server = createDimsumMcpServer(options);
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin as NodeJS.ReadStream, stdout as NodeJS.WriteStream);
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  // One protocol server for the one connection, of whichever revision the client opens with.
  const handle = serveBothRevisions(
    () => {
      const session = server.createSession();
      const forget = session.onclose;
      session.onclose = () => {
        forget?.();
        finish();
      };
      return session;
    },
    { transport },
  );
  const close = async () => {
    stdin.off("end", onEnd);
    await handle.close().catch(() => {});
    await server.close();
    finish();
  };
  // The SDK transport does not watch for end of input; without this the process would linger.
  const onEnd = () => void close();
  stdin.once("end", onEnd);
  return { server, closed, close };
}
