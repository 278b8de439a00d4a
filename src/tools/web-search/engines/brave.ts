/**
 * Brave Search API: `GET {base}/res/v1/web/search?q=&count=` with the `X-Subscription-Token`
 * header; results in web.results[].title/url/description. Count is 1..20; descriptions carry
 * <strong> highlighting and character references, which are cleaned here.
 */
import { badAnswer } from "../engine-error.js";
import { checkStatus, parseJsonBody, sendEngineRequest } from "../engine-http.js";
import { cleanText } from "../markup.js";
import type { BraveConfig, SearchEngine, SearchResult } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { isHttpUrl } from "./result-url.js";

const LABEL = "Brave Search";
/** Where the API lives unless BRAVE_BASE_URL says otherwise. */
export const BRAVE_DEFAULT_BASE_URL = "https://api.search.brave.com";
const MAX_COUNT = 20;

interface BraveResponse {
  web?: { results?: Array<{ title?: unknown; url?: unknown; description?: unknown }> };
}

/** A Brave Search engine using `config.apiKey`. */
export function createBraveEngine(config: BraveConfig): SearchEngine {
  const endpoint = endpointUrl(
    config.baseUrl ?? BRAVE_DEFAULT_BASE_URL,
    "/res/v1/web/search",
    LABEL,
    "BRAVE_BASE_URL",
  );
  return {
    name: "brave",
    async search(query, { maxResults, signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(Math.max(1, maxResults), MAX_COUNT)));
      const res = await sendEngineRequest({
        label: LABEL,
        url,
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": config.apiKey },
        signal,
        ...(config.maxBytes === undefined ? {} : { maxBytes: config.maxBytes }),
      });
      checkStatus(LABEL, url, res);
      const body = parseJsonBody(LABEL, res.text) as BraveResponse;
      if (typeof body !== "object" || body === null) throw badAnswer(`${LABEL} answered with no object.`);
      // A query with no web hits has no `web` section at all.
      const items = Array.isArray(body.web?.results) ? body.web.results : [];
      const results: SearchResult[] = [];
      for (const item of items) {
        if (typeof item?.url !== "string" || !isHttpUrl(item.url)) continue;
        results.push({
          title: cleanText(typeof item.title === "string" ? item.title : item.url),
          url: item.url,
          snippet: cleanText(typeof item.description === "string" ? item.description : ""),
        });
        if (results.length >= maxResults) break;
      }
      return results;
    },
  };
}
