/**
 * Perplexity's Search API: `POST {base}/search` with JSON `{query, max_results}` and
 * `Authorization: Bearer <key>`; results[].title/url/snippet. max_results is 1..20. Key:
 * PERPLEXITY_API_KEY.
 */
import { badAnswer } from "../engine-error.js";
import { checkStatus, parseJsonBody, sendEngineRequest } from "../engine-http.js";
import { oneLine } from "../markup.js";
import type { EngineHttpOptions, SearchEngine, SearchResult } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { isHttpUrl } from "./result-url.js";

const LABEL = "Perplexity";
/** Where the API lives unless PERPLEXITY_BASE_URL says otherwise. */
export const PERPLEXITY_DEFAULT_BASE_URL = "https://api.perplexity.ai";
const MAX_RESULTS = 20;

export interface PerplexitySearchConfig extends EngineHttpOptions {
  apiKey: string;
  baseUrl?: string;
}

interface PerplexityResponse {
  results?: Array<{ title?: unknown; url?: unknown; snippet?: unknown }>;
}

/** A Perplexity engine using `config.apiKey`. */
export function createPerplexityEngine(config: PerplexitySearchConfig): SearchEngine {
  const endpoint = endpointUrl(
    config.baseUrl ?? PERPLEXITY_DEFAULT_BASE_URL,
    "/search",
    LABEL,
    "PERPLEXITY_BASE_URL",
  );
  return {
    name: "perplexity",
    async search(query, { maxResults, signal }) {
      const res = await sendEngineRequest({
        label: LABEL,
        url: new URL(endpoint),
        method: "POST",
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          authorization: `Bearer ${config.apiKey}`,
        },
        body: JSON.stringify({ query, max_results: Math.min(Math.max(1, maxResults), MAX_RESULTS) }),
        signal,
        ...(config.maxBytes === undefined ? {} : { maxBytes: config.maxBytes }),
      });
      checkStatus(LABEL, endpoint, res);
      const body = parseJsonBody(LABEL, res.text) as PerplexityResponse;
      if (typeof body !== "object" || body === null || !Array.isArray(body.results)) {
        throw badAnswer(`${LABEL} answered without a results list.`);
      }
      const results: SearchResult[] = [];
      for (const item of body.results) {
        if (typeof item?.url !== "string" || !isHttpUrl(item.url)) continue;
        results.push({
          title: oneLine(typeof item.title === "string" ? item.title : item.url),
          url: item.url,
          snippet: oneLine(typeof item.snippet === "string" ? item.snippet : ""),
        });
        if (results.length >= maxResults) break;
      }
      return results;
    },
  };
}
