/**
 * Tavily: `POST {base}/search` with JSON `{query, max_results}` and `Authorization: Bearer <key>`;
 * results[].title/url/content. max_results is 0..20 (default 5).
 */
import { badAnswer } from "../engine-error.js";
import { checkStatus, parseJsonBody, sendEngineRequest } from "../engine-http.js";
import { oneLine } from "../markup.js";
import type { SearchEngine, SearchResult, TavilyConfig } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { isHttpUrl } from "./result-url.js";

const LABEL = "Tavily";
/** Where the API lives unless TAVILY_BASE_URL says otherwise. */
export const TAVILY_DEFAULT_BASE_URL = "https://api.tavily.com";
const MAX_RESULTS = 20;

interface TavilyResponse {
  results?: Array<{ title?: unknown; url?: unknown; content?: unknown }>;
}

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
      const url = new URL(endpoint);
      const res = await sendEngineRequest({
        label: LABEL,
        url,
        method: "POST",
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          authorization: `Bearer ${config.apiKey}`,
        },
        body: JSON.stringify({
          query,
          max_results: Math.min(Math.max(1, maxResults), MAX_RESULTS),
          search_depth: "basic",
        }),
        signal,
        ...(config.maxBytes === undefined ? {} : { maxBytes: config.maxBytes }),
      });
      checkStatus(LABEL, url, res);
      const body = parseJsonBody(LABEL, res.text) as TavilyResponse;
      if (typeof body !== "object" || body === null || !Array.isArray(body.results)) {
        throw badAnswer(`${LABEL} answered without a results list.`);
      }
      const results: SearchResult[] = [];
      for (const item of body.results) {
        if (typeof item?.url !== "string" || !isHttpUrl(item.url)) continue;
        results.push({
          title: oneLine(typeof item.title === "string" ? item.title : item.url),
          url: item.url,
          snippet: oneLine(typeof item.content === "string" ? item.content : ""),
        });
        if (results.length >= maxResults) break;
      }
      return results;
    },
  };
}
