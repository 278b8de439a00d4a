/** The prompts MCP servers offer, listed for slash commands (`dimsum chat` and the web composer). */
import type { McpManager } from "./manager.js";

export interface McpPromptCommand {
  server: string;
  name: string;
  description?: string;
  arguments: Array<{ name: string; description?: string; required?: boolean }>;
}

/** The prompts of every connected server that offers them (a failing server is skipped). */
export async function listMcpPrompts(manager: McpManager): Promise<McpPromptCommand[]> {
  const out: McpPromptCommand[] = [];
  for (const status of manager.statuses()) {
    if (status.state !== "connected" || !status.features?.prompts) continue;
    try {
      for (const prompt of await manager.connection(status.name).listPrompts()) {
        out.push({
          server: status.name,
          name: prompt.name,
          ...(prompt.description ? { description: prompt.description } : {}),
          arguments: (prompt.arguments ?? []).map((a) => ({
            name: a.name,
            ...(a.description ? { description: a.description } : {}),
            ...(a.required ? { required: true } : {}),
          })),
        });
      }
    } catch {
      // The banner shows the server's state; its prompts are simply not offered.
    }
  }
  return out;
}
