/**
 * For engines whose JSON answer lists hits as objects with a URL, a title and a snippet under an
 * engine-specific key (SearXNG, Brave, Tavily, Perplexity): the list, and the hits turned into results.
 */
import { badAnswer } from "../engine-error.js";
import { oneLine } from "../markup.js";
import type { SearchResult } from "../types.js";
import { isHttpUrl } from "./result-url.js";

/** The `results` array of a JSON answer, or a bad-answer error naming the engine. */
export function resultsArray(label: string, body: unknown): unknown[] {
  const results =
    typeof body === "object" && body !== null ? (body as { results?: unknown }).results : undefined;
  if (!Array.isArray(results)) throw badAnswer(`${label} answered without a results list.`);
  return results;
}

/**
 * Up to `maxResults` results from the API's hits, in order: hits without an http(s) URL are
 * skipped, a missing title becomes the URL, the snippet is read from `snippetKey`.
 * `clean` tidies title and snippet (default: one line of plain text).
 */
export function resultsFromItems(
  items: readonly unknown[],
  snippetKey: string,
  maxResults: number,
  clean: (text: string) => string = oneLine,
): SearchResult[] {
  const results: SearchResult[] = [];
  for (const raw of items) {
    if (typeof raw !== "object" || raw === null) continue;
    const item = raw as Record<string, unknown>;
    const { url, title } = item;
    const snippet = item[snippetKey];
    if (typeof url !== "string" || !isHttpUrl(url)) continue;
    results.push({
      title: clean(typeof title === "string" ? title : url),
      url,
      snippet: clean(typeof snippet === "string" ? snippet : ""),
    });
    if (results.length >= maxResults) break;
  }
  return results;
}
