/** How MCP client failures are recognised and described, for status lines and tool error results. */
import { existsSync } from "node:fs";
import {
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SseError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import { DimsumError } from "../errors.js";
import type { McpServerConfig } from "./config.js";

/**
 * The spec says a server answers 404 for a session it no longer knows. Some servers (the reference
 * "everything" server among them) answer 400 with a message about the session id instead.
 */
export function isSessionExpired(err: unknown): boolean {
  if (!(err instanceof SdkHttpError)) return false;
  return err.status === 404 || (err.status === 400 && /session/i.test(err.message));
}

/** The transport failed (not the tool): the session is gone. */
export function isConnectionError(err: unknown): boolean {
  if (err instanceof SdkError) return err.code === SdkErrorCode.ConnectionClosed;
  if (err instanceof SdkHttpError) return true;
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
  if (err instanceof SdkError && err.code === SdkErrorCode.ConnectionClosed) {
    return config.transport === "stdio"
      ? "the server process exited before it finished initialising"
      : "the connection closed before initialisation finished";
  }
  const status = httpStatusOf(err);
  if (status !== undefined && status >= 100) {
    const auth =
      status === 401 || status === 403
        ? ' (the server rejected the credentials: check "headers" such as Authorization, or "oauth")'
        : "";
    return `HTTP ${status}${auth}: ${messageOf(err)}`;
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

/** The HTTP status a transport error carries (Streamable HTTP or legacy SSE), if any. */
export function httpStatusOf(err: unknown): number | undefined {
  if (err instanceof SdkHttpError) return err.status;
  if (err instanceof SseError) return err.code;
  return undefined;
}
