/**
 * Dimsum as an MCP server, the entry points: `serveStdio()` for `dimsum mcp serve`, and
 * `createMcpHttpHandler()` for the HTTP server to mount. The tool set itself is in tool-server.ts.
 */
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
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
  const session = server.createSession();
  let finish: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    finish = resolve;
  });
  const close = async () => {
    stdin.off("end", onEnd);
    await server.close();
    finish();
  };
  // The SDK transport does not watch for end of input; without this the process would linger.
  const onEnd = () => void close();
  stdin.once("end", onEnd);
  const forget = session.onclose;
  session.onclose = () => {
    forget?.();
    finish();
  };
  await session.connect(transport);
  return { server, closed, close };
}
