/**
 * Tavily: `POST {base}/search` with JSON `{query, max_results}` and `Authorization: Bearer <key>`;
 * results[].title/url/content. max_results is 0..20 (default 5).
 */
import type { SearchEngine, TavilyConfig } from "../types.js";
import { resultsArray, resultsFromItems } from "./api-results.js";
import { endpointUrl } from "./base-url.js";
import { postKeyedJson } from "./keyed-json.js";

const LABEL = "Tavily";
/** Where the API lives unless TAVILY_BASE_URL says otherwise. */
export const TAVILY_DEFAULT_BASE_URL = "https://api.tavily.com";
const MAX_RESULTS = 20;

/** A Tavily engine using `config.apiKey`. */
export function createTavilyEngine(config: TavilyConfig): SearchEngine {
  const endpoint = endpointUrl(
    config.baseUrl ?? TAVILY_DEFAULT_BASE_URL,
    "/search",
    LABEL,
    "TAVILY_BASE_URL",
  );
  return {
    name: "tavily",
    async search(query, { maxResults, signal }) {
      const body = await postKeyedJson({
        label: LABEL,
        endpoint,
        apiKey: config.apiKey,
        payload: {
          query,
          max_results: Math.min(Math.max(1, maxResults), MAX_RESULTS),
          search_depth: "basic",
        },
        signal,
        maxBytes: config.maxBytes,
      });
      return resultsFromItems(resultsArray(LABEL, body), "content", maxResults);
    },
  };
}
