/**
 * MCP tools as Dimsum tools. Each is registered as `<server>_<tool>` so two servers can both offer
 * `read_file`; the registry's wire-name map keeps the name provider-safe and reversible, and the
 * manager remembers which server and MCP tool name sit behind every registered name.
 */
import { toHashedWireName } from "../tools/tool-names.js";
import type { JsonSchemaTool } from "../tools/types.js";
import type { McpToolInfo } from "./connection.js";
import { type McpCallResult, toToolResult } from "./tool-result.js";

/** What an MCP tool needs to run: a way to call its server. */
export interface McpToolCaller {
  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs?: number; onProgress?: (message: string) => void },
  ): Promise<McpCallResult>;
}

/** The registered name of `tool` from `server`: `<server>_<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}_${tool}`;
}

/**
 * The name to use when `<server>_<tool>` is already taken (`a_b` + `c` meets `a` + `b_c`, or a
 * built-in): the same text plus a stable hash of the unambiguous pair.
 */
export function fallbackMcpToolName(server: string, tool: string): string {
  return toHashedWireName(`${server}/${tool}`);
}

/** Wraps one MCP tool; arguments are validated by the registry against `inputSchema` before `execute`. */
export function createMcpTool(
  registeredName: string,
  server: string,
  info: McpToolInfo,
  caller: McpToolCaller,
  timeoutMs: number | undefined,
): JsonSchemaTool {
  return {
    kind: "json",
    name: registeredName,
    description: info.description ?? info.title ?? `Tool \`${info.name}\` from MCP server "${server}".`,
    parameters: info.inputSchema,
    ...(timeoutMs ? { timeoutMs } : {}),
    async execute(args, ctx) {
      const { progress } = ctx;
      const result = await caller.callTool(info.name, args, {
        signal: ctx.signal,
        ...(progress ? { onProgress: progress } : {}),
      });
      return toToolResult(result);
    },
  };
}
