/** How MCP client failures are recognised and described, for status lines and tool error results. */
import { existsSync } from "node:fs";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { DimsumError } from "../errors.js";
import type { McpServerConfig } from "./config.js";

/**
 * The spec says a server answers 404 for a session it no longer knows. Some servers (the reference
 * "everything" server among them) answer 400 with a message about the session id instead.
 */
export function isSessionExpired(err: unknown): boolean {
  if (!(err instanceof StreamableHTTPError)) return false;
  return err.code === 404 || (err.code === 400 && /session/i.test(err.message));
}

/** The transport failed (not the tool): the session is gone. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof McpError) return err.code === ErrorCode.ConnectionClosed;
  if (err instanceof StreamableHTTPError) return true;
  return err instanceof Error && /not connected|fetch failed|ECONNREFUSED|EPIPE|socket/i.test(err.message);
}

/** One line saying why connecting failed and, where we can tell, what to change. */
export function describeConnectError(config: McpServerConfig, err: unknown): string {
  if (err instanceof DimsumError && err.code === "unauthenticated") {
    return err.hint ? `${err.message} (${err.hint})` : err.message;
  }
  if (err instanceof UnauthorizedError) {
    return `the sign-in did not complete: ${err.message} (run \`dimsum mcp login ${config.name}\`)`;
  }
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (config.transport === "stdio" && code === "ENOENT" && config.cwd && !existsSync(config.cwd)) {
    return `cannot start \`${config.command}\`: the working directory ${config.cwd} does not exist (check "cwd")`;
  }
  if (config.transport === "stdio" && code === "ENOENT") {
    return `cannot start \`${config.command}\`: command not found (check "command" and PATH)`;
  }
  if (config.transport === "stdio" && code === "EACCES") {
    return `cannot start \`${config.command}\`: permission denied`;
  }
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed) {
    return config.transport === "stdio"
      ? "the server process exited before it finished initialising"
      : "the connection closed before initialisation finished";
  }
  if (
    (err instanceof StreamableHTTPError || err instanceof SseError) &&
    err.code !== undefined &&
    err.code >= 100
  ) {
    const auth =
      err.code === 401 || err.code === 403
        ? ' (the server rejected the credentials: check "headers" such as Authorization, or "oauth")'
        : "";
    return `HTTP ${err.code}${auth}: ${messageOf(err)}`;
  }
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  const detail =
    cause instanceof Error && !messageOf(err).includes(cause.message) ? ` (${cause.message})` : "";
  return `${messageOf(err)}${detail}`;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function formatMs(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
}
