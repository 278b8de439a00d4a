/**
 * SearXNG, usually self-hosted: `GET {base}/search?q=...&format=json`, results[].title/url/content.
 * The JSON format must be enabled in the instance's settings.yml (search.formats), else it answers 403.
 * The API cannot limit the number of results, so they are cut here.
 */
import { SearchEngineError } from "../engine-error.js";
import { checkStatus, parseJsonBody, sendEngineRequest } from "../engine-http.js";
import type { SearchEngine, SearxngConfig } from "../types.js";
import { resultsArray, resultsFromItems } from "./api-results.js";
import { endpointUrl } from "./base-url.js";

const LABEL = "SearXNG";

interface SearxngResponse {
  unresponsive_engines?: unknown[];
}

/** A SearXNG engine for the instance at `config.baseUrl`. */
export function createSearxngEngine(config: SearxngConfig): SearchEngine {
  const endpoint = endpointUrl(config.baseUrl, "/search", LABEL, "SEARXNG_URL");
  return {
    name: "searxng",
    async search(query, { maxResults, signal }) {
      const url = new URL(endpoint);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const res = await sendEngineRequest({
        label: LABEL,
        url,
        method: "GET",
        headers: { accept: "application/json" },
        signal,
        maxBytes: config.maxBytes,
      });
      if (res.status === 403) {
        throw new SearchEngineError("bad_request", `${LABEL} refused JSON output (HTTP 403).`, {
          status: 403,
          hint: "enable it in the instance's settings.yml: search.formats must include json",
        });
      }
      checkStatus(LABEL, url, res);
      const body = parseJsonBody(LABEL, res.text) as SearxngResponse;
      const results = resultsFromItems(resultsArray(LABEL, body), "content", maxResults);
      const unresponsive = Array.isArray(body.unresponsive_engines) ? body.unresponsive_engines.length : 0;
      // An empty page because every upstream engine failed is an outage, not "nothing found".
      if (results.length === 0 && unresponsive > 0) {
        throw new SearchEngineError(
          "provider_unavailable",
          `${LABEL} returned no results because ${unresponsive} of its upstream engines did not respond.`,
          { retryable: true },
        );
      }
      return results;
    },
  };
}
