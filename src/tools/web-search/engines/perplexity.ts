/**
 * Perplexity's Search API: `POST {base}/search` with JSON `{query, max_results}` and
 * `Authorization: Bearer <key>`; results[].title/url/snippet. max_results is 1..20. Key:
 * PERPLEXITY_API_KEY.
 */
import type { EngineHttpOptions, SearchEngine } from "../types.js";
import { resultsArray, resultsFromItems } from "./api-results.js";
import { endpointUrl } from "./base-url.js";
import { postKeyedJson } from "./keyed-json.js";

const LABEL = "Perplexity";
/** Where the API lives unless PERPLEXITY_BASE_URL says otherwise. */
export const PERPLEXITY_DEFAULT_BASE_URL = "https://api.perplexity.ai";
const MAX_RESULTS = 20;

export interface PerplexitySearchConfig extends EngineHttpOptions {
  apiKey: string;
  baseUrl?: string;
}

/** A Perplexity engine using `config.apiKey`. */
export function createPerplexityEngine(config: PerplexitySearchConfig): SearchEngine {
  const baseUrl = config.baseUrl ?? PERPLEXITY_DEFAULT_BASE_URL;
  const endpoint = endpointUrl(baseUrl, "/search", LABEL, "PERPLEXITY_BASE_URL");
  return {
    name: "perplexity",
    async search(query, { maxResults, signal }) {
      const body = await postKeyedJson({
        label: LABEL,
        endpoint,
        apiKey: config.apiKey,
        payload: { query, max_results: Math.min(Math.max(1, maxResults), MAX_RESULTS) },
        signal,
        maxBytes: config.maxBytes,
      });
      return resultsFromItems(resultsArray(LABEL, body), "snippet", maxResults);
    },
  };
}
