/**
 * Brave Search API: `GET {base}/res/v1/web/search?q=&count=` with the `X-Subscription-Token`
 * header; results in web.results[].title/url/description. Count is 1..20; descriptions carry
 * <strong> highlighting and character references, which are cleaned here.
 */
import { badAnswer } from "../engine-error.js";
import { requestEngineJson } from "../engine-http.js";
import { cleanText } from "../markup.js";
import type { BraveConfig, SearchEngine } from "../types.js";
import { resultsFromItems } from "./api-results.js";
import { endpointUrl } from "./base-url.js";

const LABEL = "Brave Search";
/** Where the API lives unless BRAVE_BASE_URL says otherwise. */
export const BRAVE_DEFAULT_BASE_URL = "https://api.search.brave.com";
const MAX_COUNT = 20;

interface BraveResponse {
  web?: { results?: unknown[] };
}

/** A Brave Search engine using `config.apiKey`. */
export function createBraveEngine(config: BraveConfig): SearchEngine {
  const baseUrl = config.baseUrl ?? BRAVE_DEFAULT_BASE_URL;
  const endpoint = endpointUrl(baseUrl, "/res/v1/web/search", LABEL, "BRAVE_BASE_URL");
  return {
    name: "brave",
    async search(query, { maxResults, signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.min(Math.max(1, maxResults), MAX_COUNT)));
      const body = (await requestEngineJson({
        label: LABEL,
        url,
        method: "GET",
        headers: { accept: "application/json", "x-subscription-token": config.apiKey },
        signal,
        maxBytes: config.maxBytes,
      })) as BraveResponse;
      if (typeof body !== "object" || body === null) throw badAnswer(`${LABEL} answered with no object.`);
      // A query with no web hits has no `web` section at all.
      const items = Array.isArray(body.web?.results) ? body.web.results : [];
      return resultsFromItems(items, "description", maxResults, cleanText);
    },
  };
}
