/**
 * Grok (xAI) live search: `POST {base}/chat/completions` with
 * `search_parameters: {mode: "on", sources: [{type: "web"}], max_search_results, return_citations}`;
 * the answer lists the results, one `title | url | summary` a line, and `citations` holds the URLs
 * it read (used when the lines name none). Key: XAI_API_KEY.
 */
import { badAnswer } from "../engine-error.js";
import type { EngineHttpOptions, SearchEngine } from "../types.js";
import { endpointUrl } from "./base-url.js";
import { postKeyedJson } from "./keyed-json.js";
import { parseResultLines, resultLinesChat } from "./result-lines.js";
import { isHttpUrl } from "./result-url.js";

const LABEL = "Grok";
/** xAI's API unless XAI_BASE_URL says otherwise (the `xai:` provider's). */
export const GROK_DEFAULT_BASE_URL = "https://api.x.ai/v1";
/** A model with live search. */
export const GROK_SEARCH_MODEL = "grok-3-latest";
const MAX_RESULTS = 20;

export interface GrokSearchConfig extends EngineHttpOptions {
  apiKey: string;
  baseUrl?: string;
}

interface GrokResponse {
  choices?: Array<{ message?: { content?: unknown } }>;
  citations?: unknown;
}

/** A Grok engine using `config.apiKey`. */
export function createGrokEngine(config: GrokSearchConfig): SearchEngine {
  const baseUrl = config.baseUrl ?? GROK_DEFAULT_BASE_URL;
  const endpoint = endpointUrl(baseUrl, "/chat/completions", LABEL, "XAI_BASE_URL");
  return {
    name: "grok",
    async search(query, { maxResults, signal }) {
      const body = (await postKeyedJson({
        label: LABEL,
        endpoint,
        apiKey: config.apiKey,
        payload: {
          model: GROK_SEARCH_MODEL,
          messages: resultLinesChat(query, maxResults),
          temperature: 0.3,
          search_parameters: {
            mode: "on",
            sources: [{ type: "web" }],
            max_search_results: Math.min(Math.max(1, maxResults), MAX_RESULTS),
            return_citations: true,
          },
        },
        signal,
        maxBytes: config.maxBytes,
      })) as GrokResponse | null;
      const content = body?.choices?.[0]?.message?.content;
      if (typeof content !== "string") throw badAnswer(`${LABEL} answered without a message.`);
      const results = parseResultLines(content, maxResults);
      if (results.length > 0) return results;
      const citations = Array.isArray(body?.citations) ? body.citations : [];
      return citations
        .filter((c): c is string => typeof c === "string" && isHttpUrl(c))
        .slice(0, maxResults)
        .map((url) => ({ title: new URL(url).host, url, snippet: "" }));
    },
  };
}
