/**
 * For engines that search through a model (Kimi's `$web_search`, xAI's live search): the
 * instruction that asks for one result per line, and the parser of those lines.
 */
import { oneLine } from "../markup.js";
import type { SearchResult } from "../types.js";
import { isHttpUrl } from "./result-url.js";

/** The system instruction: search, then list what was found, one `title | url | summary` a line. */
export function resultLinesInstruction(maxResults: number): string {
  return [
    "You are a web search engine. Search the web for the user's query.",
    `Answer with at most ${maxResults} results, most relevant first, one per line, exactly as:`,
    "<title> | <url> | <one-sentence summary>",
    "No other text, no numbering, no Markdown.",
  ].join("\n");
}

/** The chat that asks a searching model for `query`: the instruction above, then the query. */
export function resultLinesChat(query: string, maxResults: number): Array<{ role: string; content: string }> {
  return [
    { role: "system", content: resultLinesInstruction(maxResults) },
    { role: "user", content: query },
  ];
}

/** The results in a model's `title | url | summary` lines; lines without an http(s) URL are skipped. */
export function parseResultLines(text: string, maxResults: number): SearchResult[] {
  const results: SearchResult[] = [];
  for (const line of text.split("\n")) {
    const cells = line
      .replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "")
      .split("|")
      .map((c) => c.trim());
    const at = cells.findIndex((c) => isHttpUrl(c.replace(/^<|>$/g, "")));
    if (at < 0) continue;
    const url = (cells[at] ?? "").replace(/^<|>$/g, "");
    if (results.some((r) => r.url === url)) continue;
    results.push({
      title: oneLine(cells.slice(0, at).join(" | ") || new URL(url).host),
      url,
      snippet: oneLine(cells.slice(at + 1).join(" | ")),
    });
    if (results.length >= maxResults) break;
  }
  return results;
}
