/** How the CLI prints MCP server states: one line each, or the `dimsum mcp list` table. */
import type { McpServerStatus } from "../../mcp/manager.js";
import { plural } from "./plural.js";
import { oneLine } from "./style.js";

/** One line per server for the chat banner: "everything: connected, 13 tools". */
export function describeMcpStatus(status: McpServerStatus): string {
  const tools = plural(status.toolCount, "tool");
  if (status.state === "connected") return `${status.name}: connected, ${tools}`;
  if (status.state === "failed") return `${status.name}: failed: ${status.lastError ?? "unknown error"}`;
  return `${status.name}: ${status.state}`;
}

/** The status table `dimsum mcp list` prints. */
export function formatStatusTable(statuses: McpServerStatus[]): string {
  const rows = statuses.map((s) => [
    s.name,
    s.transport,
    s.state,
    s.state === "connected" ? String(s.toolCount) : "-",
    s.lastError ? oneLine(s.lastError, 160) : "",
  ]);
  const header = ["SERVER", "TRANSPORT", "STATUS", "TOOLS", "LAST ERROR"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}
