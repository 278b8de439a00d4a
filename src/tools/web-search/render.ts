/** Turns a search outcome into the text a model reads. Secrets are scrubbed from everything shown. */
import type { EngineFailure } from "./failover.js";
import { engineLabel, type SearchResult } from "./types.js";

const MAX_SNIPPET_CHARS = 400;

/** Replaces every secret in `text` with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join("***");
  return out;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text;
}

function failureLines(failures: EngineFailure[]): string[] {
  return failures.map((f) => `- ${engineLabel(f.engine)}: ${f.reason}`);
}

/** The numbered list: title, URL, snippet; preceded by which engine answered and who failed first. */
export function renderResults(
  query: string,
  engine: string,
  results: SearchResult[],
  failures: EngineFailure[],
  cached: boolean,
): string {
  const source = `${engineLabel(engine)}${cached ? " (cached)" : ""}`;
  const lines: string[] = [];
  if (results.length === 0) {
    lines.push(`No results for "${query}" from ${source}.`);
  } else {
    const count = `${results.length} result${results.length === 1 ? "" : "s"}`;
    lines.push(`Search results for "${query}" from ${source}, ${count}:`);
  }
  if (failures.length > 0) {
    lines.push(`Engines that failed before ${engineLabel(engine)} answered:`, ...failureLines(failures));
  }
  results.forEach((r, i) => {
    lines.push("", `${i + 1}. ${r.title}`, `   ${r.url}`);
    if (r.snippet) lines.push(`   ${clip(r.snippet, MAX_SNIPPET_CHARS)}`);
  });
  return lines.join("\n");
}

/** The error text when every engine failed, one line per engine. */
export function renderAllFailed(query: string, failures: EngineFailure[]): string {
  return [
    `Web search for "${query}" failed: no search engine answered.`,
    ...failureLines(failures),
    "Try again later, or configure another engine (SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY; order with DIMSUM_SEARCH_ENGINES).",
  ].join("\n");
}
