/**
 * Which MCP servers' tools a run is offered: those its person may see (`canUseResource`). A run that
 * acts for no one (a system run) gets the servers everyone sees. Nested runs (`call_agent`, A2A,
 * `/v1`) act for the same person, so they are filtered the same way.
 */
import { canUseResource, type Viewer, type Visible } from "../shared/visibility.js";
import type { Tool } from "../tools/types.js";

/** What the filter needs of the MCP servers: who sees each, and their names. */
export interface McpAccess {
  access?(server: string): Visible | undefined;
  serverNames(): string[];
}

/** Someone who sees only what everyone sees (no account id matches an owner). */
const NOBODY: Viewer = { userId: "", role: "guest" };

/** True when `viewer` (none: a run for no one) may use MCP server `server`. */
export function canUseMcpServer(source: McpAccess, viewer: Viewer | undefined, server: string): boolean {
  const access = source.access?.(server);
  return access === undefined || canUseResource(viewer ?? NOBODY, access);
}

/** The tools of `tools` whose server `viewer` may use. */
export function mcpToolsVisibleTo(
  source: McpAccess,
  viewer: Viewer | undefined,
  tools: readonly Tool[],
): Tool[] {
  if (!source.access) return [...tools];
  // Longest names first, so `a_b_tool` belongs to server `a_b` rather than `a`.
  const names = source.serverNames().sort((a, b) => b.length - a.length);
  const serverOf = (tool: Tool) =>
    (tool.kind === "json" ? tool.mcp?.server : undefined) ?? names.find((n) => tool.name.startsWith(`${n}_`));
  return tools.filter((tool) => {
    const server = serverOf(tool);
    return server === undefined || canUseMcpServer(source, viewer, server);
  });
}
