/**
 * DuckDuckGo's HTML endpoint, the keyless default: `POST {base}/html/` with form field `q`.
 * Each hit is an `a.result__a` (title) followed by a `.result__snippet`; links are wrapped in
 * `//duckduckgo.com/l/?uddg=<encoded target>` redirects, and ads point at `duckduckgo.com/y.js`.
 */
import { badAnswer, SearchEngineError } from "../engine-error.js";
import { checkStatus, sendEngineRequest } from "../engine-http.js";
import { cleanText, findByClass, hasClass } from "../markup.js";
import type { DuckDuckGoConfig, SearchEngine, SearchResult } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { isHttpUrl } from "./result-url.js";

const LABEL = "DuckDuckGo";
/** Where the HTML endpoint lives unless DUCKDUCKGO_BASE_URL says otherwise. */
export const DUCKDUCKGO_DEFAULT_BASE_URL = "https://html.duckduckgo.com";

// Markers of the page DuckDuckGo serves instead of results when it suspects a bot.
const BLOCKED_MARKERS = [/anomaly-modal/i, /challenge-form/i, /bots use DuckDuckGo too/i];
const NO_RESULTS_MARKERS = [/class\s*=\s*["'][^"']*\bno-results\b/i, /No\s+results\s+found/i];

export interface DuckDuckGoPage {
  results: SearchResult[];
  /** The page is DuckDuckGo's bot challenge rather than results. */
  blocked: boolean;
  /** The page says plainly that nothing matched. */
  saysNoResults: boolean;
}

/** The real target of a result link: unwraps `/l/?uddg=` redirects, drops ads and internal links. */
export function unwrapDuckDuckGoLink(href: string): string | undefined {
  let url: URL;
  try {
    url = new URL(href, "https://duckduckgo.com/");
  } catch {
    return undefined;
  }
  const host = url.hostname.toLowerCase();
  if (host === "duckduckgo.com" || host.endsWith(".duckduckgo.com")) {
    if (url.pathname !== "/l/" && url.pathname !== "/l") return undefined;
    const target = url.searchParams.get("uddg");
    return target !== null && isHttpUrl(target) ? target : undefined;
  }
  return isHttpUrl(url.href) ? url.href : undefined;
}

/** Pulls the organic results out of an HTML results page, in page order. */
export function parseDuckDuckGoHtml(html: string): DuckDuckGoPage {
  const hits: Array<SearchResult & { keep: boolean }> = [];
  for (const tag of findByClass(html, ["result__a", "result__snippet"])) {
    if (hasClass(tag.attributes, "result__a")) {
      const url = unwrapDuckDuckGoLink(tag.attributes.get("href") ?? "");
      const title = cleanText(tag.inner);
      // Ads stay in the list (unkept) so their snippet is not pinned on the previous result.
      hits.push({ title: title || (url ?? ""), url: url ?? "", snippet: "", keep: url !== undefined });
      continue;
    }
    const last = hits.at(-1);
    if (last && last.snippet === "") last.snippet = cleanText(tag.inner);
  }
  const results = hits.filter((h) => h.keep).map(({ title, url, snippet }) => ({ title, url, snippet }));
  return {
    results,
    blocked: BLOCKED_MARKERS.some((m) => m.test(html)),
    saysNoResults: NO_RESULTS_MARKERS.some((m) => m.test(html)),
  };
}

/** A DuckDuckGo engine (no key needed). */
export function createDuckDuckGoEngine(config: DuckDuckGoConfig = {}): SearchEngine {
  const baseUrl = config.baseUrl ?? DUCKDUCKGO_DEFAULT_BASE_URL;
  const endpoint = endpointUrl(baseUrl, "/html/", LABEL, "DUCKDUCKGO_BASE_URL");
  return {
    name: "duckduckgo",
    async search(query, { maxResults, signal }) {
      const url = new URL(endpoint);
      const res = await sendEngineRequest({
        label: LABEL,
        url,
        method: "POST",
        headers: {
          accept: "text/html,application/xhtml+xml",
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ q: query }).toString(),
        signal,
        maxBytes: config.maxBytes,
      });
      checkStatus(LABEL, url, res);
      const page = parseDuckDuckGoHtml(res.text);
      if (page.results.length > 0) return page.results.slice(0, maxResults);
      if (page.blocked) {
        throw new SearchEngineError(
          "rate_limit",
          `${LABEL} answered with its bot challenge instead of results.`,
          {
            retryable: true,
            hint: "it usually passes after a few minutes; configure SearXNG, Brave or Tavily for steadier search",
          },
        );
      }
      if (page.saysNoResults) return [];
      throw badAnswer(`${LABEL} sent a page without recognisable results (its layout may have changed).`);
    },
  };
}
