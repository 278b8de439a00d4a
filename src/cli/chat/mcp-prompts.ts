/**
 * MCP prompts as chat slash commands: `/<server>:<prompt> [args]`. Arguments are given in order
 * (quote values with spaces) or as `name=value`; required ones left out are asked for. The prompt's
 * messages become the text of the next turn.
 */
import type { McpManager } from "../../mcp/manager.js";
import type { McpPromptCommand } from "../../mcp/prompts.js";
import { textOf } from "../../mcp/sampling.js";
import type { Ask } from "./mcp-requests.js";

export { listMcpPrompts, type McpPromptCommand } from "../../mcp/prompts.js";

/** "/notes:summarize <topic> [style]" */
export function promptUsage(prompt: McpPromptCommand): string {
  const args = prompt.arguments.map((a) => (a.required ? `<${a.name}>` : `[${a.name}]`)).join(" ");
  return `/${prompt.server}:${prompt.name}${args ? ` ${args}` : ""}${prompt.description ? ` — ${prompt.description}` : ""}`;
}

/** The prompt a slash line names, if any. */
export function findPrompt(line: string, prompts: McpPromptCommand[]): McpPromptCommand | undefined {
  const head = line.trim().slice(1).split(/\s+/)[0] ?? "";
  return prompts.find((p) => `${p.server}:${p.name}` === head);
}

/** Fills the arguments (asking for missing required ones) and returns the turn's text. */
export async function expandPrompt(
  manager: McpManager,
  prompt: McpPromptCommand,
  line: string,
  ask: Ask,
  signal: AbortSignal,
): Promise<string | undefined> {
  const words = splitWords(line.trim().replace(/^\S+\s*/, ""));
  const args: Record<string, string> = {};
  const positional: string[] = [];
  for (const word of words) {
    const eq = word.indexOf("=");
    const key = eq > 0 ? word.slice(0, eq) : "";
    if (key && prompt.arguments.some((a) => a.name === key)) args[key] = word.slice(eq + 1);
    else positional.push(word);
  }
  for (const arg of prompt.arguments) {
    if (args[arg.name] !== undefined) continue;
    const next = positional.shift();
    if (next !== undefined) args[arg.name] = next;
  }
  for (const arg of prompt.arguments) {
    while (arg.required && !args[arg.name]) {
      const answer = await ask(`${arg.name}${arg.description ? ` (${arg.description})` : ""}: `, signal);
      if (answer === undefined) return undefined;
      if (answer.trim()) args[arg.name] = answer.trim();
    }
  }
  const result = await manager.connection(prompt.server).getPrompt(prompt.name, args, signal);
  const texts = result.messages.map((m) => textOf(m.content));
  return texts.join("\n\n");
}

/** Splits on spaces, keeping "quoted values" together. */
function splitWords(text: string): string[] {
  const words: string[] = [];
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g))
    words.push(match[1] ?? match[2] ?? match[3] ?? "");
  return words;
}
